#include "sim/system.h"

namespace mimic::sim {

System::System(sc_core::sc_module_name name, const SystemConfig& config,
               const std::vector<std::unique_ptr<DeviceMemory>>& memories)
    : sc_module(name),
      config_(config),
      network_("network"),
      topology_(config_.deviceLink, config_.numDevices, network_) {
  for (int i = 0; i < config_.numDevices; ++i) {
    shared_.hbm.push_back(
        network_.addResource("hbm " + std::to_string(i), config_.hbm.achievableGBps()));
    shared_.cache.push_back(
        config_.cache.capacityBytes == 0
            ? -1
            : network_.addResource("cache " + std::to_string(i), config_.cache.bandwidthGBps));
  }
  shared_.hostStaging = network_.addResource("host staging", config_.hostLink.stagingBandwidthGBps);
  for (int i = 0; i < config_.numDevices; ++i) {
    devices_.push_back(std::make_unique<Device>(("device" + std::to_string(i)).c_str(), i, config_,
                                                *memories[i], network_, topology_, shared_,
                                                anyCompleted_));
  }
}

}  // namespace mimic::sim
