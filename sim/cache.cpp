#include "sim/cache.h"

#include <algorithm>

#include "sim/params.h"

namespace mimic::sim {

CacheConfig CacheConfig::read(ParamReader& params) {
  CacheConfig c;
  c.capacityBytes = params.size(
      "cache.capacity", 0,
      "last-level cache between the compute units and HBM (L2 / Infinity Cache), bytes; 0: none");
  c.lineBytes = static_cast<uint32_t>(params.size("cache.line_bytes", 128, "cache line, bytes"));
  c.ways = static_cast<uint32_t>(params.size("cache.ways", 16, "cache associativity (ways)"));
  c.bandwidthGBps = params.number("cache.bandwidth_gbps", 4000,
                                  "achievable cache bandwidth to all compute units, GB/s");
  c.latencyNs =
      params.size("cache.latency_ns", 200, "latency of a DMA whose bytes all hit the cache, ns");
  requirePositive("cache.line_bytes", c.lineBytes);
  requirePositive("cache.ways", c.ways);
  requirePositive("cache.bandwidth_gbps", c.bandwidthGBps);
  if (c.capacityBytes != 0 && c.capacityBytes < uint64_t(c.lineBytes) * c.ways) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "cache.capacity must be 0 or hold at least one set (cache.line_bytes x "
                      "cache.ways = " +
                          std::to_string(uint64_t(c.lineBytes) * c.ways) + " bytes)");
  }
  return c;
}

Cache::Cache(const CacheConfig& config)
    : config_(config), sets_(config.capacityBytes / config.lineBytes / config.ways) {}

bool Cache::touchLine(uint64_t line) {
  if (line == lastLine_) return true;
  lastLine_ = line;
  if (ways_.empty()) ways_.resize(sets_ * config_.ways);
  // Mix the line number so that strided walks spread over the sets, as hardware hashes do.
  const uint64_t mixed = (line * 0x9E3779B97F4A7C15ull) ^ (line >> 29);
  Way* set = &ways_[(mixed % sets_) * config_.ways];
  Way* victim = set;
  ++clock_;
  for (uint32_t w = 0; w < config_.ways; ++w) {
    if (set[w].line == line) {
      set[w].lastUse = clock_;
      return true;
    }
    if (set[w].lastUse < victim->lastUse) victim = &set[w];
  }
  victim->line = line;
  victim->lastUse = clock_;
  return false;
}

uint64_t Cache::access(const exec::DmaRegion& region, bool write) {
  if (!enabled()) return 0;
  const uint64_t lineBytes = config_.lineBytes;
  uint64_t hit = 0, total = 0;
  exec::forEachHbmRun(region.descriptor, region.address, [&](uint64_t first, uint64_t bytes) {
    total += bytes;
    const uint64_t end = first + bytes;
    for (uint64_t line = first / lineBytes; line * lineBytes < end; ++line) {
      const uint64_t inLine =
          std::min(end, (line + 1) * lineBytes) - std::max(first, line * lineBytes);
      if (touchLine(line)) hit += inLine;
    }
  });
  if (write) {
    stats_.writeBytes += total;
  } else {
    stats_.hitBytes += hit;
    stats_.missBytes += total - hit;
  }
  return hit;
}

}  // namespace mimic::sim
