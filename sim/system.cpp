#include "sim/system.h"

namespace mimic::sim {

System::System(sc_core::sc_module_name name, const SystemConfig& config,
               const std::vector<std::unique_ptr<DeviceMemory>>& memories)
    : sc_module(name),
      config_(config),
      network_("network"),
      topology_(config_.deviceLink, config_.numDevices, network_, config_.network) {
  for (int i = 0; i < config_.numDevices; ++i) {
    shared_.hbm.push_back(
        network_.addResource("hbm " + std::to_string(i), config_.hbm.achievableGBps()));
    shared_.cache.push_back(
        config_.cache.capacityBytes == 0
            ? -1
            : network_.addResource("cache " + std::to_string(i), config_.cache.bandwidthGBps));
  }
  shared_.hostStaging = network_.addResource("host staging", config_.hostLink.stagingBandwidthGBps);
  const coll::CollectiveConfig& collectives = config_.collectives;
  std::vector<std::vector<int>> channels;
  if (collectives.channelsLimited()) {
    for (int i = 0; i < config_.numDevices; ++i) {
      channels.emplace_back();
      for (int c = 0; c < collectives.maxChannels; ++c) {
        channels.back().push_back(
            network_.addResource("channel " + std::to_string(i) + "." + std::to_string(c),
                                 collectives.channelGBps.at("simple")));
      }
    }
  }
  collectiveTopology_ = {config_.deviceLink.topology, topology_.devicesPerNode(),
                         collectives.switchReduceEfficiency > 0};
  paths_ = std::make_unique<coll::CollectivePaths>(topology_, network_, collectives, shared_.hbm,
                                                   std::move(channels));
  runner_ = std::make_unique<coll::CollectiveRunner>(network_, *paths_, collectives, anyCompleted_);
  shared_.collectives = runner_.get();
  for (int i = 0; i < config_.numDevices; ++i) {
    devices_.push_back(std::make_unique<Device>(("device" + std::to_string(i)).c_str(), i, config_,
                                                *memories[i], network_, topology_, shared_,
                                                anyCompleted_));
  }
}

coll::Choice System::planCollective(const coll::CollectiveRequest& request,
                                    const std::string& algorithm, const std::string& protocol,
                                    SimTime now) const {
  constexpr size_t kMaxChoices = 4096;
  std::string key = std::to_string(int(request.kind)) + " " + std::to_string(request.bytes) + " " +
                    std::to_string(request.root) + " " + algorithm + " " + protocol + " " +
                    std::to_string(topology_.slowdownEpoch(now));
  for (int device : request.devices) key += " " + std::to_string(device);
  {
    std::lock_guard<std::mutex> lock(choicesMutex_);
    auto found = choices_.find(key);
    if (found != choices_.end()) return found->second;
  }
  coll::Choice choice = coll::choosePlan(request, collectiveTopology_, config_.collectives, *paths_,
                                         algorithm, protocol, now);
  std::lock_guard<std::mutex> lock(choicesMutex_);
  if (choices_.size() >= kMaxChoices) choices_.clear();
  choices_.emplace(key, choice);
  return choice;
}

}  // namespace mimic::sim
