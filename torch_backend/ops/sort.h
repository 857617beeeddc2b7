// Sort for the PyTorch backend: values and int64 indices of each row, ascending or
// descending, stable, NaN ordered as PyTorch's CPU orders it (largest). sort_kernel.h describes
// the device side.
//
// Views are normalised by the caller to rows: in, values and indices are 2-D [R, N] (any
// strides, in elements); values have in's dtype, indices are i64. Either output may be skipped
// (data == nullptr). Types: f32, f16, bf16, i32, i64, u8 (bool and uint8).
//
// A row sorts in one workgroup, in one launch, when it fits the scratchpad (sortRowCapacity);
// longer rows sort in passes over a workspace of 16 bytes an element of the rows padded to a
// power of two (sort_kernel.h): one launch for the pieces, then per stage one per long step and
// one for the steps inside the pieces. std::invalid_argument for mismatched sizes or dtypes,
// mimic::Error when a launch fails. Asynchronous on ctx.queue; nothing is read back.
#pragma once

#include <cstdint>

#include "torch_backend/ops/reduce.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

void sort(const LaunchContext& ctx, const TensorView& values, const TensorView& indices,
          const TensorView& in, bool descending, const Workspace& workspace = {});

// The longest row one workgroup sorts on `device`; longer ones need a workspace.
int64_t sortRowCapacity(int device);

}  // namespace mimic::ops
