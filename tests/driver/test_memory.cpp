// mimicMemAlloc, mimicMemFree, mimicMemGetInfo, mimicHostAlloc, mimicHostFree,
// mimicPointerGetAttributes.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <vector>

#include "driver_helpers.h"

namespace {

constexpr size_t kAlignment = 256;

mimicPointerAttributes attributesOf(const void* ptr) {
  mimicPointerAttributes attrs{};
  EXPECT_EQ(mimicPointerGetAttributes(ptr, &attrs), MIMIC_SUCCESS);
  return attrs;
}

// Fills device 0 with one-MiB blocks: all of tiny's memory.
void allocateAllInMiBBlocks(std::vector<void*>* blocks) {
  for (size_t i = 0; i < kTinyMemory / kMiB; ++i) {
    void* dptr = nullptr;
    ASSERT_OK(mimicMemAlloc(0, kMiB, &dptr));
    blocks->push_back(dptr);
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// mimicMemAlloc

TEST_F(DriverTest, MemAllocReturnsADevicePointer) {
  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, 4096, &dptr));
  ASSERT_NE(dptr, nullptr);
  mimicPointerAttributes attrs = attributesOf(dptr);
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attrs.device, 0);
}

TEST_F(DriverTest, MemAllocNullOutputIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemAlloc(0, 4096, nullptr));
}

TEST_F(DriverTest, MemAllocBadDeviceIsInvalidDevice) {
  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemAlloc(-1, 4096, &dptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemAlloc(2, 4096, &dptr));
  EXPECT_EQ(dptr, nullptr);
}

TEST_F(DriverTest, MemAllocZeroBytesIsInvalidSize) {
  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemAlloc(0, 0, &dptr));
  EXPECT_EQ(dptr, nullptr);
}

// Out of memory whatever the size, as CUDA answers and as PyTorch's allocator expects.
TEST_F(DriverTest, MemAllocLargerThanCapacityIsOutOfMemory) {
  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, kTinyMemory + 1, &dptr));
  EXPECT_NE(errorDetail().find("exceed the device's 67108864-byte capacity"), std::string::npos)
      << errorDetail();
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(1, 2 * kTinyMemory, &dptr));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, SIZE_MAX, &dptr));
  EXPECT_EQ(dptr, nullptr);
  EXPECT_EQ(freeBytesOf(0), kTinyMemory);
}

TEST_F(DriverTest, MemAllocWholeCapacitySucceeds) {
  void* dptr = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kTinyMemory, &dptr));
  EXPECT_EQ(freeBytesOf(0), size_t{0});
}

TEST_F(DriverTest, MemAllocOfCapacityWhilePartlyUsedIsOutOfMemory) {
  void* one = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 1, &one));
  void* all = nullptr;
  // Within the capacity, but there is no free block that large.
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, kTinyMemory, &all));
  EXPECT_EQ(all, nullptr);
  ASSERT_OK(mimicMemFree(one));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kTinyMemory, &all));
}

TEST_F(DriverTest, MemAllocPointersAreAlignedAndDistinct) {
  mimicDeviceProperties props{};
  ASSERT_OK(mimicDeviceGetProperties(0, &props));
  ASSERT_EQ(props.allocationAlignment, kAlignment);
  std::vector<void*> ptrs;
  for (size_t bytes : {1, 3, 255, 256, 257, 1000, 4097, 65535}) {
    void* dptr = nullptr;
    ASSERT_OK(mimicMemAlloc(0, bytes, &dptr));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dptr) % props.allocationAlignment, 0u) << bytes;
    mimicPointerAttributes attrs = attributesOf(dptr);
    EXPECT_EQ(attrs.base, dptr);
    EXPECT_EQ(attrs.size, bytes);
    for (void* other : ptrs) EXPECT_NE(other, dptr);
    ptrs.push_back(dptr);
  }
}

TEST_F(DriverTest, MemAllocExhaustionIsOutOfMemoryAndRecovers) {
  std::vector<void*> blocks;
  ASSERT_NO_FATAL_FAILURE(allocateAllInMiBBlocks(&blocks));
  EXPECT_EQ(freeBytesOf(0), size_t{0});
  void* more = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, 1, &more));
  EXPECT_EQ(more, nullptr);
  // The other device is unaffected.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(1, kMiB, &more));

  ASSERT_OK(mimicMemFree(blocks.back()));
  blocks.pop_back();
  void* again = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kMiB, &again));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(again, 7, kMiB, nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicDeviceSynchronize(0));
}

TEST_F(DriverTest, MemAllocFragmentationIsOutOfMemoryAndRecovers) {
  std::vector<void*> blocks;
  ASSERT_NO_FATAL_FAILURE(allocateAllInMiBBlocks(&blocks));
  // Free every other block: half the memory is free, but no two free MiB are adjacent.
  for (size_t i = 0; i < blocks.size(); i += 2) ASSERT_OK(mimicMemFree(blocks[i]));
  EXPECT_EQ(freeBytesOf(0), 32 * kMiB);
  void* big = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, 2 * kMiB, &big));
  EXPECT_EQ(big, nullptr);
  EXPECT_EQ(freeBytesOf(0), 32 * kMiB);  // a failed allocation takes nothing

  // The device stays usable: a block that fits is served.
  void* small = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kMiB, &small));
  ASSERT_OK(mimicMemFree(small));

  // Once the rest is freed the blocks merge back into one.
  for (size_t i = 1; i < blocks.size(); i += 2) ASSERT_OK(mimicMemFree(blocks[i]));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemAlloc(0, kTinyMemory, &big));
}

// ---------------------------------------------------------------------------------------------
// mimicMemFree

TEST_F(DriverTest, MemFreeReleasesTheAllocation) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemFree(dptr));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory);
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicPointerGetAttributes(dptr, &attrs));
}

TEST_F(DriverTest, MemFreeNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemFree(nullptr));
}

TEST_F(DriverTest, MemFreeTwiceIsDoubleFree) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(1, 4096, &dptr));
  ASSERT_OK(mimicMemFree(dptr));
  EXPECT_RESULT(MIMIC_ERROR_DOUBLE_FREE, mimicMemFree(dptr));
  EXPECT_RESULT(MIMIC_ERROR_DOUBLE_FREE, mimicMemFree(dptr));
}

TEST_F(DriverTest, MemFreeInteriorPointerIsInvalidDevicePointer) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemFree(static_cast<char*>(dptr) + 1));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemFree(static_cast<char*>(dptr) + 256));
  // The allocation is still live.
  EXPECT_EQ(attributesOf(dptr).size, size_t{4096});
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemFree(dptr));
}

TEST_F(DriverTest, MemFreeNeverAllocatedDeviceAddressIsInvalidDevicePointer) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  // Inside the device's address range, but never handed out.
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicMemFree(static_cast<char*>(dptr) + 32 * kMiB));
}

TEST_F(DriverTest, MemFreeHostPointerIsInvalidDevicePointer) {
  int onStack = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemFree(&onStack));
  std::unique_ptr<char[]> onHeap(new char[64]);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemFree(onHeap.get()));
  void* pinned = nullptr;
  ASSERT_OK(mimicHostAlloc(4096, &pinned));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemFree(pinned));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicHostFree(pinned));
}

TEST_F(DriverTest, MemFreeWaitsForTheDevicesWork) {
  const size_t bytes = 32 * kMiB;
  void* host = nullptr;
  void* dev = nullptr;
  void* other = nullptr;
  ASSERT_OK(mimicHostAlloc(bytes, &host));
  ASSERT_OK(mimicMemAlloc(0, bytes, &dev));
  ASSERT_OK(mimicMemAlloc(0, 4096, &other));
  mimicQueue queue = nullptr;
  ASSERT_OK(mimicQueueCreate(0, 0, 0, &queue));
  ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, queue));
  ASSERT_EQ(mimicQueueQuery(queue), MIMIC_NOT_READY);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicMemFree(other));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queue));
}

TEST_F(DriverTest, MemFreeDoesNotConfuseDevices) {
  void* on0 = nullptr;
  void* on1 = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &on0));
  ASSERT_OK(mimicMemAlloc(1, 4096, &on1));
  ASSERT_OK(mimicMemFree(on1));
  EXPECT_EQ(freeBytesOf(1), kTinyMemory);
  EXPECT_EQ(freeBytesOf(0), kTinyMemory - 4096);
  EXPECT_EQ(attributesOf(on0).device, 0);
}

// ---------------------------------------------------------------------------------------------
// mimicMemGetInfo

TEST_F(DriverTest, MemGetInfoOfFreshDeviceIsAllFree) {
  for (int device = 0; device < 2; ++device) {
    size_t freeBytes = 0, totalBytes = 0;
    EXPECT_RESULT(MIMIC_SUCCESS, mimicMemGetInfo(device, &freeBytes, &totalBytes));
    EXPECT_EQ(totalBytes, kTinyMemory);
    EXPECT_EQ(freeBytes, kTinyMemory);
  }
}

TEST_F(DriverTest, MemGetInfoNullOutputsAreNullPointer) {
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemGetInfo(0, nullptr, &totalBytes));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemGetInfo(0, &freeBytes, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemGetInfo(0, nullptr, nullptr));
}

TEST_F(DriverTest, MemGetInfoBadDeviceIsInvalidDevice) {
  size_t freeBytes = 0, totalBytes = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemGetInfo(-1, &freeBytes, &totalBytes));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicMemGetInfo(2, &freeBytes, &totalBytes));
}

TEST_F(DriverTest, MemGetInfoCountsAlignedAllocationSizes) {
  void* a = nullptr;
  void* b = nullptr;
  void* c = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 1000, &a));  // takes 1024
  EXPECT_EQ(freeBytesOf(0), kTinyMemory - 1024);
  ASSERT_OK(mimicMemAlloc(0, 1, &b));  // takes 256
  EXPECT_EQ(freeBytesOf(0), kTinyMemory - 1024 - 256);
  ASSERT_OK(mimicMemAlloc(0, 2 * kMiB, &c));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory - 1024 - 256 - 2 * kMiB);
  EXPECT_EQ(freeBytesOf(1), kTinyMemory);
  ASSERT_OK(mimicMemFree(a));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory - 256 - 2 * kMiB);
  ASSERT_OK(mimicMemFree(c));
  ASSERT_OK(mimicMemFree(b));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory);
}

// ---------------------------------------------------------------------------------------------
// mimicHostAlloc / mimicHostFree

TEST_F(DriverTest, HostAllocReturnsUsablePinnedMemory) {
  void* hptr = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicHostAlloc(10000, &hptr));
  ASSERT_NE(hptr, nullptr);
  auto* bytes = static_cast<unsigned char*>(hptr);
  for (size_t i = 0; i < 10000; ++i) bytes[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(bytes[9999], static_cast<unsigned char>(9999));
  mimicPointerAttributes attrs = attributesOf(hptr);
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PINNED);
  EXPECT_EQ(attrs.size, size_t{10000});
  EXPECT_RESULT(MIMIC_SUCCESS, mimicHostFree(hptr));
}

TEST_F(DriverTest, HostAllocNullOutputIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicHostAlloc(4096, nullptr));
}

TEST_F(DriverTest, HostAllocZeroBytesIsInvalidSize) {
  void* hptr = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicHostAlloc(0, &hptr));
  EXPECT_EQ(hptr, nullptr);
}

TEST_F(DriverTest, HostAllocImpossibleSizeIsHostOutOfMemory) {
  void* hptr = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_HOST_OUT_OF_MEMORY, mimicHostAlloc(size_t{1} << 62, &hptr));
  EXPECT_EQ(hptr, nullptr);
}

TEST_F(DriverTest, HostAllocDoesNotUseDeviceMemory) {
  void* hptr = nullptr;
  ASSERT_OK(mimicHostAlloc(4 * kMiB, &hptr));
  EXPECT_EQ(freeBytesOf(0), kTinyMemory);
  EXPECT_EQ(freeBytesOf(1), kTinyMemory);
}

TEST_F(DriverTest, HostFreeNullIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicHostFree(nullptr));
}

TEST_F(DriverTest, HostFreeForeignPointerIsInvalidHostPointer) {
  int onStack = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER, mimicHostFree(&onStack));
  void* onHeap = std::malloc(64);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER, mimicHostFree(onHeap));
  std::free(onHeap);
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER, mimicHostFree(dptr));
}

TEST_F(DriverTest, HostFreeInteriorPointerIsInvalidHostPointer) {
  void* hptr = nullptr;
  ASSERT_OK(mimicHostAlloc(8192, &hptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER, mimicHostFree(static_cast<char*>(hptr) + 16));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicHostFree(hptr));
}

TEST_F(DriverTest, HostFreeTwiceIsInvalidHostPointer) {
  void* hptr = nullptr;
  ASSERT_OK(mimicHostAlloc(4096, &hptr));
  ASSERT_OK(mimicHostFree(hptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_HOST_POINTER, mimicHostFree(hptr));
}

// ---------------------------------------------------------------------------------------------
// mimicPointerGetAttributes

TEST_F(DriverTest, PointerAttributesOfDevicePointer) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(1, 5000, &dptr));
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(dptr, &attrs));
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_DEVICE);
  EXPECT_EQ(attrs.device, 1);
  EXPECT_EQ(attrs.base, dptr);
  EXPECT_EQ(attrs.size, size_t{5000});
}

TEST_F(DriverTest, PointerAttributesOfInteriorDevicePointerReportTheAllocation) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 5000, &dptr));
  for (size_t offset : {1, 256, 4999}) {
    mimicPointerAttributes attrs{};
    EXPECT_RESULT(MIMIC_SUCCESS,
                  mimicPointerGetAttributes(static_cast<char*>(dptr) + offset, &attrs));
    EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_DEVICE) << offset;
    EXPECT_EQ(attrs.device, 0) << offset;
    EXPECT_EQ(attrs.base, dptr) << offset;
    EXPECT_EQ(attrs.size, size_t{5000}) << offset;
  }
}

TEST_F(DriverTest, PointerAttributesPastTheEndOfAllocationIsInvalidDevicePointer) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 5000, &dptr));
  mimicPointerAttributes attrs{};
  // Byte 5000 lies in the alignment padding, not in the allocation.
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicPointerGetAttributes(static_cast<char*>(dptr) + 5000, &attrs));
}

TEST_F(DriverTest, PointerAttributesOfFreedDevicePointerIsInvalidDevicePointer) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  ASSERT_OK(mimicMemFree(dptr));
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicPointerGetAttributes(dptr, &attrs));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER,
                mimicPointerGetAttributes(static_cast<char*>(dptr) + 10, &attrs));
}

TEST_F(DriverTest, PointerAttributesOfPinnedPointer) {
  void* hptr = nullptr;
  ASSERT_OK(mimicHostAlloc(3000, &hptr));
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(hptr, &attrs));
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PINNED);
  EXPECT_EQ(attrs.device, -1);
  EXPECT_EQ(attrs.base, hptr);
  EXPECT_EQ(attrs.size, size_t{3000});

  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(static_cast<char*>(hptr) + 2999, &attrs));
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PINNED);
  EXPECT_EQ(attrs.base, hptr);
  EXPECT_EQ(attrs.size, size_t{3000});
}

TEST_F(DriverTest, PointerAttributesOfFreedPinnedPointerIsPageable) {
  void* hptr = nullptr;
  ASSERT_OK(mimicHostAlloc(4096, &hptr));
  ASSERT_OK(mimicHostFree(hptr));
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(hptr, &attrs));
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PAGEABLE);
}

TEST_F(DriverTest, PointerAttributesOfStackPointerIsPageable) {
  int onStack = 0;
  mimicPointerAttributes attrs;
  attrs.type = MIMIC_MEMORY_TYPE_DEVICE;
  attrs.device = 5;
  attrs.base = &attrs;
  attrs.size = 99;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicPointerGetAttributes(&onStack, &attrs));
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PAGEABLE);
  EXPECT_EQ(attrs.device, -1);
  EXPECT_EQ(attrs.base, nullptr);
  EXPECT_EQ(attrs.size, size_t{0});
}

TEST_F(DriverTest, PointerAttributesOfHeapPointerIsPageable) {
  std::vector<char> onHeap(1000);
  mimicPointerAttributes attrs = attributesOf(onHeap.data());
  EXPECT_EQ(attrs.type, MIMIC_MEMORY_TYPE_PAGEABLE);
  EXPECT_EQ(attrs.device, -1);
  EXPECT_EQ(attrs.base, nullptr);
  EXPECT_EQ(attrs.size, size_t{0});
}

TEST_F(DriverTest, PointerAttributesNullArgumentsAreNullPointer) {
  mimicPointerAttributes attrs{};
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPointerGetAttributes(nullptr, &attrs));
  int onStack = 0;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPointerGetAttributes(&onStack, nullptr));
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 256, &dptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicPointerGetAttributes(dptr, nullptr));
}

// ---------------------------------------------------------------------------------------------
// Device pointers are not host memory

namespace {

// Forks a child that touches `dptr` on the host; returns the child's wait status.
int statusOfChildTouching(void* dptr, bool write) {
  pid_t pid = fork();
  if (pid == 0) {
    if (write) {
      *static_cast<volatile char*>(dptr) = 1;
    } else {
      volatile char c = *static_cast<volatile char*>(dptr);
      (void)c;
    }
    _exit(0);  // reached only if the access did not fault
  }
  EXPECT_GT(pid, 0);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, 0), pid);
  return status;
}

}  // namespace

TEST_F(DriverTest, HostReadOfDevicePointerFaults) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dptr));
  int status = statusOfChildTouching(dptr, false);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited normally with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}

TEST_F(DriverTest, HostWriteOfDevicePointerFaults) {
  void* dptr = nullptr;
  ASSERT_OK(mimicMemAlloc(1, 4096, &dptr));
  int status = statusOfChildTouching(static_cast<char*>(dptr) + 100, true);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited normally with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGSEGV);
}
