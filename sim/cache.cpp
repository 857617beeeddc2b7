#include "sim/cache.h"

#include <algorithm>
#include <cstring>

#include "sim/params.h"

namespace mimic::sim {
namespace {

// Set bits of a block's line mask (without relying on a popcount instruction).
int linesIn(uint8_t mask) {
  static_assert(Cache::kLinesPerBlock <= 4, "the table covers four lines");
  static constexpr int kCount[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  return kCount[mask & 15];
}

}  // namespace

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
  if (c.lineBytes == 0 || (c.lineBytes & (c.lineBytes - 1)) != 0) {
    throw ConfigError(
        ConfigError::Kind::InvalidValue,
        "cache.line_bytes must be a power of two, not " + std::to_string(c.lineBytes));
  }
  requirePositive("cache.ways", c.ways);
  requirePositive("cache.bandwidth_gbps", c.bandwidthGBps);
  const uint64_t setBytes = uint64_t(c.lineBytes) * Cache::kLinesPerBlock * c.ways;
  if (c.capacityBytes != 0 && c.capacityBytes < setBytes) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "cache.capacity must be 0 or hold at least one set of cache.ways blocks of " +
                          std::to_string(Cache::kLinesPerBlock) + " lines (" +
                          std::to_string(setBytes) + " bytes)");
  }
  return c;
}

Cache::Cache(const CacheConfig& config, uint64_t origin)
    : config_(config),
      origin_(origin),
      lineShift_(__builtin_ctz(config.lineBytes)),
      sets_(config.capacityBytes / config.lineBytes / kLinesPerBlock / config.ways) {}

uint8_t Cache::touchBlock(uint64_t block, uint8_t lines) {
  Recent& recent = recent_[(block * 0x9E3779B97F4A7C15ull) >> 55 & (kRecent - 1)];
  if (recent.access == access_ && recent.block == block && (lines & ~recent.present) == 0) {
    return lines;
  }
  if (tags_.empty()) {
    tags_.assign(sets_ * config_.ways, 0);
    present_.assign(sets_ * config_.ways, 0);
  }
  // Mix the block number so that strided walks spread over the sets, as hardware hashes do,
  // and scale it into [0, sets_) by a multiply rather than a division.
  const uint64_t mixed = (block * 0x9E3779B97F4A7C15ull) ^ (block >> 29);
  const size_t set = static_cast<size_t>((static_cast<unsigned __int128>(mixed) * sets_) >> 64);
  uint32_t* ways = &tags_[set * config_.ways];
  uint8_t* present = &present_[set * config_.ways];
  const uint32_t tag = static_cast<uint32_t>(block + 1);
  uint32_t w = 0;
  while (w < config_.ways && ways[w] != tag) ++w;
  const bool found = w < config_.ways;
  const uint8_t had = found ? present[w] : 0;
  // Move to the front: the block found, or the new one over the least recently used.
  const uint32_t shifted = found ? w : config_.ways - 1;
  std::memmove(ways + 1, ways, shifted * sizeof(uint32_t));
  std::memmove(present + 1, present, shifted);
  ways[0] = tag;
  present[0] = had | lines;
  recent = {block, access_, present[0]};
  return had & lines;
}

uint64_t Cache::access(const exec::DmaRegion& region, bool write) {
  if (!enabled()) return 0;
  const int shift = lineShift_;
  const uint64_t lineBytes = config_.lineBytes;
  uint64_t hit = 0, total = 0;
  ++access_;
  // A span touches every line it covers (its gaps are narrower than a line). A dense span's
  // hit lines count their own bytes; a sparse span's bytes are shared evenly among its lines.
  const int64_t maxGap = int64_t(lineBytes) - 1;
  exec::forEachHbmSpan(
      region.descriptor, region.address - origin_, maxGap,
      [&](uint64_t first, uint64_t extent, uint64_t bytes) {
        total += bytes;
        const uint64_t end = first + extent;
        const uint64_t firstLine = first >> shift, lastLine = (end - 1) >> shift;
        uint64_t hitLines = 0, hitBytes = 0;
        for (uint64_t line = firstLine; line <= lastLine;) {
          const uint64_t block = line / kLinesPerBlock;
          const uint64_t stop = std::min(lastLine + 1, (block + 1) * kLinesPerBlock);
          const unsigned offset = static_cast<unsigned>(line % kLinesPerBlock);
          const uint8_t lines = static_cast<uint8_t>(((1u << (stop - line)) - 1) << offset);
          const uint8_t present = touchBlock(block, lines);
          hitLines += linesIn(present);
          hitBytes += linesIn(present) * lineBytes;
          // The span's first and last lines are partial: take off what lies outside it.
          const uint64_t blockFirst = block * kLinesPerBlock;
          if (line == firstLine && (present >> (firstLine - blockFirst) & 1)) {
            hitBytes -= first - (firstLine << shift);
          }
          if (stop == lastLine + 1 && (present >> (lastLine - blockFirst) & 1)) {
            hitBytes -= ((lastLine + 1) << shift) - end;
          }
          line = stop;
        }
        hit += extent == bytes ? hitBytes : bytes * hitLines / (lastLine - firstLine + 1);
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
