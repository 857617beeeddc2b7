#include "sim/host_link.h"

#include "sim/params.h"

namespace mimic::sim {

HostLinkConfig HostLinkConfig::read(ParamReader& params) {
  HostLinkConfig c;
  c.bandwidthGBps =
      params.number("host_link.bandwidth_gbps", 25.0, "host link bandwidth per direction, GB/s");
  c.efficiency = params.efficiency(
      "host_link.efficiency",
      "share of the host link's peak that large copies reach (packet headers, flow control)");
  c.latencyNs = params.size("host_link.latency_ns", 1000, "host link transfer latency, ns");
  c.stagingBandwidthGBps =
      params.number("host_link.staging_bandwidth_gbps", 12.0,
                    "host CPU copy bandwidth into pinned staging buffers (pageable copies), GB/s");
  c.stagingChunkBytes = params.size("host_link.staging_chunk", 2ull << 20,
                                    "staging buffer size for pageable copies, bytes");
  requirePositive("host_link.bandwidth_gbps", c.bandwidthGBps);
  requirePositive("host_link.staging_bandwidth_gbps", c.stagingBandwidthGBps);
  requirePositive("host_link.staging_chunk", double(c.stagingChunkBytes));
  return c;
}

}  // namespace mimic::sim
