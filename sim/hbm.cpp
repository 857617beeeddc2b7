#include "sim/hbm.h"

#include "sim/params.h"

namespace mimic::sim {

HbmConfig HbmConfig::read(ParamReader& params) {
  HbmConfig c;
  c.capacityBytes = params.size("hbm.capacity", 16ull << 30, "HBM capacity per device, bytes");
  c.bandwidthGBps =
      params.number("hbm.bandwidth_gbps", 1000.0, "peak HBM bandwidth per device, GB/s");
  c.efficiency = params.efficiency(
      "hbm.efficiency",
      "share of the peak bandwidth that streams reach (refresh, bus turnarounds, row misses)");
  c.latencyNs = params.size("hbm.latency_ns", 500, "HBM access latency seen by a DMA, ns");
  requirePositive("hbm.capacity", double(c.capacityBytes));
  requirePositive("hbm.bandwidth_gbps", c.bandwidthGBps);
  return c;
}

}  // namespace mimic::sim
