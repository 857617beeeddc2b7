// Tree: a binary tree over the ranks, renumbered so that the root is 0. Reduce sends up to the
// root, Broadcast down from it, AllReduce does both; the message is pipelined in chunks, so a
// rank at depth d handles chunk k at step k + (levels - d) going up, k + d - 1 going down.
#include <algorithm>

#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

constexpr uint64_t kMaxChunks = 64;

int depthOf(int v) {
  int d = 0;
  for (++v; v > 1; v >>= 1) ++d;
  return d;
}

class Tree final : public Algorithm {
 public:
  const char* name() const override { return "tree"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology&,
                          const CollectiveConfig&) const override {
    const CollectiveKind k = request.kind;
    if (k == CollectiveKind::AllReduce || k == CollectiveKind::Broadcast ||
        k == CollectiveKind::Reduce) {
      return "";
    }
    return std::string(kindName(k)) + " has no tree form (AllReduce, Broadcast and Reduce do)";
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const CollectiveRequest& request = x.request;
    const int n = request.ranks();
    const int root = request.kind == CollectiveKind::AllReduce ? 0 : request.root;
    const int levels = depthOf(n - 1);
    const uint64_t perChannel = divideUp(request.bytes, uint64_t(x.channels));
    const uint64_t chunks =
        std::clamp<uint64_t>(divideUp(perChannel, x.config.chunkBytes), 1, kMaxChunks);
    const uint64_t piece = divideUp(perChannel, chunks);
    const auto rankOf = [&](int v) { return request.devices[(v + root) % n]; };
    const size_t phase = size_t(levels) + chunks - 1;
    const bool up = request.kind != CollectiveKind::Broadcast;
    const bool down = request.kind != CollectiveKind::Reduce;
    std::vector<Step> plan((up ? phase : 0) + (down ? phase : 0));
    for (int v = 1; v < n; ++v) {
      const int d = depthOf(v);
      const int parent = (v - 1) / 2;
      for (uint64_t k = 0; k < chunks; ++k) {
        for (int c = 0; c < x.channels; ++c) {
          if (up) plan[k + levels - d].transfers.push_back({rankOf(v), rankOf(parent), piece, c, true, 1});
          if (down) {
            plan[(up ? phase : 0) + k + d - 1].transfers.push_back(
                {rankOf(parent), rankOf(v), piece, c, false, 1});
          }
        }
      }
    }
    return plan;
  }
};

}  // namespace

const Algorithm& treeAlgorithm() {
  static const Tree kTree;
  return kTree;
}

}  // namespace mimic::sim::coll
