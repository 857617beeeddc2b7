// Batched matrix multiply for the PyTorch backend (mm, bmm, addmm, baddbmm, linear).
#pragma once

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// C[b] = alpha * (A[b] @ B[b]) + beta * C[b] for every batch b. A [batch, M, K], B [batch, K, N],
// C [batch, M, N]: 3-D views with any strides (transposed inputs, batch stride 0 for broadcast;
// C must not overlap itself or A and B). A, B and C have the same dtype: f32, f16 or bf16;
// products accumulate in f32 (the Mma instruction) and C is rounded once at the end.
// beta == 0 means C's old contents are ignored (even NaN). K == 0 gives beta * C.
// With a bias (addmm, linear): C[b] = alpha * (A[b] @ B[b]) + beta * bias[b], C's old contents
// ignored; bias is [batch, M, N] with any strides (0 broadcasts, as a linear layer's bias [N]
// is broadcast along rows), C's dtype, read in the epilogue as C's tile is written, never copied.
// Throws std::invalid_argument for other ranks, mismatched sizes or dtypes, and mimic::Error
// when the launch fails. Asynchronous on ctx.queue.
void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* bias = nullptr);

}  // namespace mimic::ops
