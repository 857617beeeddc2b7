// One compute unit: replays workgroup traces (see compute_engine.h) and runs their DMAs.
#pragma once

#include <systemc>

#include <deque>
#include <map>
#include <vector>

#include "sim/compute_engine.h"

namespace mimic::sim {

class ComputeUnit : public sc_core::sc_module {
 public:
  ComputeUnit(sc_core::sc_module_name name, ComputeEngine& engine, const exec::CostModel& costs,
              uint64_t hbmLatencyNs, int dmaChannels, FlowNetwork& network, int hbmResource,
              int dmaResource);

 private:
  struct DmaRequest {
    uint32_t token;
    uint64_t bytes;
  };

  void run();
  void replay(const exec::WorkgroupTrace& trace);
  void dmaChannel();
  void syncTo(double ns);
  void waitForDma(uint32_t token);

  ComputeEngine& engine_;
  exec::CostModel costs_;
  uint64_t hbmLatencyNs_;
  FlowNetwork& network_;
  std::vector<PathUse> dmaPath_;
  std::deque<DmaRequest> dmaQueue_;
  std::map<uint32_t, bool> dmaDone_;  // tokens of the current workgroup
  sc_core::sc_event dmaQueued_;
  sc_core::sc_event dmaFinished_;
};

}  // namespace mimic::sim
