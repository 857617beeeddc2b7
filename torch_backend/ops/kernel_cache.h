// Op kernels are generated with the builder on first use and loaded once per device. The cache
// key names everything the generated code depends on (op, element types, shape class); values
// that vary per call (addresses, sizes, strides, scalars) are kernel arguments.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "sim/isa/module.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// The function for `key` on `device`, built by `build` the first time. Thread-safe.
// Throws mimic::Error when the module cannot be loaded.
mimicFunction cachedKernel(int device, const std::string& key,
                           const std::function<isa::Function()>& build);

// Launches with 8-byte arguments. Throws mimic::Error naming the kernel on failure.
void launch(const LaunchContext& ctx, mimicFunction fn, mimicDim3 grid,
            const std::vector<int64_t>& args);

// The properties of `device`, read once.
const mimicDeviceProperties& deviceProperties(int device);

// Scratchpad bytes of one compute unit of `device` (cached).
size_t scratchpadBytes(int device);

// Compute units of `device` (cached): how many workgroups a launch needs to fill the device.
int computeUnits(int device);

// The bits of `value` converted to `type`, as a kernel argument for VBinaryS/VFill-style scalar
// operands (floats as their IEEE bits, integers sign-extended).
int64_t scalarBits(double value, isa::DType type);

}  // namespace mimic::ops
