// The last-level cache model: hits and misses by bytes, LRU replacement within a set, writes
// that allocate, and regions walked as the DMA descriptor touches them.
#include <gtest/gtest.h>

#include "sim/cache.h"

namespace mimic::sim {
namespace {

constexpr uint64_t kBlock = 128 * Cache::kLinesPerBlock;

// A cache of `sets` sets of `ways` blocks of 128-byte lines.
CacheConfig config(uint64_t sets, uint32_t ways) {
  return CacheConfig{sets * ways * kBlock, 128, ways, 1000, 100};
}

exec::DmaRegion contiguous(uint64_t address, int64_t bytes) {
  exec::DmaRegion r;
  r.address = address;
  r.descriptor.elementBytes = 4;
  r.descriptor.count[0] = bytes / 4;
  r.descriptor.hbmStride[0] = 4;
  return r;
}

TEST(CacheTest, TheSecondReadOfARegionThatFitsHitsEveryByte) {
  Cache cache(config(64, 4));
  EXPECT_EQ(cache.access(contiguous(0x10000, 8192), false), 0u);
  EXPECT_EQ(cache.access(contiguous(0x10000, 8192), false), 8192u);
  EXPECT_EQ(cache.stats().hitBytes, 8192u);
  EXPECT_EQ(cache.stats().missBytes, 8192u);
}

TEST(CacheTest, BytesAreCountedInTheLinesTheyFallIn) {
  Cache cache(config(64, 4));
  // 200 bytes from 0x1040 touch three lines: 64 bytes of 0x1000's, 128 of 0x1080's and 8 of
  // 0x1100's; only 0x1080 was read before.
  cache.access(contiguous(0x1080, 128), false);
  EXPECT_EQ(cache.access(contiguous(0x1040, 200), false), 128u);
  EXPECT_EQ(cache.stats().missBytes, 128u + 72u);
}

TEST(CacheTest, ALoopOverMoreThanTheCapacityEvictsEachBlockBeforeItsReuse) {
  Cache cache(config(1, 4));  // one set: LRU over 4 blocks
  for (int pass = 0; pass < 3; ++pass) {
    for (uint64_t block = 0; block < 5; ++block) {
      EXPECT_EQ(cache.access(contiguous(block * kBlock, 128), false), 0u) << pass << " " << block;
    }
  }
}

// The same accesses, relative to where the device's memory starts, hit the same bytes
// wherever the host mapped that memory (its base moves from run to run).
TEST(CacheTest, HitsDependOnAddressesWithinTheDeviceMemoryOnly) {
  auto hitsFrom = [](uint64_t origin) {
    Cache cache(config(16, 2), origin);
    uint64_t hits = 0;
    for (int pass = 0; pass < 3; ++pass) {
      for (uint64_t block = 0; block < 24; ++block) {  // 24 of the 32 blocks' worth
        hits += cache.access(contiguous(origin + block * 7 * kBlock, 128), false);
      }
    }
    return hits;
  };
  const uint64_t hits = hitsFrom(0);
  for (uint64_t origin : {0x7f3a1c000000ull, 0x7f3a1c001000ull, 0x7e0000234000ull}) {
    EXPECT_EQ(hitsFrom(origin), hits) << std::hex << origin;
  }
}

TEST(CacheTest, TheLeastRecentlyUsedBlockIsTheOneEvicted) {
  Cache cache(config(1, 2));
  cache.access(contiguous(0, 128), false);           // A
  cache.access(contiguous(kBlock, 128), false);      // B
  cache.access(contiguous(0, 128), false);           // A again: B is now the older
  cache.access(contiguous(2 * kBlock, 128), false);  // C evicts B
  EXPECT_EQ(cache.access(contiguous(0, 128), false), 128u);
  EXPECT_EQ(cache.access(contiguous(kBlock, 128), false), 0u);
}

TEST(CacheTest, EachLineOfABlockHitsOnlyOnceItWasTouched) {
  Cache cache(config(4, 4));
  cache.access(contiguous(0, 128), false);  // the block's first line
  EXPECT_EQ(cache.access(contiguous(128, 128), false), 0u);
  EXPECT_EQ(cache.access(contiguous(0, 256), false), 256u);
}

TEST(CacheTest, WritesAllocateTheirLines) {
  Cache cache(config(64, 4));
  EXPECT_EQ(cache.access(contiguous(0x2000, 1024), true), 0u);
  EXPECT_EQ(cache.access(contiguous(0x2000, 1024), false), 1024u);
  EXPECT_EQ(cache.stats().writeBytes, 1024u);
  EXPECT_EQ(cache.stats().missBytes, 0u);
}

TEST(CacheTest, AStridedRegionTouchesOnlyItsElementsLines) {
  Cache cache(config(64, 4));
  exec::DmaRegion column;  // 8 f32 down a column of a matrix with 1 KiB rows
  column.address = 0x8000;
  column.descriptor.elementBytes = 4;
  column.descriptor.count[0] = 8;
  column.descriptor.hbmStride[0] = 1024;
  EXPECT_EQ(cache.access(column, false), 0u);
  EXPECT_EQ(cache.stats().missBytes, 32u);
  // The rest of each of those lines is cached too; the line between them is not.
  EXPECT_EQ(cache.access(contiguous(0x8000 + 1024, 128), false), 128u);
  EXPECT_EQ(cache.access(contiguous(0x8000 + 512, 128), false), 0u);
}

TEST(CacheTest, ANegativeInnerStrideIsOneDenseRun) {
  Cache cache(config(64, 4));
  exec::DmaRegion backwards;  // 64 f32 read from 0x40fc down to 0x4000
  backwards.address = 0x40fc;
  backwards.descriptor.elementBytes = 4;
  backwards.descriptor.count[0] = 64;
  backwards.descriptor.hbmStride[0] = -4;
  cache.access(backwards, false);
  EXPECT_EQ(cache.access(contiguous(0x4000, 256), false), 256u);
}

TEST(CacheTest, WithoutCapacityNothingIsLookedUp) {
  Cache cache(CacheConfig{0, 128, 16, 1000, 100});
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.access(contiguous(0, 4096), false), 0u);
  EXPECT_EQ(cache.stats().missBytes, 0u);
}

}  // namespace
}  // namespace mimic::sim
