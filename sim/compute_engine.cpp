#include "sim/compute_engine.h"

#include "sim/compute_unit.h"

namespace mimic::sim {

ComputeEngine::ComputeEngine(sc_core::sc_module_name name, const ComputeConfig& config,
                             const exec::CostModel& costs, uint64_t hbmLatencyNs,
                             FlowNetwork& network, int hbmResource)
    : sc_module(name) {
  for (int u = 0; u < config.computeUnits; ++u) {
    const std::string id = std::to_string(u);
    int dmaResource = network.addResource(std::string(this->name()) + ".cu" + id + " dma",
                                          costs.dmaBandwidthGBps);
    units_.push_back(std::make_unique<ComputeUnit>(("cu" + id).c_str(), *this, costs, hbmLatencyNs,
                                                   network, hbmResource, dmaResource));
  }
}

ComputeEngine::~ComputeEngine() = default;

void ComputeEngine::run(KernelLaunch& launch) {
  launch.remaining = launch.workgroups.size();
  launch.start = sc_core::sc_time_stamp().value();
  if (launch.remaining == 0) {
    launch.end = launch.start;
    return;
  }
  for (size_t i = 0; i < launch.workgroups.size(); ++i) pending_.push_back({&launch, i});
  workAvailable_.notify(sc_core::SC_ZERO_TIME);
  while (launch.remaining > 0) sc_core::wait(workgroupDone_);
  launch.end = sc_core::sc_time_stamp().value();
}

}  // namespace mimic::sim
