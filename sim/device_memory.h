// The device's memory as the host and the model see it.
//
// Each device owns a range of virtual addresses that is reserved with no access rights: those
// are the device pointers, and a host dereference faults at once, as on hardware. The bytes
// live in a second, private mapping of the same size (the model's view), which the driver and
// the model reach through hostView(). Allocation is best-fit over the range, aligned.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

namespace mimic::sim {

class ParamReader;

struct DeviceMemoryConfig {
  uint64_t alignment;

  static DeviceMemoryConfig read(ParamReader& params);
};

struct Allocation {
  uint64_t base;      // device address
  uint64_t size;      // as requested
  uint64_t reserved;  // size rounded up to the alignment
};

struct DeviceMemoryStats {
  uint64_t allocations = 0;
  uint64_t frees = 0;
  uint64_t bytesInUse = 0;  // aligned sizes
  uint64_t peakBytesInUse = 0;
};

class DeviceMemory {
 public:
  enum class FreeResult { Freed, NotAnAllocation, AlreadyFreed };

  // Throws std::runtime_error if the address ranges cannot be reserved.
  DeviceMemory(uint64_t capacity, const DeviceMemoryConfig& config);
  ~DeviceMemory();
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;

  // Returns the device address, or 0 when no free block is large enough.
  uint64_t allocate(uint64_t bytes);
  FreeResult release(uint64_t address);
  void releaseAll();

  bool inRange(uint64_t address) const { return address - base_ < capacity_; }
  // The live allocation that contains `address`, if any.
  bool find(uint64_t address, Allocation* out) const;
  // Where `address` lies, for error messages: in which live allocation, how far past the end
  // of the nearest one below it, or in a freed one ("use after free").
  std::string describe(uint64_t address) const;
  uint8_t* hostView(uint64_t address) const { return shadow_ + (address - base_); }

  uint64_t base() const { return base_; }
  uint64_t capacity() const { return capacity_; }
  uint64_t freeBytes() const;
  uint64_t largestFreeBlock() const;
  DeviceMemoryStats stats() const;

 private:
  void insertFreeBlock(uint64_t offset, uint64_t size);
  void discardPages(uint64_t offset, uint64_t size);

  uint64_t capacity_;
  uint64_t alignment_;
  uint64_t base_ = 0;
  uint8_t* shadow_ = nullptr;
  mutable std::mutex mutex_;
  std::map<uint64_t, uint64_t> freeBlocks_;  // offset -> size
  std::map<uint64_t, Allocation> live_;      // device address -> allocation
  std::map<uint64_t, Allocation> freed_;     // freed and not handed out again
  DeviceMemoryStats stats_;
};

}  // namespace mimic::sim
