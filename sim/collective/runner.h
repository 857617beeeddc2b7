// Runs collectives in simulated time. Every rank's command of one collective shares a
// rendezvous; each rank's queue holds there until the last rank's queue has reached the
// collective too (the kernels of NCCL wait for their peers the same way), whose command
// processor then runs the plan's steps on the flow network, where they share links and HBM
// with everything else in flight. Every rank's command ends when the last step has.
#pragma once

#include <systemc>

#include <cstdint>
#include <string>

#include "sim/collective/collective_config.h"
#include "sim/collective/paths.h"
#include "sim/collective/plan.h"

namespace mimic::sim::coll {

struct CollectiveRendezvous {
  Plan plan;
  std::string label;  // for traces: "AllReduce ring/simple"
  int expected = 0;
  int arrived = 0;
  bool finished = false;
};

struct CollectiveStats {
  uint64_t collectives = 0;
  uint64_t steps = 0;
  SimTime busyNs = 0;  // summed over collectives, from the last rank's arrival to the end
};

class CollectiveRunner {
 public:
  CollectiveRunner(FlowNetwork& network, const CollectivePaths& paths,
                   const CollectiveConfig& config, sc_core::sc_event& anyCompleted);

  // A rank's queue reached the collective: returns when it has ended. Call from a command
  // processor's thread; a failed device's rank joins too, so its peers never wait forever.
  void join(CollectiveRendezvous& rendezvous);
  const CollectiveStats& stats() const { return stats_; }

 private:
  void run(const Plan& plan);

  FlowNetwork& network_;
  const CollectivePaths& paths_;
  const CollectiveConfig& config_;
  sc_core::sc_event& anyCompleted_;
  CollectiveStats stats_;
};

}  // namespace mimic::sim::coll
