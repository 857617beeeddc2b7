// Hierarchical AllReduce across nodes, as NCCL composes it: a ring reduce-scatter within each
// node, a ring AllReduce of each slice between the ranks that hold it on the other nodes (one
// ring per local rank, so every NIC carries its share), and a ring allgather within each node.
// The network then carries 2 (N-1)/N of bytes/L per NIC instead of the whole ring's traffic.
#include <algorithm>
#include <map>

#include "sim/collective/algorithm.h"

namespace mimic::sim::coll {
namespace {

class Hierarchical final : public Algorithm {
 public:
  const char* name() const override { return "hierarchical"; }

  std::string unsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                          const CollectiveConfig&) const override {
    if (request.kind != CollectiveKind::AllReduce) return "only AllReduce is hierarchical";
    const auto nodes = byNode(request, topology);
    if (nodes.size() < 2) return "its ranks are all on one node";
    for (const auto& [node, ranks] : nodes) {
      if (ranks.size() != nodes.begin()->second.size()) {
        return "its nodes hold different numbers of ranks";
      }
    }
    return "";
  }

  std::vector<Step> build(const BuildContext& x) const override {
    const auto nodes = byNode(x.request, x.topology);
    std::vector<std::vector<int>> groups;
    for (const auto& entry : nodes) groups.push_back(entry.second);
    // The phases use different links (NVLink, then NICs), so NCCL pipelines chunks through
    // them: chunk k takes its j-th step at step k + j.
    const uint64_t chunks =
        std::clamp<uint64_t>(x.request.bytes / x.config.chunkBytes, 1, kMaxChunks);
    const std::vector<Step> one = phases(x, groups, divideUp(x.request.bytes, chunks));
    std::vector<Step> plan(one.size() + chunks - 1);
    for (uint64_t k = 0; k < chunks; ++k) {
      for (size_t j = 0; j < one.size(); ++j) {
        auto& into = plan[k + j].transfers;
        into.insert(into.end(), one[j].transfers.begin(), one[j].transfers.end());
      }
    }
    return plan;
  }

 private:
  static constexpr uint64_t kMaxChunks = 16;

  // The steps of one chunk of `bytes`: reduce-scatter within each node, AllReduce of each
  // slice across nodes, allgather within each node.
  static std::vector<Step> phases(const BuildContext& x,
                                  const std::vector<std::vector<int>>& groups, uint64_t bytes) {
    const int local = int(groups[0].size());
    const int count = int(groups.size());
    std::vector<Step> plan;
    const uint64_t intraPiece = divideUp(bytes, uint64_t(local) * x.channels);
    const auto intra = [&](bool reduce) {
      for (int s = 0; s + 1 < local; ++s) {
        Step step;
        for (const auto& group : groups) {
          for (int i = 0; i < local; ++i) {
            for (int c = 0; c < x.channels; ++c) {
              step.transfers.push_back({x.request.devices[group[i]],
                                        x.request.devices[group[(i + 1) % local]], intraPiece, c,
                                        reduce, 1});
            }
          }
        }
        plan.push_back(std::move(step));
      }
    };
    intra(true);
    const uint64_t interPiece = divideUp(bytes, uint64_t(local) * count * x.channels);
    for (int s = 0; s < 2 * (count - 1); ++s) {
      Step step;
      for (int j = 0; j < local; ++j) {
        for (int g = 0; g < count; ++g) {
          for (int c = 0; c < x.channels; ++c) {
            step.transfers.push_back({x.request.devices[groups[g][j]],
                                      x.request.devices[groups[(g + 1) % count][j]], interPiece, c,
                                      s < count - 1, 1});
          }
        }
      }
      plan.push_back(std::move(step));
    }
    intra(false);
    return plan;
  }

  // Ranks by node, each node's in device order.
  static std::map<int, std::vector<int>> byNode(const CollectiveRequest& request,
                                                const CollectiveTopology& topology) {
    std::map<int, std::vector<int>> nodes;
    for (int r = 0; r < request.ranks(); ++r) {
      nodes[topology.nodeOf(request.devices[r])].push_back(r);
    }
    for (auto& [node, ranks] : nodes) {
      std::sort(ranks.begin(), ranks.end(),
                [&](int a, int b) { return request.devices[a] < request.devices[b]; });
    }
    return nodes;
  }
};

}  // namespace

const Algorithm& hierarchicalAlgorithm() {
  static const Hierarchical kHierarchical;
  return kHierarchical;
}

}  // namespace mimic::sim::coll
