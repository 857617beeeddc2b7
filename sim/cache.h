// The device's last-level cache between the compute units and HBM (L2 on NVIDIA parts, the
// per-die L2s of MI300X together).
//
// A set-associative cache of fixed-size lines with LRU replacement per set, looked up by every
// DMA of a kernel when the DMA starts, in simulated-time order. Reads that hit flow at the
// cache's bandwidth without touching HBM; misses are filled from HBM. Writes allocate their
// lines (write-back: a later read of freshly written data hits) and every written byte still
// costs HBM bandwidth, as its eventual write-back. Only hits and misses are modelled, never
// data, so stale lines are harmless; copies and fills by the copy engines bypass it.
//
// To keep a lookup per DMA cheap on the host, lines are tracked in aligned blocks of
// kLinesPerBlock with a presence bit per line, as sectored caches track sectors: a hit or miss
// is still decided per line, but replacement and capacity count blocks, so a pattern that uses
// one line of each block sees a smaller cache.
#pragma once

#include <array>
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
  static constexpr int kLinesPerBlock = 4;

  // `origin` is the device address of the first byte of the device's memory. Lines are
  // numbered from it, so that which set a line falls in does not depend on where the host
  // happened to map the device's address range (mmap's address varies from run to run, and
  // with it, measured, the hits of a large GEMM: simulated times must not).
  explicit Cache(const CacheConfig& config, uint64_t origin = 0);

  // Looks up every line the region touches, in order; returns the bytes that hit (for a write:
  // the bytes whose lines were present). Lines that miss are allocated.
  uint64_t access(const exec::DmaRegion& region, bool write);
  bool enabled() const { return sets_ > 0; }
  const CacheStats& stats() const { return stats_; }

 private:
  // Touches the lines `lines` (a bit per line) of `block`; returns those that were present.
  uint8_t touchBlock(uint64_t block, uint8_t lines);

  CacheConfig config_;
  uint64_t origin_;
  int lineShift_;  // log2 of the line size
  uint64_t sets_;  // of config_.ways blocks
  // sets_ x config_.ways blocks, allocated at the first access. Each set is kept in order of
  // use, most recent first: a hit moves its block to the front, a miss evicts the last. A tag
  // is the block number + 1 modulo 2^32 (0: empty), unique within one device's memory.
  std::vector<uint32_t> tags_;
  std::vector<uint8_t> present_;  // per block: a bit per line
  // The blocks this access touched and the lines now present in them: strided and
  // overlapping DMAs (windows, broadcasts) touch a block many times.
  static constexpr size_t kRecent = 512;  // a power of two
  struct Recent {
    uint64_t block = 0;
    uint64_t access = 0;
    uint8_t present = 0;
  };
  std::array<Recent, kRecent> recent_{};
  uint64_t access_ = 0;
  CacheStats stats_;
};

}  // namespace mimic::sim
