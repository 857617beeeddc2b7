// The device's last-level cache between the compute units and HBM (L2 on NVIDIA parts, the
// Infinity Cache on MI300X).
//
// A set-associative cache of fixed-size lines with LRU replacement per set, looked up by every
// DMA of a kernel when the DMA starts, in simulated-time order. Reads that hit flow at the
// cache's bandwidth without touching HBM; misses are filled from HBM. Writes allocate their
// lines (write-back: a later read of freshly written data hits) and every written byte still
// costs HBM bandwidth, as its eventual write-back. Only hits and misses are modelled, never
// data, so stale lines are harmless; copies and fills by the copy engines bypass it.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/exec/trace.h"

namespace mimic::sim {

class ParamReader;

struct CacheConfig {
  uint64_t capacityBytes;  // 0: no cache
  uint32_t lineBytes;
  uint32_t ways;
  double bandwidthGBps;  // achievable, all compute units together
  uint64_t latencyNs;    // a DMA whose bytes all hit waits this instead of hbm.latency_ns

  static CacheConfig read(ParamReader& params);
};

struct CacheStats {
  uint64_t hitBytes = 0;
  uint64_t missBytes = 0;  // reads filled from HBM
  uint64_t writeBytes = 0;
};

class Cache {
 public:
  explicit Cache(const CacheConfig& config);

  // Looks up every line the region touches, in order; returns the bytes that hit (for a write:
  // the bytes whose lines were present). Lines that miss are allocated.
  uint64_t access(const exec::DmaRegion& region, bool write);
  bool enabled() const { return sets_ > 0; }
  const CacheStats& stats() const { return stats_; }

 private:
  struct Way {
    uint64_t line = UINT64_MAX;
    uint64_t lastUse = 0;
  };
  bool touchLine(uint64_t line);  // true on a hit

  CacheConfig config_;
  uint64_t sets_;
  std::vector<Way> ways_;  // sets_ x config_.ways, allocated at the first access
  uint64_t clock_ = 0;
  uint64_t lastLine_ = UINT64_MAX;  // consecutive touches of one line hit without a lookup
  CacheStats stats_;
};

}  // namespace mimic::sim
