// Ring: every rank sends to the next of its channel's ring only. AllReduce is a reduce-scatter
// then an allgather, 2(n-1) steps of bytes/n; Broadcast and Reduce run as a chain from (or to)
// the root, pipelined in chunks.
#include <algorithm>

#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

constexpr uint64_t kMaxChunks = 64;

class Ring final : public Algorithm {
 public:
  const char* name() const override { return "ring"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology&,
                          const CollectiveConfig&) const override {
    if (request.kind == CollectiveKind::AllToAll) return "AllToAll has no ring form";
    return "";
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const CollectiveRequest& request = x.request;
    const int n = request.ranks();
    std::vector<std::vector<int>> orders;
    for (int c = 0; c < x.channels; ++c) orders.push_back(ringOrder(request, x.topology, c));
    switch (request.kind) {
      case CollectiveKind::AllReduce:
        return around(x, orders, 2 * (n - 1), n - 1);
      case CollectiveKind::ReduceScatter:
        return around(x, orders, n - 1, n - 1);
      case CollectiveKind::AllGather:
        return around(x, orders, n - 1, 0);
      default:
        return chain(x, orders);
    }
  }

 private:
  // `steps` steps of bytes/n per rank around each channel's ring; the first `reducing` reduce.
  static std::vector<Step> around(const BuildContext& x,
                                  const std::vector<std::vector<int>>& orders, int steps,
                                  int reducing) {
    const int n = x.request.ranks();
    const uint64_t piece = divideUp(x.request.bytes, uint64_t(n) * x.channels);
    std::vector<Step> plan(steps);
    for (int s = 0; s < steps; ++s) {
      for (int c = 0; c < x.channels; ++c) {
        for (int i = 0; i < n; ++i) {
          plan[s].transfers.push_back({x.request.devices[orders[c][i]],
                                       x.request.devices[orders[c][(i + 1) % n]], piece, c,
                                       s < reducing, 1});
        }
      }
    }
    return plan;
  }

  // Broadcast (root first) or Reduce (root last) down a chain, chunk k crossing link j at
  // step j + k.
  static std::vector<Step> chain(const BuildContext& x,
                                 const std::vector<std::vector<int>>& orders) {
    const CollectiveRequest& request = x.request;
    const int n = request.ranks();
    const bool reduce = request.kind == CollectiveKind::Reduce;
    const uint64_t perChannel = divideUp(request.bytes, uint64_t(x.channels));
    const uint64_t chunks =
        std::clamp<uint64_t>(divideUp(perChannel, x.config.chunkBytes), 1, kMaxChunks);
    const uint64_t piece = divideUp(perChannel, chunks);
    std::vector<Step> plan(size_t(n - 2 + chunks));
    for (int c = 0; c < x.channels; ++c) {
      std::vector<int> order = orders[c];
      std::rotate(order.begin(), std::find(order.begin(), order.end(), request.root), order.end());
      if (reduce) std::reverse(order.begin(), order.end());  // the chain ends at the root
      for (int j = 0; j + 1 < n; ++j) {
        for (uint64_t k = 0; k < chunks; ++k) {
          plan[j + k].transfers.push_back(
              {request.devices[order[j]], request.devices[order[j + 1]], piece, c, reduce, 1});
        }
      }
    }
    return plan;
  }
};

}  // namespace

const Algorithm& ringAlgorithm() {
  static const Ring kRing;
  return kRing;
}

}  // namespace mimic::sim::coll
