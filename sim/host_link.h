// The host link (PCIe-like) of one device, and the host side of transfers over it.
//
// The link is full duplex: host-to-device and device-to-host traffic each have the whole
// per-direction bandwidth, shared among the transfers going that way. Pageable host memory is
// staged through pinned buffers by the host CPU, as real drivers do: the staging copy is a
// pipeline stage whose bandwidth is shared by every pageable transfer of the process.
#pragma once

#include <cstdint>

namespace mimic::sim {

class ParamReader;

struct HostLinkConfig {
  double bandwidthGBps;  // per direction, peak
  double efficiency;     // the share of the peak that large copies reach
  uint64_t latencyNs;
  double stagingBandwidthGBps;
  uint64_t stagingChunkBytes;

  static HostLinkConfig read(ParamReader& params);
};

struct HostLinkStats {
  uint64_t bytesToDevice = 0;
  uint64_t bytesToHost = 0;
  uint64_t pageableTransfers = 0;
  uint64_t pinnedTransfers = 0;
};

}  // namespace mimic::sim
