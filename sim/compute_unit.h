// One compute unit: replays workgroup traces (see compute_engine.h) and runs their DMAs.
#pragma once

#include <systemc>

#include <deque>
#include <map>
#include <vector>

#include "sim/compute_engine.h"

namespace mimic::sim {

struct ComputeUnitStats {
  uint64_t workgroups = 0;
  SimTime busyNs = 0;  // time with a workgroup resident
  uint64_t dmas = 0;
};

class ComputeUnit : public sc_core::sc_module {
 public:
  ComputeUnit(sc_core::sc_module_name name, ComputeEngine& engine, const exec::CostModel& costs,
              uint64_t hbmLatencyNs, FlowNetwork& network, int hbmResource, int dmaResource);

  const ComputeUnitStats& stats() const { return stats_; }

 private:
  // A DMA waiting out the HBM latency before its bytes start to flow. The DMA engine keeps any
  // number in flight; the CU's DMA bandwidth is a flow-network resource of its own.
  struct PendingDma {
    SimTime startAt;
    uint32_t token;
    uint64_t bytes;
  };

  void run();
  void replay(const exec::WorkgroupTrace& trace);
  void issueDma(uint32_t token, uint64_t bytes);
  void startDueDmas();
  void syncTo(double ns);
  void waitForDma(uint32_t token);

  ComputeEngine& engine_;
  exec::CostModel costs_;
  uint64_t hbmLatencyNs_;
  FlowNetwork& network_;
  std::vector<PathUse> dmaPath_;
  std::deque<PendingDma> pending_;    // in start order: every DMA waits the same latency
  std::map<uint32_t, bool> dmaDone_;  // tokens of the current workgroup
  sc_core::sc_event startDue_;
  sc_core::sc_event dmaFinished_;
  ComputeUnitStats stats_;
};

}  // namespace mimic::sim
