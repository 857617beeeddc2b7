// Batched matrix multiply for the PyTorch backend (mm, bmm, addmm, baddbmm, linear).
#pragma once

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// C[b] = alpha * (A[b] @ B[b]) + beta * C[b] for every batch b. A [batch, M, K], B [batch, K, N],
// C [batch, M, N]: 3-D views with any strides (transposed inputs, batch stride 0 for broadcast;
// C must not overlap itself or A and B). A, B and C have the same dtype: f32, f16 or bf16;
// products accumulate in f32 (the Mma instruction) and C is rounded once at the end.
// beta == 0 means C's old contents are ignored (even NaN). K == 0 gives beta * C.
// Throws std::invalid_argument for other ranks, mismatched sizes or dtypes, and mimic::Error
// when the launch fails. Asynchronous on ctx.queue.
void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta);

}  // namespace mimic::ops
