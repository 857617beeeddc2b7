// The device allocator of PyTorch tensors on mimic: a caching allocator over mimicMemAlloc, in
// the manner of CUDA's. Freed blocks go back to a pool of the stream they were allocated on, so
// that reuse on that stream is ordered by the stream itself. A block that other streams used
// (recordStream) is reused only once an event recorded on each of them has completed.
//
// MIMIC_ALLOCATOR=direct turns caching off: every tensor gets its own mimicMemAlloc and is freed
// at once, so memory checkers see each allocation.
#pragma once

#include <c10/core/Allocator.h>
#include <c10/core/Stream.h>

#include <cstdint>
#include <string>

namespace mimic::torch_backend {

struct AllocatorStats {
  int64_t allocatedBytes = 0;  // held by live tensors (block sizes)
  int64_t peakAllocatedBytes = 0;
  int64_t reservedBytes = 0;  // obtained from the driver, cached or not
  int64_t peakReservedBytes = 0;
  int64_t allocations = 0;  // tensor allocations served
  int64_t cacheHits = 0;    // of those, served from the cache
  int64_t driverAllocations = 0;
  int64_t outOfMemory = 0;  // allocations that failed
};

class CachingAllocator final : public c10::Allocator {
 public:
  // Allocates on the current device, in the pool of its current stream. Throws
  // c10::OutOfMemoryError with requested, allocated, reserved and free bytes and the largest
  // free block when the device is full even after the cache was released.
  c10::DataPtr allocate(size_t bytes) const override;
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }

  // Marks `data` as used by `stream`: when freed, it is not reused before that stream's work
  // queued so far has completed.
  void recordStream(const c10::DataPtr& data, const c10::Stream& stream) const;
  // Returns every unused cached block to the driver.
  void emptyCache() const;
  // Resets the device after a sticky error (mimicDeviceReset): its memory is gone, so tensors
  // made before are lost; the allocator starts afresh there.
  void resetDevice(int device) const;
  // Throws c10::Error naming the reset when `data` was allocated before the last resetDevice of
  // its device (its memory is gone; a kernel would read whatever is there now). Every block
  // carries the generation of its device, so this is one comparison.
  void requireCurrentGeneration(const c10::DataPtr& data) const;
  AllocatorStats stats(int device) const;
  void resetPeakStats(int device) const;
  std::string summary(int device) const;
  bool caching() const;
};

CachingAllocator& cachingAllocator();

}  // namespace mimic::torch_backend
