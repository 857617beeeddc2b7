#include "sim/system_config.h"

#include "sim/preset.h"

namespace mimic::sim {
namespace {

SystemConfig readAll(ParamReader& params, const std::string& presetName) {
  SystemConfig c;
  c.presetName = presetName;
  c.deviceName = params.text("device.name", "mimic", "marketing name of the device");
  const uint64_t numDevices =
      params.size("system.num_devices", 2, "devices in the system (env MIMIC_NUM_DEVICES)");
  requirePositive("system.num_devices", static_cast<double>(numDevices));
  if (numDevices > kMaxDevices) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "field 'system.num_devices' is " + std::to_string(numDevices) +
                          ", above the limit of " + std::to_string(kMaxDevices) +
                          " devices (MIMIC_MAX_DEVICES)");
  }
  c.numDevices = static_cast<int>(numDevices);
  c.timingOnly =
      params.choice("system.mode", "full", {"full", "timing"},
                    "full: kernels compute values and copies move bytes; timing: the "
                    "same simulated times without values or bytes (env MIMIC_MODE)") == "timing";
  c.hbm = HbmConfig::read(params);
  c.memory = DeviceMemoryConfig::read(params);
  c.hostLink = HostLinkConfig::read(params);
  c.deviceLink = DeviceLinkConfig::read(params);
  c.network = NetworkConfig::read(params, c.numDevices);
  c.collectives = coll::CollectiveConfig::read(params);
  c.commandProcessor = CommandProcessorConfig::read(params);
  c.dma = DmaEnginesConfig::read(params);
  c.compute = ComputeConfig::read(params);
  c.cache = CacheConfig::read(params);
  c.costs = exec::CostModel::read(params, c.compute.vectorLanes, c.compute.clockMHz);
  c.hostClock = HostClockConfig::read(params);
  return c;
}

}  // namespace

SystemConfig SystemConfig::read(const Preset& preset) {
  ParamReader params(preset);
  SystemConfig c = readAll(params, preset.name());
  params.rejectUnknownFields();
  return c;
}

std::vector<ParamSpec> SystemConfig::describe() {
  Preset empty;
  ParamReader params(empty);
  readAll(params, "");
  return params.specs();
}

SystemConfig SystemConfig::load(const std::string& presetNameOrPath, const std::string& overrides) {
  Preset preset = Preset::load(presetNameOrPath);
  preset.applyOverrides(overrides);
  return read(preset);
}

}  // namespace mimic::sim
