#include "torch_backend/ops/kernel_cache.h"

#include <cstdlib>
#include <list>
#include <map>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include "mimic/mimic.hpp"
#include "sim/isa/module_image.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::ops {
namespace {

// MIMIC_KERNEL_CACHE_SIZE, read once.
size_t capacityFromEnvironment() {
  const char* text = std::getenv("MIMIC_KERNEL_CACHE_SIZE");
  if (!text || !*text) return 2048;
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*end != '\0' || value < 1) {
    throw mimic::Error(MIMIC_ERROR_INVALID_VALUE,
                       std::string("MIMIC_KERNEL_CACHE_SIZE must be a whole number of kernels "
                                   "above 0, not '") +
                           text + "'");
  }
  return size_t(value);
}

// Least recently used first. One map per device, so that a lookup takes the caller's key
// string as it is (no pair to build, no copy per launch).
class KernelCache {
 public:
  KernelRef find(int device, const std::string& key) {
    auto& entries = entriesOf(device);
    auto found = entries.find(key);
    if (found == entries.end()) return nullptr;
    ++stats_.hits;
    order_.splice(order_.end(), order_, found->second.position);
    return found->second.kernel;
  }
  void insert(int device, const std::string& key, KernelRef kernel) {
    ++stats_.misses;
    while (!order_.empty() && size_ >= capacity_) {
      entriesOf(order_.front().first).erase(order_.front().second);
      order_.pop_front();
      --size_;
      ++stats_.evictions;
    }
    order_.push_back({device, key});
    entriesOf(device)[key] = {std::move(kernel), std::prev(order_.end())};
    ++size_;
  }
  KernelCacheStats stats() const {
    KernelCacheStats s = stats_;
    s.entries = int64_t(size_);
    s.capacity = int64_t(capacity_);
    return s;
  }

 private:
  using Key = std::pair<int, std::string>;
  struct Entry {
    KernelRef kernel;
    std::list<Key>::iterator position;
  };
  std::unordered_map<std::string, Entry>& entriesOf(int device) {
    if (size_t(device) >= entries_.size()) entries_.resize(size_t(device) + 1);
    return entries_[size_t(device)];
  }
  size_t capacity_ = capacityFromEnvironment();
  size_t size_ = 0;
  std::list<Key> order_;
  std::vector<std::unordered_map<std::string, Entry>> entries_;  // by device
  KernelCacheStats stats_;
};

std::mutex& cacheMutex() {
  static std::mutex m;
  return m;
}

// Never destroyed: at exit the driver may be gone before it, and unloading is moot then.
KernelCache& cache() {
  static KernelCache* instance = new KernelCache;
  return *instance;
}

}  // namespace

LoadedKernel::~LoadedKernel() {
  mimicModuleUnload(module_);  // queued kernels still run; a failure leaves nothing to undo
}

KernelRef findCachedKernel(int device, const std::string& key) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  return cache().find(device, key);
}

KernelRef cachedKernel(int device, const std::string& key,
                       const std::function<isa::Function()>& build) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  if (KernelRef found = cache().find(device, key)) return found;
  isa::Function function = build();
  const std::string name = function.name;
  std::vector<uint8_t> image = isa::encodeImage(isa::Module{{std::move(function)}});
  mimicModule module = nullptr;
  MIMIC_CHECK(mimicModuleLoad(device, image.data(), image.size(), &module));
  mimicFunction fn = nullptr;
  const mimicResult found = mimicModuleGetFunction(module, name.c_str(), &fn);
  if (found != MIMIC_SUCCESS) mimicModuleUnload(module);
  MIMIC_CHECK(found);
  auto kernel = std::make_shared<const LoadedKernel>(module, fn);
  cache().insert(device, key, kernel);
  return kernel;
}

KernelCacheStats kernelCacheStats() {
  std::lock_guard<std::mutex> lock(cacheMutex());
  return cache().stats();
}

void launch(const LaunchContext& ctx, const KernelRef& kernel, mimicDim3 grid,
            const std::vector<int64_t>& args) {
  MIMIC_CHECK(mimicLaunchKernel(kernel->function(), grid, args.data(),
                                args.size() * sizeof(int64_t), ctx.queue));
}

const mimicDeviceProperties& deviceProperties(int device) {
  static std::mutex m;
  static std::map<int, mimicDeviceProperties> table;
  std::lock_guard<std::mutex> lock(m);
  auto found = table.find(device);
  if (found != table.end()) return found->second;
  mimicDeviceProperties props{};
  MIMIC_CHECK(mimicDeviceGetProperties(device, &props));
  return table[device] = props;
}

size_t scratchpadBytes(int device) {
  return deviceProperties(device).scratchpadBytes;
}

int computeUnits(int device) {
  return deviceProperties(device).computeUnits;
}

int64_t scalarBits(double value, isa::DType type) {
  if (isa::isFloat(type)) return static_cast<int64_t>(isa::floatToBits(value, type));
  // Through int64 first: converting an out-of-range double straight to a narrow type is
  // undefined.
  return scalarBits(ScalarArg(static_cast<int64_t>(value)), type);
}

int64_t scalarBits(const ScalarArg& value, isa::DType type) {
  if (!value.isInteger) return scalarBits(value.real, type);
  if (isa::isFloat(type)) return scalarBits(static_cast<double>(value.integer), type);
  // The value wraps into the type, stored as the ISA stores immediates (validate.h): u8
  // zero-extended, i8 and i16 sign-extended from their width.
  switch (type) {
    case isa::DType::U8:
      return static_cast<uint8_t>(value.integer);
    case isa::DType::I8:
      return static_cast<int8_t>(value.integer);
    case isa::DType::I16:
      return static_cast<int16_t>(value.integer);
    default:
      return value.integer;
  }
}

}  // namespace mimic::ops
