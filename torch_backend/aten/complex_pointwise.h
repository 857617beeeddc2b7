// complex64 pointwise ops on the device, as pairs of float32 in the kernels: every complex
// operand is read through two strided float32 views (its real and imaginary parts, as
// torch.view_as_real(x)[..., 0] and [..., 1] see it), and one elementwise_multi launch writes
// the real and imaginary parts of the result (or one program for a real or bool result: abs,
// eq, ...), after float32 temporaries where an op needs intermediate values more than once
// (log's and pow's atan2). The pointwise kernel (pointwise_kernel.cpp) sends a call here when one
// of its operands is complex and the op has an entry in this file's table; complex128, the half
// complex type and complex operands of other ops stay on the counted CPU fallback.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>

#include <string_view>

namespace mimic::torch_backend::aten {

struct ComplexPointwiseOp;

// The complex entry of the op table name `op` ("add", "mul", "eq", ...), or nullptr.
const ComplexPointwiseOp* findComplexPointwiseOp(std::string_view op);

// Runs a call (`args`: the schema's arguments) on the device when it involves a complex operand
// and every operand and the result are of types the pairs of float32 serve; sets *result (the
// new tensor, self or out) and returns true. False when the call is not complex (the real path
// takes it) or must run on the CPU fallback. Throws c10::Error for calls PyTorch rejects (a
// complex result written to a real tensor, shapes that do not broadcast).
bool runComplexPointwise(const ComplexPointwiseOp& op, const c10::FunctionSchema& schema,
                         const c10::IValue* args, bool inPlace, int outArgument,
                         at::Tensor* result);

}  // namespace mimic::torch_backend::aten
