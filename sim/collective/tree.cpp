// Tree, as NCCL builds it: within a node a chain from the node's first rank, and between nodes
// a binary tree of the nodes' first ranks (the root's node at its top). Reduce sends up to the
// root, Broadcast down from it, AllReduce does both. The message is pipelined in chunks: a rank
// at depth d handles chunk k at step k + (depth - d) going up, k + d - 1 going down.
#include <algorithm>
#include <map>

#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

constexpr uint64_t kMaxChunks = 64;

// Every rank's parent (-1 for the root) in the chain-of-nodes tree.
std::vector<int> parents(const CollectiveRequest& request, const CollectiveTopology& topology,
                         int root) {
  const int n = request.ranks();
  std::map<int, std::vector<int>> byNode;
  for (int r = 0; r < n; ++r) byNode[topology.nodeOf(request.devices[r])].push_back(r);
  // Nodes in order starting at the root's; each node's ranks in device order, root first.
  std::vector<std::vector<int>> nodes;
  const int rootNode = topology.nodeOf(request.devices[root]);
  for (auto& [node, ranks] : byNode) {
    std::sort(ranks.begin(), ranks.end(),
              [&](int a, int b) { return request.devices[a] < request.devices[b]; });
    if (node == rootNode) {
      std::rotate(ranks.begin(), std::find(ranks.begin(), ranks.end(), root), ranks.end());
    }
    nodes.push_back(ranks);
  }
  std::rotate(nodes.begin(),
              std::find_if(nodes.begin(), nodes.end(),
                           [&](const std::vector<int>& v) { return v.front() == root; }),
              nodes.end());
  std::vector<int> parent(n, -1);
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (k > 0) parent[nodes[k].front()] = nodes[(k - 1) / 2].front();
    for (size_t i = 1; i < nodes[k].size(); ++i) parent[nodes[k][i]] = nodes[k][i - 1];
  }
  return parent;
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
    const std::vector<int> parent = parents(request, x.topology, root);
    std::vector<int> depth(n, 0);
    int levels = 0;
    for (int r = 0; r < n; ++r) {
      for (int at = r; parent[at] >= 0; at = parent[at]) ++depth[r];
      levels = std::max(levels, depth[r]);
    }
    const uint64_t perChannel = divideUp(request.bytes, uint64_t(x.channels));
    const uint64_t chunks =
        std::clamp<uint64_t>(divideUp(perChannel, x.config.chunkBytes), 1, kMaxChunks);
    const uint64_t piece = divideUp(perChannel, chunks);
    const size_t phase = size_t(levels) + chunks - 1;
    const bool up = request.kind != CollectiveKind::Broadcast;
    const bool down = request.kind != CollectiveKind::Reduce;
    std::vector<Step> plan((up ? phase : 0) + (down ? phase : 0));
    for (int r = 0; r < n; ++r) {
      if (parent[r] < 0) continue;
      const int from = request.devices[r], to = request.devices[parent[r]];
      for (uint64_t k = 0; k < chunks; ++k) {
        for (int c = 0; c < x.channels; ++c) {
          if (up) plan[k + levels - depth[r]].transfers.push_back({from, to, piece, c, true, 1});
          if (down) {
            plan[(up ? phase : 0) + k + depth[r] - 1].transfers.push_back(
                {to, from, piece, c, false, 1});
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
