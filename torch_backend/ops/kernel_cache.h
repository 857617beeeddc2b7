// Op kernels are generated with the builder on first use and loaded once per device. The cache
// key names everything the generated code depends on (op, element types, shape class); values
// that vary per call (addresses, sizes, strides, scalars) are kernel arguments.
//
// The cache holds at most MIMIC_KERNEL_CACHE_SIZE kernels (default 2048) and evicts the least
// recently used one beyond that: programs that bake a value into their text (an elementwise
// program with a changing constant) cannot grow it without bound. An evicted kernel's module
// is unloaded once nothing holds it; kernels already queued still run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "sim/isa/module.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// A loaded kernel; its module stays loaded while the cache or a caller holds it.
class LoadedKernel {
 public:
  LoadedKernel(mimicModule module, mimicFunction function) : module_(module), function_(function) {}
  ~LoadedKernel();
  LoadedKernel(const LoadedKernel&) = delete;
  LoadedKernel& operator=(const LoadedKernel&) = delete;
  mimicFunction function() const { return function_; }

 private:
  mimicModule module_;
  mimicFunction function_;
};
using KernelRef = std::shared_ptr<const LoadedKernel>;

// The cached kernel for `key` on `device` (counted as a hit), or null (not counted).
KernelRef findCachedKernel(int device, const std::string& key);
// The kernel for `key` on `device`, built by `build` the first time (or after its eviction).
// Thread-safe. Throws mimic::Error when the module cannot be loaded.
KernelRef cachedKernel(int device, const std::string& key,
                       const std::function<isa::Function()>& build);
// The same for any callable, without wrapping it in a std::function when the kernel is cached
// (every launch of an op asks; the wrapper would allocate for a lambda's captures).
template <typename Build>
KernelRef cachedKernel(int device, const std::string& key, const Build& build) {
  if (KernelRef found = findCachedKernel(device, key)) return found;
  return cachedKernel(device, key, std::function<isa::Function()>(build));
}

struct KernelCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;  // kernels built and loaded
  int64_t evictions = 0;
  int64_t entries = 0;
  int64_t capacity = 0;
};
KernelCacheStats kernelCacheStats();

// Launches with 8-byte arguments. Throws mimic::Error naming the kernel on failure.
void launch(const LaunchContext& ctx, const KernelRef& kernel, mimicDim3 grid,
            const std::vector<int64_t>& args);

// The properties of `device`, read once.
const mimicDeviceProperties& deviceProperties(int device);

// Scratchpad bytes of one compute unit of `device` (cached).
size_t scratchpadBytes(int device);

// Compute units of `device` (cached): how many workgroups a launch needs to fill the device.
int computeUnits(int device);

// A scalar operand as c10::Scalar carries a real one: an exact integer, or a double.
struct ScalarArg {
  ScalarArg(double value) : real(value) {}                   // NOLINT: numbers convert implicitly
  ScalarArg(int value) : isInteger(true), integer(value) {}  // NOLINT
  ScalarArg(int64_t value) : isInteger(true), integer(value) {}  // NOLINT
  bool isInteger = false;
  int64_t integer = 0;
  double real = 0;
};

// The bits of `value` converted to `type`, as a kernel argument for VBinaryS/VFill-style scalar
// operands (floats as their IEEE bits, integers sign-extended). An integer stays exact in an
// integer type (int64 values beyond 2^53 included).
int64_t scalarBits(double value, isa::DType type);
int64_t scalarBits(const ScalarArg& value, isa::DType type);

}  // namespace mimic::ops
