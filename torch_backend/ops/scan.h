// Inclusive scans for the PyTorch backend: cumsum, cumprod, logcumsumexp, and cummax/cummin with
// the index of the running extreme, along the middle dim of a 3-D view [G, N, C] (the caller
// merges the dims before and after the scanned one). Each call is one kernel launch, but for
// the long lanes below.
//
// Order of operations: every output element is the fold of its lane's inputs in index order,
// out[j] = op(out[j - 1], in[j]), exactly as PyTorch's CPU kernels fold; lanes (the G x C
// independent rows) are computed side by side in vector instructions, so a step is one vector
// instruction (a few for logcumsumexp and cummax/cummin) over up to kc lanes (scan_kernel.h).
// Long sums and products of few lanes (C = 1, G <= 16, N >= 4096, out in the compute type:
// f32 or i64) are the exception: each lane is scanned in rows of about sqrt(N) steps side by
// side and the rows are then combined, in three to five launches (scan.cpp, blockedScan), so
// their float sums associate by rows; still deterministic, with no larger an error bound.
//
// Float inputs (f32, f16, bf16) compute in f32, integer and bool/u8 inputs in i64; the output
// is rounded once to its dtype. Max and Min follow PyTorch's CPU cummax/cummin: an element
// replaces the running extreme when it is NaN or >= (<=) it, so ties take the last index and a
// NaN sticks with the index of the latest NaN; their values keep in's dtype and their indices
// are i64. LogSumExp is float-only: log(exp(a) + exp(b)) = max + log(1 + exp(min - max)), with
// equal infinities staying what they are. Its running value is carried as an unevaluated sum
// of two f32 (the output and the rounding error of the last addition, kept exactly by a
// two-sum), because PyTorch's CPU kernel carries it in double: an f32 carry loses half a unit
// per step, and logcumsumexp's gradient (exp(result + x) of large results) magnifies that.
//
// Throws std::invalid_argument naming the operand for mismatched sizes, ranks or dtypes, and
// mimic::Error when a launch fails. Asynchronous on ctx.queue; an empty view launches nothing.
#pragma once

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

enum class ScanKind { Sum, Prod, LogSumExp, Max, Min };

// out (and, for Max and Min, indices: i64) = the inclusive scan of `in` along dim 1 of the 3-D
// views [G, N, C] (any strides). `indices` is ignored (may be empty) for the other kinds.
void scan(const LaunchContext& ctx, const TensorView& out, const TensorView& indices,
          const TensorView& in, ScanKind kind);

}  // namespace mimic::ops
