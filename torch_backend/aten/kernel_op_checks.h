// What the GEMM and index kernels (gemm_kernels.cpp, index_kernels.cpp) share: their op table
// entries, the device and dtype checks of their arguments, and out= resizing.
#pragma once

#include <ATen/core/Tensor.h>
#include <ATen/native/Resize.h>

#include <string_view>

#include "torch_backend/aten/op_table.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {

// The table's entry of `name`, which must run `kernel` of `kind`: a registration of an op the
// table does not list (or lists with another kernel) fails when the library loads.
inline const KernelOp& kernelOpEntry(std::string_view name, std::string_view kind,
                                     std::string_view kernel) {
  for (const KernelOp& op : kernelOps()) {
    if (op.name != name) continue;
    TORCH_CHECK(op.kind == kind && op.kernel == kernel, "mimic: the op table runs ", name, " on ",
                op.kind, " kernel ", op.kernel, ", but its registration runs ", kind, " kernel ",
                kernel);
    return op;
  }
  TORCH_CHECK(false, "mimic: ", name,
              " is registered for the device but missing from the op table");
}

// The op kernels take tensors of one device: `kernel` names the one that needs them.
inline void checkSameDevice(const at::Tensor& t, const at::Tensor& reference, const char* kernel) {
  TORCH_CHECK(t.device() == reference.device(), "mimic: ", kernel, " needs every tensor on ",
              reference.device(), ", got one on ", t.device());
}

// Whether the device computes in the tensor's dtype; others (float64, int8, int16, complex) are
// stored only, and their ops take the counted CPU fallback.
inline bool computable(const at::Tensor& t) {
  return deviceComputes(t.scalar_type());
}

// Resizes an out= tensor to `sizes` as PyTorch's out= variants do, once its dtype is known to
// hold a `type` result.
inline void prepareOut(const at::Tensor& out, at::IntArrayRef sizes, at::ScalarType type) {
  TORCH_CHECK(c10::canCast(type, out.scalar_type()), "result type ", type,
              " can't be cast to the desired output type ", out.scalar_type());
  at::native::resize_output(out, sizes);
}

}  // namespace mimic::torch_backend::aten
