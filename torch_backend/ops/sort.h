// Sort for the PyTorch backend: values and int64 indices of each row, ascending or
// descending, stable, NaN ordered as PyTorch's CPU orders it (largest). sort_kernel.h describes
// the device side.
//
// Views are normalised by the caller to rows: in, values and indices are 2-D [R, N] (any
// strides, in elements); values have in's dtype, indices are i64. Either output may be skipped
// (data == nullptr). Types: f32, f16, bf16, i32, i64, u8 (bool and uint8).
//
// A row sorts in one workgroup when it fits the scratchpad (sortRowCapacity); longer rows are
// refused with std::invalid_argument, as are mismatched sizes or dtypes. mimic::Error when a
// launch fails. Asynchronous on ctx.queue; nothing is read back.
#pragma once

#include <cstdint>

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

void sort(const LaunchContext& ctx, const TensorView& values, const TensorView& indices,
          const TensorView& in, bool descending);

// The longest row sort takes on `device`.
int64_t sortRowCapacity(int device);

}  // namespace mimic::ops
