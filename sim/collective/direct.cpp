// Direct: one step in which every rank sends each peer what that peer needs, over its own link
// (one-shot AllReduce: the whole buffer to everyone, each reducing what it receives). It wins
// where latency dominates or where links are private to each pair (a full mesh), as RCCL's
// one-shot kernels and AllToAll do. Two-shot AllReduce (two_shot.cpp) is its bandwidth-optimal
// sibling.
#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {

std::string directUnsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                              const CollectiveConfig& config) {
  if (topology.intraNode == "ring") return "the devices are on a ring, not a full mesh or switch";
  if (config.directMaxBytes > 0 && request.bytes > config.directMaxBytes) {
    return "the library sends more than coll.direct_max_bytes = " +
           std::to_string(config.directMaxBytes) + " otherwise";
  }
  for (int device : request.devices) {
    if (topology.nodeOf(device) != topology.nodeOf(request.devices[0])) {
      return "its ranks span nodes";
    }
  }
  return "";
}

Step directStep(const BuildContext& x, uint64_t bytes, bool reduce, int from, int to) {
  const int n = x.request.ranks();
  Step step;
  for (int r = 0; r < n; ++r) {
    for (int offset = 1; offset < n; ++offset) {
      const int q = (r + offset) % n;
      if ((from >= 0 && r != from) || (to >= 0 && q != to)) continue;
      step.transfers.push_back({x.request.devices[r], x.request.devices[q], bytes,
                                (offset - 1) % x.channels, reduce, 1});
    }
  }
  return step;
}

namespace {

class Direct final : public Algorithm {
 public:
  const char* name() const override { return "direct"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                          const CollectiveConfig& config) const override {
    if (request.kind == CollectiveKind::AllToAll) return "";
    return directUnsupported(request, topology, config);
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const CollectiveRequest& request = x.request;
    const uint64_t slice = divideUp(request.bytes, uint64_t(request.ranks()));
    switch (request.kind) {
      case CollectiveKind::AllReduce:
        return {directStep(x, request.bytes, true, -1, -1)};
      case CollectiveKind::Broadcast:
        return {directStep(x, request.bytes, false, request.root, -1)};
      case CollectiveKind::Reduce:
        return {directStep(x, request.bytes, true, -1, request.root)};
      case CollectiveKind::ReduceScatter:
        return {directStep(x, slice, true, -1, -1)};
      case CollectiveKind::AllGather:
      case CollectiveKind::AllToAll:
        return {directStep(x, slice, false, -1, -1)};
    }
    return {};
  }
};

}  // namespace

const Algorithm& directAlgorithm() {
  static const Direct kDirect;
  return kDirect;
}

}  // namespace mimic::sim::coll
