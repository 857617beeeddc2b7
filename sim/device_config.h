// Configuration of one device's units other than memory and links: its command processors,
// DMA engines and compute units (reported by mimicDeviceGetProperties).
#pragma once

#include <cstdint>
#include <string>

#include "sim/sim_time.h"

namespace mimic::sim {

class ParamReader;

struct CommandProcessorConfig {
  int hwQueues;
  uint64_t launchLatencyNs;   // from submission until the command processor can take it
  uint64_t commandLatencyNs;  // paid in turn by every command that does work (kernels, copies)
  uint64_t hostFuncLatencyNs;

  static CommandProcessorConfig read(ParamReader& params);
};

struct CommandProcessorStats {
  uint64_t commands = 0;
  uint64_t aborted = 0;
  SimTime busyNs = 0;
};

struct DmaEnginesConfig {
  int copyEngines;  // host <-> device and device-local copies
  int linkEngines;  // peer copies over device links

  static DmaEnginesConfig read(ParamReader& params);
};

struct ComputeConfig {
  int computeUnits;
  int vectorLanes;
  double clockMHz;
  uint64_t scratchpadBytes;
  int maxWorkgroupsPerUnit;    // resident at once, if their scratchpad fits
  uint64_t workgroupLaunchNs;  // to start a workgroup on a CU

  static ComputeConfig read(ParamReader& params);
};

}  // namespace mimic::sim
