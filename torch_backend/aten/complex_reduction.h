// complex64 sum and mean on the device: the reduce kernel over the view_as_real pairs of the
// input, the last dim (real, imaginary) kept, so that each part is reduced as a float32 tensor
// would be (the same order and accumulation as float32 sums). Hooked into the reduction kernel
// (reduction_kernel.cpp). prod multiplies by halves. The other reductions of complex tensors
// stay on the CPU (all/any too: 1.13's CPU reads only the real part, as its bool cast does).
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "torch_backend/aten/op_table.h"

namespace mimic::torch_backend::aten {

// Reduces complex64 `self` over `dims` (sorted, unique, wrapped) for `op` (sum, mean, prod) into
// *result (out when given, resized as PyTorch's out= variants do); false when the call is not
// one this serves (another op or dtype, a complex128 or real out or dtype argument).
bool complexReduction(const std::string& name, const ReductionOp& op, const at::Tensor& self,
                      const std::vector<int>& dims, bool keepdim,
                      c10::optional<at::ScalarType> dtype, const at::Tensor* out,
                      at::Tensor* result);

}  // namespace mimic::torch_backend::aten
