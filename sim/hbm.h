// HBM: the device's main memory. Its capacity bounds allocations; its bandwidth is one resource
// of the flow network, shared by every transfer that reads or writes it.
#pragma once

#include <cstdint>

namespace mimic::sim {

class ParamReader;

struct HbmConfig {
  uint64_t capacityBytes;
  double bandwidthGBps;  // GB/s, which is also bytes per ns
  uint64_t latencyNs;

  static HbmConfig read(ParamReader& params);
};

struct HbmStats {
  uint64_t bytesRead = 0;
  uint64_t bytesWritten = 0;
};

}  // namespace mimic::sim
