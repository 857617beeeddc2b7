#include "sim/device_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <iterator>
#include <stdexcept>
#include <string>

#include "sim/params.h"

namespace mimic::sim {
namespace {

// Freed blocks at least this large give their pages back to the OS.
constexpr uint64_t kDiscardThreshold = 1ull << 20;

void* mapRange(uint64_t bytes, int protection) {
  void* p = mmap(nullptr, bytes, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    throw std::runtime_error("cannot reserve " + std::to_string(bytes) +
                             " bytes of address space for device memory");
  }
  return p;
}

uint64_t roundUp(uint64_t value, uint64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

DeviceMemoryConfig DeviceMemoryConfig::read(ParamReader& params) {
  DeviceMemoryConfig c;
  c.alignment = params.size("memory.alignment", 256, "alignment of device allocations, bytes");
  if (c.alignment == 0 || (c.alignment & (c.alignment - 1)) != 0) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "field 'memory.alignment' must be a power of two");
  }
  return c;
}

DeviceMemory::DeviceMemory(uint64_t capacity, const DeviceMemoryConfig& config)
    : capacity_(capacity), alignment_(config.alignment) {
  base_ = reinterpret_cast<uint64_t>(mapRange(capacity_, PROT_NONE));
  shadow_ = static_cast<uint8_t*>(mapRange(capacity_, PROT_READ | PROT_WRITE));
  freeBlocks_[0] = capacity_;
}

DeviceMemory::~DeviceMemory() {
  munmap(reinterpret_cast<void*>(base_), capacity_);
  munmap(shadow_, capacity_);
}

uint64_t DeviceMemory::allocate(uint64_t bytes) {
  uint64_t need = roundUp(bytes, alignment_);
  if (need < bytes) return 0;
  std::lock_guard<std::mutex> lock(mutex_);
  auto best = freeBlocks_.end();
  for (auto it = freeBlocks_.begin(); it != freeBlocks_.end(); ++it) {
    if (it->second >= need && (best == freeBlocks_.end() || it->second < best->second)) best = it;
  }
  if (best == freeBlocks_.end()) return 0;
  uint64_t offset = best->first;
  uint64_t remainder = best->second - need;
  freeBlocks_.erase(best);
  if (remainder > 0) freeBlocks_[offset + need] = remainder;
  uint64_t address = base_ + offset;
  live_[address] = {address, bytes, need};
  // The new allocation may overlap freed ones: they are no longer what the address means.
  auto it = freed_.lower_bound(address);
  if (it != freed_.begin() &&
      std::prev(it)->second.base + std::prev(it)->second.reserved > address) {
    --it;
  }
  while (it != freed_.end() && it->first < address + need) it = freed_.erase(it);
  ++stats_.allocations;
  stats_.bytesInUse += need;
  if (stats_.bytesInUse > stats_.peakBytesInUse) stats_.peakBytesInUse = stats_.bytesInUse;
  return address;
}

DeviceMemory::FreeResult DeviceMemory::release(uint64_t address) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.find(address);
  if (it == live_.end()) {
    return freed_.count(address) ? FreeResult::AlreadyFreed : FreeResult::NotAnAllocation;
  }
  uint64_t size = it->second.reserved;
  freed_[address] = it->second;
  live_.erase(it);
  ++stats_.frees;
  stats_.bytesInUse -= size;
  insertFreeBlock(address - base_, size);
  return FreeResult::Freed;
}

void DeviceMemory::releaseAll() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [address, allocation] : live_) freed_[address] = allocation;
  stats_.frees += live_.size();
  live_.clear();
  freeBlocks_.clear();
  freeBlocks_[0] = capacity_;
  stats_.bytesInUse = 0;
  discardPages(0, capacity_);
}

void DeviceMemory::insertFreeBlock(uint64_t offset, uint64_t size) {
  auto next = freeBlocks_.lower_bound(offset);
  if (next != freeBlocks_.end() && offset + size == next->first) {
    size += next->second;
    next = freeBlocks_.erase(next);
  }
  if (next != freeBlocks_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      offset = prev->first;
      size += prev->second;
      freeBlocks_.erase(prev);
    }
  }
  freeBlocks_[offset] = size;
  if (size >= kDiscardThreshold) discardPages(offset, size);
}

void DeviceMemory::discardPages(uint64_t offset, uint64_t size) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  uint64_t begin = roundUp(offset, page);
  uint64_t end = (offset + size) / page * page;
  if (end > begin) madvise(shadow_ + begin, end - begin, MADV_DONTNEED);
}

bool DeviceMemory::find(uint64_t address, Allocation* out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = live_.upper_bound(address);
  if (it == live_.begin()) return false;
  --it;
  const Allocation& a = it->second;
  if (address - a.base >= a.size) return false;
  *out = a;
  return true;
}

std::string DeviceMemory::describe(uint64_t address) const {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto hex = [](uint64_t value) {
    char text[24];
    std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
    return std::string(text);
  };
  const auto allocation = [&](const Allocation& a) {
    return "the " + std::to_string(a.size) + "-byte allocation at " + hex(a.base);
  };
  auto freed = freed_.upper_bound(address);
  if (freed != freed_.begin() &&
      address - std::prev(freed)->second.base < std::prev(freed)->second.size) {
    const Allocation& a = std::prev(freed)->second;
    return hex(address) + " is " + std::to_string(address - a.base) + " bytes into " +
           allocation(a) + ", which was freed (use after free)";
  }
  auto live = live_.upper_bound(address);
  if (live == live_.begin()) return hex(address) + " is below every live allocation";
  const Allocation& a = std::prev(live)->second;
  if (address - a.base < a.size) {
    return hex(address) + " is " + std::to_string(address - a.base) + " bytes into " +
           allocation(a);
  }
  return hex(address) + " is " + std::to_string(address - (a.base + a.size)) +
         " bytes past the end of " + allocation(a);
}

uint64_t DeviceMemory::freeBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return capacity_ - stats_.bytesInUse;
}

uint64_t DeviceMemory::largestFreeBlock() const {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t largest = 0;
  for (const auto& [offset, size] : freeBlocks_) largest = std::max(largest, size);
  return largest;
}

DeviceMemoryStats DeviceMemory::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace mimic::sim
