// Batched matrix multiply for the PyTorch backend (mm, bmm, addmm, baddbmm, linear).
#pragma once

#include <string>
#include <vector>

#include "torch_backend/ops/kernel_cache.h"
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
// Views may also be 4-D, [batch0, batch1, rows, cols], all of them: two batch dims with strides
// of their own, as a head split of attention gives ([batch, heads] of a strided view that no
// single batch stride walks), so the operand is read where it is instead of copied.
// Throws std::invalid_argument for other ranks, mismatched sizes or dtypes, and mimic::Error
// when the launch fails. Asynchronous on ctx.queue.
void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* bias = nullptr);

// Pointwise work done on each C tile before it is stored, so that it costs no launch of its own
// and no round trip of C through HBM. `program` is in the elementwise language
// (elementwise_program.h, computed in f32): x0 is the GEMM value alpha * A @ B + beta * bias
// (or + beta * C's old value) in f32, x1.. are `inputs` read at C's coordinates (C's rank and
// sizes, any strides: 0 broadcasts; any dtype), s0.. are `scalars` (kernel arguments: a new
// value builds no new kernel). The result is converted to C's dtype. rand and idx are not
// allowed (a tile is not a run of C's row-major indices). The computed values equal those of
// gemm followed by elementwise with the same program, bit for bit, as both round the same f32
// operations.
struct GemmEpilogue {
  std::string program;
  std::vector<TensorView> inputs;  // at most kMaxElementwiseInputs - 1
  std::vector<ScalarArg> scalars;
};

// gemm with `epilogue` (nullptr: none). Throws std::invalid_argument, naming the program, for a
// bad program or inputs, besides gemm's errors.
void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* bias, const GemmEpilogue* epilogue);

}  // namespace mimic::ops
