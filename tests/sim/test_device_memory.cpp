// The device allocator and its address ranges.
#include <gtest/gtest.h>

#include "sim/device_memory.h"

namespace mimic::sim {
namespace {

constexpr uint64_t kCapacity = 1u << 20;
const DeviceMemoryConfig kConfig{256};

TEST(DeviceMemoryTest, AllocationsAreAlignedAndInRange) {
  DeviceMemory memory(kCapacity, kConfig);
  for (uint64_t bytes : {1u, 255u, 256u, 1000u}) {
    uint64_t p = memory.allocate(bytes);
    ASSERT_NE(p, 0u);
    EXPECT_EQ(p % 256, 0u);
    EXPECT_TRUE(memory.inRange(p));
    EXPECT_TRUE(memory.inRange(p + bytes - 1));
  }
  EXPECT_FALSE(memory.inRange(memory.base() + kCapacity));
  EXPECT_FALSE(memory.inRange(memory.base() - 1));
}

TEST(DeviceMemoryTest, ExhaustionReturnsZeroAndFreeingRecovers) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t all = memory.allocate(kCapacity);
  ASSERT_NE(all, 0u);
  EXPECT_EQ(memory.allocate(1), 0u);
  EXPECT_EQ(memory.freeBytes(), 0u);
  EXPECT_EQ(memory.release(all), DeviceMemory::FreeResult::Freed);
  EXPECT_EQ(memory.freeBytes(), kCapacity);
  EXPECT_NE(memory.allocate(kCapacity), 0u);
}

TEST(DeviceMemoryTest, FreedNeighboursCoalesce) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t a = memory.allocate(kCapacity / 4);
  uint64_t b = memory.allocate(kCapacity / 4);
  uint64_t c = memory.allocate(kCapacity / 4);
  uint64_t d = memory.allocate(kCapacity / 4);
  memory.release(a);
  memory.release(c);
  EXPECT_EQ(memory.largestFreeBlock(), kCapacity / 4);  // fragmented
  memory.release(b);
  EXPECT_EQ(memory.largestFreeBlock(), 3 * kCapacity / 4);
  memory.release(d);
  EXPECT_EQ(memory.largestFreeBlock(), kCapacity);
}

TEST(DeviceMemoryTest, BestFitKeepsLargeBlocksWhole) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t small = memory.allocate(4096);
  uint64_t keep = memory.allocate(4096);
  memory.release(small);  // a 4 KiB hole before a large free tail
  uint64_t again = memory.allocate(4096);
  EXPECT_EQ(again, small);
  EXPECT_NE(keep, 0u);
}

TEST(DeviceMemoryTest, ReleaseTellsDoubleFreeFromForeignPointers) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t p = memory.allocate(1024);
  EXPECT_EQ(memory.release(p + 256), DeviceMemory::FreeResult::NotAnAllocation);
  EXPECT_EQ(memory.release(p), DeviceMemory::FreeResult::Freed);
  EXPECT_EQ(memory.release(p), DeviceMemory::FreeResult::AlreadyFreed);
  EXPECT_EQ(memory.allocate(1024), p);  // handed out again: no longer "freed"
  EXPECT_EQ(memory.release(p), DeviceMemory::FreeResult::Freed);
}

TEST(DeviceMemoryTest, FindReportsTheAllocationHoldingAnInteriorPointer) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t p = memory.allocate(1000);
  Allocation a{};
  ASSERT_TRUE(memory.find(p + 999, &a));
  EXPECT_EQ(a.base, p);
  EXPECT_EQ(a.size, 1000u);
  EXPECT_FALSE(memory.find(p + 1000, &a));  // the padding up to the alignment is not part of it
  memory.release(p);
  EXPECT_FALSE(memory.find(p, &a));
}

TEST(DeviceMemoryTest, TheHostViewHoldsTheBytes) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t p = memory.allocate(64);
  memory.hostView(p)[10] = 42;
  EXPECT_EQ(memory.hostView(p + 10)[0], 42);
}

TEST(DeviceMemoryTest, ReleaseAllFreesEverything) {
  DeviceMemory memory(kCapacity, kConfig);
  uint64_t p = memory.allocate(4096);
  memory.allocate(8192);
  memory.releaseAll();
  EXPECT_EQ(memory.freeBytes(), kCapacity);
  EXPECT_EQ(memory.release(p), DeviceMemory::FreeResult::AlreadyFreed);
  EXPECT_EQ(memory.stats().frees, 2u);
}

}  // namespace
}  // namespace mimic::sim
