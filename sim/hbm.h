// HBM: the device's main memory. Its capacity bounds allocations; its bandwidth is one resource
// of the flow network, shared by every transfer that reads or writes it, and the network's
// ResourceStats for that resource are its statistics.
#pragma once

#include <cstdint>

namespace mimic::sim {

class ParamReader;

struct HbmConfig {
  uint64_t capacityBytes;
  double bandwidthGBps;  // peak (datasheet) GB/s, which is also bytes per ns
  double efficiency;     // the share of the peak that streams reach
  uint64_t latencyNs;

  double achievableGBps() const { return bandwidthGBps * efficiency; }

  static HbmConfig read(ParamReader& params);
};

}  // namespace mimic::sim
