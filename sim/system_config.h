// The whole configuration of a simulated system, read from a preset by every unit's own reader.
#pragma once

#include <string>
#include <vector>

#include "sim/cache.h"
#include "sim/collective/collective_config.h"
#include "sim/device_config.h"
#include "sim/device_memory.h"
#include "sim/exec/cost_model.h"
#include "sim/hbm.h"
#include "sim/host_clock.h"
#include "sim/host_link.h"
#include "sim/params.h"
#include "sim/topology.h"

namespace mimic::sim {

class Preset;

// The most devices in one system; the driver publishes it as MIMIC_MAX_DEVICES.
constexpr int kMaxDevices = 64;

struct SystemConfig {
  std::string presetName;
  std::string deviceName;
  int numDevices;
  // Timing-only mode (system.mode=timing): kernels and copies are timed as in full mode but
  // compute no values and move no bulk bytes (copies and collectives of at most 64 KiB, the
  // host's control data, still move theirs), so device memory is address space only.
  bool timingOnly;
  HbmConfig hbm;
  DeviceMemoryConfig memory;
  HostLinkConfig hostLink;
  DeviceLinkConfig deviceLink;
  NetworkConfig network;
  coll::CollectiveConfig collectives;
  CommandProcessorConfig commandProcessor;
  DmaEnginesConfig dma;
  ComputeConfig compute;
  CacheConfig cache;
  exec::CostModel costs;
  HostClockConfig hostClock;

  // Reads every field; throws ConfigError naming an invalid or unknown field.
  static SystemConfig read(const Preset& preset);
  // Every parameter with its default and description, for listings and documentation.
  static std::vector<ParamSpec> describe();

  // Loads a preset by name or path, applies the overrides, and reads it.
  static SystemConfig load(const std::string& presetNameOrPath, const std::string& overrides);
};

}  // namespace mimic::sim
