// Where a collective's transfer puts load: the sender's HBM and channel, the links of its
// route (weighted by the protocol's flags and by slowed links), the receiver's HBM (twice when
// it reduces: it reads its own operand too). Shared by the runner (flows on the network) and
// the estimate (the same loads, summed), so the two cannot drift apart.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/collective/collective_config.h"
#include "sim/collective/plan.h"
#include "sim/flow_network.h"
#include "sim/topology.h"

namespace mimic::sim::coll {

class CollectivePaths {
 public:
  // hbm: each device's HBM resource; channels: each device's channel resources (empty when
  // channels have no rate limit of their own).
  CollectivePaths(const Topology& topology, const FlowNetwork& network,
                  const CollectiveConfig& config, std::vector<int> hbm,
                  std::vector<std::vector<int>> channels);

  std::vector<PathUse> path(const Transfer& t, const Protocol& protocol, SimTime now) const;
  uint64_t latencyNs(const Transfer& t) const;
  double bandwidthGBps(int resource) const { return network_.stats(resource).bandwidthGBps; }

 private:
  Route routeOf(const Transfer& t) const;

  const Topology& topology_;
  const FlowNetwork& network_;
  const CollectiveConfig& config_;
  std::vector<int> hbm_;
  std::vector<std::vector<int>> channels_;
};

// The plan's simulated time when nothing else shares its resources: the launch, then per step
// the protocol's step latency, the longest route's latency and the time the busiest resource
// needs for its load.
SimTime estimateNs(const Plan& plan, const CollectivePaths& paths, const CollectiveConfig& config,
                   SimTime now);

}  // namespace mimic::sim::coll
