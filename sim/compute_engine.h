// The compute side of a device: a workgroup dispatcher and its compute units (CUs).
//
// A kernel arrives as the traces its workgroups left during functional execution. The
// dispatcher hands workgroups to free CUs in arrival order, so kernels from different queues
// share the device and large grids run in waves. Each CU replays a trace with temporal
// decoupling: scalar, vector and matrix work only advance local clocks; the CU meets SystemC
// time only to start a DMA or to wait for one. DMAs run on the CU's DMA channels and share
// HBM bandwidth with every other transfer on the device through the flow network.
#pragma once

#include <systemc>

#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "sim/device_config.h"
#include "sim/exec/cost_model.h"
#include "sim/exec/trace.h"
#include "sim/flow_network.h"

namespace mimic::sim {

struct KernelLaunch {
  std::vector<std::shared_ptr<const exec::WorkgroupTrace>> workgroups;
  exec::KernelCounters counters;  // from functional execution
  // Filled in by the timing model.
  SimTime start = 0;
  SimTime end = 0;
  size_t remaining = 0;
};

class ComputeUnit;

class ComputeEngine : public sc_core::sc_module {
 public:
  ComputeEngine(sc_core::sc_module_name name, const ComputeConfig& config,
                const exec::CostModel& costs, uint64_t hbmLatencyNs, FlowNetwork& network,
                int hbmResource);
  ~ComputeEngine() override;

  // Runs every workgroup of the launch; returns when the last has finished. Call from an
  // SC_THREAD (the command processor's).
  void run(KernelLaunch& launch);

  int numUnits() const { return static_cast<int>(units_.size()); }
  const ComputeUnit& unit(int index) const { return *units_[index]; }

 private:
  friend class ComputeUnit;
  struct Pending {
    KernelLaunch* launch;
    size_t index;
  };

  std::deque<Pending> pending_;
  sc_core::sc_event workAvailable_;
  sc_core::sc_event workgroupDone_;
  std::vector<std::unique_ptr<ComputeUnit>> units_;
};

}  // namespace mimic::sim
