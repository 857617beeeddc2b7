// From at::Tensor to the op kernels' TensorView, and the queue a tensor's work goes to.
#pragma once

#include <string>

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::torch_backend {

// The ISA element type of a torch dtype; false for dtypes the device cannot compute in
// (float64, int8, int16, complex, ...), which are stored but not computed.
bool isaDTypeOf(at::ScalarType type, isa::DType* out);
// Whether the device computes in `type` (isaDTypeOf has an ISA type for it).
bool deviceComputes(at::ScalarType type);
// Throws c10::Error naming the reset when the tensor's memory was made before
// torch_mimic.reset_device() reset its device.
void requireNotReset(const at::Tensor& tensor);
// A view of a mimic tensor for the op kernels. Throws c10::Error for a dtype without ISA type,
// or for a tensor made before a reset of its device.
ops::TensorView viewOf(const at::Tensor& tensor);
// A view that moves the tensor's bytes unchanged, whatever its dtype: elements become words
// of an integer type of their size (or several words, for 16-byte complex elements).
ops::TensorView rawViewOf(const at::Tensor& tensor);
// A real scalar as a kernel argument: integers and bools stay exact int64 (beyond 2^53 too),
// floating values doubles. Throws c10::NotImplementedError for a complex scalar.
ops::ScalarArg scalarArgOf(const c10::Scalar& scalar);
// The tensor's device and the queue of that device's current stream.
ops::LaunchContext launchContextOf(const at::Tensor& tensor);
// The float32 view of part `part` (0: real, 1: imaginary) of a complex64 tensor (checked as
// viewOf checks).
ops::TensorView complexPartOf(const at::Tensor& tensor, int part);
// Broadcasts `view` to `shape`: leading and size-1 dims that grow get stride 0.
void expandTo(ops::TensorView& view, at::IntArrayRef shape);
// The tensor's values as the kernels of the work submitted so far leave them, read through the
// simulator's view of device memory (a CPU tensor aliasing it): no command, no sync and no
// simulated time. It stands for the checks real kernels make on the device as they read
// (CUDA's device-side asserts), so the host raises the CPU's error at once. Undefined in timing
// mode, where device memory holds no values to check; a tensor on another device is returned
// as it is (a CPU index of a device op).
at::Tensor simulatorValues(const at::Tensor& tensor);
// "[2, 3]", for error messages.
std::string shapeText(at::IntArrayRef shape);

}  // namespace mimic::torch_backend
