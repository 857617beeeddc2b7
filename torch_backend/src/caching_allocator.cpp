#include "torch_backend/src/caching_allocator.h"

#include <c10/util/Exception.h>

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <sstream>
#include <tuple>
#include <vector>

#include "mimic/mimic_debug.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {
namespace {

constexpr size_t kRounding = 512;
constexpr int kMaxDevices = MIMIC_MAX_DEVICES;
// Freed tensors' bytes while the sanitizer's memory tools are on: NaN as float, -1 as integers.
constexpr uint8_t kPoison = 0xFF;

// Whether the sanitizer shadows memory (memcheck, initcheck or leakcheck): then each tensor's
// bytes are registered as a region of its block, and freed tensors are poisoned.
bool sanitizing() {
  unsigned tools = 0;
  mimicDebugGetSanitizer(&tools);
  return (tools &
          (MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_INITCHECK | MIMIC_SANITIZE_LEAKCHECK)) != 0;
}

struct Block {
  void* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;  // by the tensor that holds it now
  int device = 0;
  uint64_t generation = 0;  // the device's resets before the block was made
  c10::StreamId stream = 0;
  std::set<c10::StreamId> usedBy;  // other streams, from recordStream
};

// A cached block is reused for requests of at least half its size, so that a small tensor does
// not pin a large block.
bool fits(size_t blockSize, size_t request) {
  return blockSize >= request && blockSize / 2 <= request;
}

struct PendingFree {
  Block* block;
  std::vector<mimicEvent> events;
};

std::string formatBytes(int64_t bytes) {
  std::ostringstream out;
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  out.precision(unit == 0 ? 0 : 2);
  out << std::fixed << value << " " << units[unit];
  return out.str();
}

class State {
 public:
  State() {
    const char* mode = std::getenv("MIMIC_ALLOCATOR");
    if (mode && *mode) {
      TORCH_CHECK(!std::strcmp(mode, "direct") || !std::strcmp(mode, "caching"),
                  "mimic: MIMIC_ALLOCATOR must be 'caching' or 'direct', not '", mode, "'");
      caching_ = !std::strcmp(mode, "caching");
    }
  }

  bool caching() const { return caching_; }

  Block* allocate(int device, c10::StreamId stream, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    AllocatorStats& s = stats_.at(device);
    const size_t size = (bytes + kRounding - 1) / kRounding * kRounding;
    processPendingFrees();
    Block* block = caching_ ? takeCached(device, stream, size) : nullptr;
    if (block) {
      ++s.cacheHits;
    } else {
      block = allocateFromDriver(device, stream, size, bytes);
    }
    ++s.allocations;
    s.allocatedBytes += block->size;
    s.peakAllocatedBytes = std::max(s.peakAllocatedBytes, s.allocatedBytes);
    block->requested = bytes;
    if (sanitizing()) MIMIC_TORCH_CHECK(mimicDebugRegionRegister(block->ptr, bytes));
    return block;
  }

  void release(Block* block) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (block->generation != generation(block->device)) {
      delete block;  // a device reset took its memory already
      return;
    }
    stats_.at(block->device).allocatedBytes -= block->size;
    if (sanitizing()) poisonAndUnregister(*block);
    if (!caching_) {
      freeToDriver(block);
      return;
    }
    if (block->usedBy.empty()) {
      cache_.insert(key(block));
      return;
    }
    PendingFree pending{block, {}};
    for (c10::StreamId stream : block->usedBy) {
      mimicEvent event = nullptr;
      MIMIC_TORCH_CHECK(mimicEventCreate(block->device, MIMIC_EVENT_DISABLE_TIMING, &event));
      c10::Stream s(c10::Stream::UNSAFE, deviceOf(block->device), stream);
      MIMIC_TORCH_CHECK(mimicEventRecord(event, queueOf(s)));
      pending.events.push_back(event);
    }
    block->usedBy.clear();
    pending_.push_back(std::move(pending));
  }

  void recordStream(Block* block, c10::StreamId stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stream != block->stream) block->usedBy.insert(stream);
  }

  void emptyCache() {
    std::lock_guard<std::mutex> lock(mutex_);
    releaseCache(-1);
  }

  // mimicDeviceReset frees every allocation of the device: the cache forgets its blocks there,
  // and blocks of live tensors are dropped when those tensors go.
  void resetDevice(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = cache_.begin(); it != cache_.end();) {
      if (std::get<0>(*it) == device) {
        delete std::get<4>(*it);
        it = cache_.erase(it);
      } else {
        ++it;
      }
    }
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->block->device != device) {
        ++it;
        continue;
      }
      for (mimicEvent event : it->events) mimicEventDestroy(event);
      delete it->block;
      it = pending_.erase(it);
    }
    generations_.at(device).fetch_add(1, std::memory_order_acq_rel);
    AllocatorStats& s = stats_.at(device);
    s.allocatedBytes = 0;
    s.reservedBytes = 0;
    MIMIC_TORCH_CHECK(mimicDeviceReset(device));
  }

  uint64_t generation(int device) const {
    return generations_.at(device).load(std::memory_order_acquire);
  }

  AllocatorStats stats(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_.at(device);
  }

  void resetPeak(int device) {
    std::lock_guard<std::mutex> lock(mutex_);
    AllocatorStats& s = stats_.at(device);
    s.peakAllocatedBytes = s.allocatedBytes;
    s.peakReservedBytes = s.reservedBytes;
  }

  size_t largestCachedBlock(int device) {
    size_t largest = 0;
    for (const auto& entry : cache_) {
      if (std::get<0>(entry) == device) largest = std::max(largest, std::get<2>(entry));
    }
    return largest;
  }

 private:
  // Among cached blocks of one size, the lowest device address is taken first: ordering them by
  // the Block's host address made which one a tensor got (and so the cache lines its kernels
  // hit, and their simulated times) change from run to run.
  using Key = std::tuple<int, c10::StreamId, size_t, uintptr_t, Block*>;
  static Key key(Block* b) {
    return {b->device, b->stream, b->size, reinterpret_cast<uintptr_t>(b->ptr), b};
  }

  // The poison is written through the host view, as the simulation's functional state is what
  // later commands read: it costs no simulated time and orders with no stream. A device that
  // has failed is left as it is (its memory goes at the reset).
  static void poisonAndUnregister(const Block& block) {
    void* view = nullptr;
    if (mimicMemGetHostView(block.ptr, block.requested, &view) == MIMIC_SUCCESS) {
      std::memset(view, kPoison, block.requested);
    }
    mimicDebugRegionUnregister(block.ptr);
  }

  Block* takeCached(int device, c10::StreamId stream, size_t size) {
    auto it = cache_.lower_bound(Key{device, stream, size, 0, nullptr});
    if (it == cache_.end() || std::get<0>(*it) != device || std::get<1>(*it) != stream ||
        !fits(std::get<2>(*it), size)) {
      return nullptr;
    }
    Block* block = std::get<4>(*it);
    cache_.erase(it);
    return block;
  }

  Block* allocateFromDriver(int device, c10::StreamId stream, size_t size, size_t requested) {
    void* ptr = nullptr;
    mimicResult result = mimicMemAlloc(device, size, &ptr);
    if (result == MIMIC_ERROR_OUT_OF_MEMORY) {
      releaseCache(device);
      result = mimicMemAlloc(device, size, &ptr);
    }
    if (result == MIMIC_ERROR_OUT_OF_MEMORY) {
      ++stats_.at(device).outOfMemory;
      throwOutOfMemory(device, requested);
    }
    MIMIC_TORCH_CHECK(result);
    AllocatorStats& s = stats_.at(device);
    ++s.driverAllocations;
    s.reservedBytes += size;
    s.peakReservedBytes = std::max(s.peakReservedBytes, s.reservedBytes);
    return new Block{ptr, size, 0, device, generation(device), stream, {}};
  }

  void freeToDriver(Block* block) {
    stats_.at(block->device).reservedBytes -= block->size;
    MIMIC_TORCH_CHECK(mimicMemFree(block->ptr));
    delete block;
  }

  // Returns cached blocks of `device` (-1: all devices) to the driver, after waiting for the
  // pending ones, as emptying the cache must not lose memory to streams still running.
  void releaseCache(int device) {
    for (PendingFree& pending : pending_) {
      for (mimicEvent event : pending.events) {
        MIMIC_TORCH_CHECK(mimicEventSynchronize(event));
      }
    }
    processPendingFrees();
    for (auto it = cache_.begin(); it != cache_.end();) {
      if (device == -1 || std::get<0>(*it) == device) {
        freeToDriver(std::get<4>(*it));
        it = cache_.erase(it);
      } else {
        ++it;
      }
    }
  }

  void processPendingFrees() {
    for (auto it = pending_.begin(); it != pending_.end();) {
      bool done = true;
      for (mimicEvent event : it->events) {
        mimicResult result = mimicEventQuery(event);
        if (result == MIMIC_NOT_READY) {
          done = false;
          break;
        }
        MIMIC_TORCH_CHECK(result);
      }
      if (!done) {
        ++it;
        continue;
      }
      for (mimicEvent event : it->events) mimicEventDestroy(event);
      cache_.insert(key(it->block));
      it = pending_.erase(it);
    }
  }

  // The driver does not report its largest free range, so find it by trying allocations: this
  // runs only on the way to an out-of-memory error.
  size_t largestDriverBlock(int device, size_t freeBytes) {
    size_t low = 0, high = freeBytes;
    while (high - low > kRounding) {
      const size_t mid = (low + high) / 2 / kRounding * kRounding;
      void* probe = nullptr;
      if (mid > 0 && mimicMemAlloc(device, mid, &probe) == MIMIC_SUCCESS) {
        mimicMemFree(probe);
        low = mid;
      } else {
        high = mid;
      }
    }
    return low;
  }

  [[noreturn]] void throwOutOfMemory(int device, size_t requested) {
    // A planned failure (MIMIC_FAULTS) is reported as such; probing for the largest free
    // block would only meet the same plan again.
    const char* detail = nullptr;
    mimicGetErrorDetail(&detail);
    if (detail && std::strstr(detail, "injected fault")) {
      TORCH_CHECK_WITH(OutOfMemoryError, false, "mimic out of memory. Tried to allocate ",
                       formatBytes(requested), " on device ", device, ": ", detail);
    }
    size_t freeBytes = 0, totalBytes = 0;
    mimicMemGetInfo(device, &freeBytes, &totalBytes);
    const AllocatorStats& s = stats_.at(device);
    const size_t largest =
        std::max(largestDriverBlock(device, freeBytes), largestCachedBlock(device));
    std::ostringstream message;
    message << "mimic out of memory. Tried to allocate " << formatBytes(requested) << " on device "
            << device << " (total capacity " << formatBytes(totalBytes) << "; "
            << formatBytes(s.allocatedBytes) << " allocated by PyTorch, "
            << formatBytes(s.reservedBytes) << " reserved, " << formatBytes(freeBytes)
            << " free; the largest free block is " << formatBytes(largest)
            << (largest < requested && freeBytes >= requested ? ", so memory is fragmented" : "")
            << ")";
    TORCH_CHECK_WITH(OutOfMemoryError, false, message.str());
  }

  std::mutex mutex_;
  bool caching_ = true;
  std::set<Key> cache_;
  std::vector<PendingFree> pending_;
  std::array<AllocatorStats, kMaxDevices> stats_{};
  // Atomic so that the check of every kernel's tensors reads them without the lock.
  std::array<std::atomic<uint64_t>, kMaxDevices> generations_{};
};

State& state() {
  static State* s = new State();  // outlives tensors freed during static destruction
  return *s;
}

// Runs in tensor destructors, which must not throw: a driver failure here (a device that has
// failed with a sticky error) is reported and the block is dropped.
void deleteBlock(void* context) {
  try {
    state().release(static_cast<Block*>(context));
  } catch (const c10::Error& e) {
    TORCH_WARN("mimic: freeing device memory failed: ", e.what_without_backtrace());
  }
}

Block* blockOf(const c10::DataPtr& data) {
  return data.get_deleter() == &deleteBlock ? static_cast<Block*>(data.get_context()) : nullptr;
}

}  // namespace

c10::DataPtr CachingAllocator::allocate(size_t bytes) const {
  ensureInitialized();
  const int device = currentDevice();
  if (bytes == 0) return {nullptr, nullptr, &deleteBlock, deviceOf(device)};
  Block* block = state().allocate(device, currentStream(device).id(), bytes);
  return {block->ptr, block, &deleteBlock, deviceOf(device)};
}

void CachingAllocator::recordStream(const c10::DataPtr& data, const c10::Stream& stream) const {
  if (Block* block = blockOf(data)) state().recordStream(block, stream.id());
}

void CachingAllocator::emptyCache() const {
  state().emptyCache();
}

void CachingAllocator::resetDevice(int device) const {
  state().resetDevice(device);
}
void CachingAllocator::requireCurrentGeneration(const c10::DataPtr& data) const {
  const Block* block = blockOf(data);
  if (!block) return;
  const uint64_t resets = state().generation(block->device);
  TORCH_CHECK(block->generation == resets, "mimic: this tensor's memory on device ", block->device,
              " was lost when torch_mimic.reset_device(", block->device,
              ") reset the device (reset ", resets,
              " of this process came after the tensor was made); make the tensor again after "
              "the reset");
}
AllocatorStats CachingAllocator::stats(int device) const {
  return state().stats(device);
}
void CachingAllocator::resetPeakStats(int device) const {
  state().resetPeak(device);
}
bool CachingAllocator::caching() const {
  return state().caching();
}

std::string CachingAllocator::summary(int device) const {
  const AllocatorStats s = stats(device);
  size_t freeBytes = 0, totalBytes = 0;
  mimicMemGetInfo(device, &freeBytes, &totalBytes);
  std::ostringstream out;
  out << "mimic memory summary, device " << device << " (" << (caching() ? "caching" : "direct")
      << " allocator)\n"
      << "  allocated      " << formatBytes(s.allocatedBytes) << " (peak "
      << formatBytes(s.peakAllocatedBytes) << ")\n"
      << "  reserved       " << formatBytes(s.reservedBytes) << " (peak "
      << formatBytes(s.peakReservedBytes) << ")\n"
      << "  device free    " << formatBytes(freeBytes) << " of " << formatBytes(totalBytes) << "\n"
      << "  allocations    " << s.allocations << " (" << s.cacheHits << " from the cache, "
      << s.driverAllocations << " from the driver)\n"
      << "  out of memory  " << s.outOfMemory << "\n";
  return out.str();
}

CachingAllocator& cachingAllocator() {
  static CachingAllocator allocator;
  return allocator;
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &cachingAllocator());

}  // namespace mimic::torch_backend
