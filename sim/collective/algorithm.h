// A collective algorithm: how the ranks' data flows, as steps of transfers. Each algorithm is
// a file of its own, listed by name in algorithm.cpp; the tuner (tuner.h) picks among them.
#pragma once

#include <string>
#include <vector>

#include "sim/collective/collective.h"
#include "sim/collective/collective_config.h"
#include "sim/collective/plan.h"
#include "sim/collective/protocol.h"

namespace mimic::sim::coll {

struct BuildContext {
  const CollectiveRequest& request;
  const CollectiveTopology& topology;
  const CollectiveConfig& config;
  const Protocol& protocol;
  int channels;
};

class Algorithm {
 public:
  virtual ~Algorithm() = default;
  virtual const char* name() const = 0;
  // Why it cannot run `request` on `topology`, or "" if it can.
  virtual std::string unsupported(const CollectiveRequest& request,
                                  const CollectiveTopology& topology,
                                  const CollectiveConfig& config) const = 0;
  virtual bool allows(const Protocol& protocol) const {
    (void)protocol;
    return true;
  }
  virtual std::vector<Step> build(const BuildContext& context) const = 0;
};

// Every algorithm, in the order the tuner prefers them on a tie.
const std::vector<const Algorithm*>& algorithms();
// nullptr if there is none by that name.
const Algorithm* findAlgorithm(const std::string& name);
// "ring, tree, ...", for error messages.
std::string algorithmNames();

// Each algorithm's single instance (one file each).
const Algorithm& ringAlgorithm();
const Algorithm& treeAlgorithm();
const Algorithm& directAlgorithm();
const Algorithm& twoShotAlgorithm();
const Algorithm& switchReduceAlgorithm();
const Algorithm& hierarchicalAlgorithm();

// Building blocks the algorithms share.
// Ranks in ring order for channel `c`: node by node, each node's ranks in device order rotated
// by c (so that the channels of a multi-node ring leave each node through different NICs); on a
// one-node full mesh, edge-disjoint Hamiltonian rings (Walecki's, both directions, for an even
// rank count; else steps by strides coprime with it), so that the channels use different links
// as RCCL's rings over MI300X's seven xGMI links do.
std::vector<int> ringOrder(const CollectiveRequest& request, const CollectiveTopology& topology,
                           int c);
// Appends transfers moving `bytes` from rank `from` to rank `to`, split over `channels`.
void addSplit(Step& step, const CollectiveRequest& request, int from, int to, uint64_t bytes,
              int channels, bool reduce);
// Why the direct algorithms cannot run `request` ("" if they can): they need one node whose
// devices reach each other in one hop.
std::string directUnsupported(const CollectiveRequest& request, const CollectiveTopology& topology,
                              const CollectiveConfig& config);
// One step in which every rank (or only rank `from`, or only to rank `to`, when >= 0) sends
// `bytes` to every other rank, each peer on a channel of its own.
Step directStep(const BuildContext& x, uint64_t bytes, bool reduce, int from, int to);
// ceil(a / b) for b > 0.
inline uint64_t divideUp(uint64_t a, uint64_t b) {
  return (a + b - 1) / b;
}

}  // namespace mimic::sim::coll
