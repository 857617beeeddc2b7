// Fused row kernels for the PyTorch backend: softmax and log_softmax with their backward, and
// layer norm with its backward. Each op is one kernel launch that reads its inputs once and
// writes its outputs once when a row fits the scratchpad (row_kernel.h describes the passes of
// longer rows). Layer norm's weight and bias gradients add one reduction launch each.
//
// Views are normalised by the caller to rows: a row operand is 3-D [G, C, N] (any strides, in
// elements): the op works along N, for each of the G x C rows; a per-row statistic is 2-D
// [G, C]; a per-column parameter (weight, bias) is 1-D [N]. Float inputs (f32, f16, bf16)
// compute in f32, as PyTorch's CPU kernels do; outputs are rounded once.
//
// Throws std::invalid_argument naming the operand for mismatched sizes, ranks or dtypes, and
// mimic::Error when a launch fails. Asynchronous on ctx.queue; nothing is read back.
#pragma once

#include "torch_backend/ops/reduce.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

// out = softmax(in) along N (log_softmax with `log`): exp(x - max) / sum(exp(x - max)), or
// x - max - log(sum(exp(x - max))). out may have another float dtype than in.
void softmax(const LaunchContext& ctx, const TensorView& out, const TensorView& in, bool log);

// The gradient of softmax (or log_softmax) with respect to its input, from the gradient of its
// output and the output y: softmax: dx = y (dy - sum(dy y)); log: dx = dy - exp(y) sum(dy).
void softmaxBackward(const LaunchContext& ctx, const TensorView& gradInput,
                     const TensorView& gradOutput, const TensorView& output, bool log);

// out = (x - mean) * rstd * weight + bias along N, with mean and rstd = 1 / sqrt(var + eps)
// (biased variance, computed two-pass) written per row to `mean` and `rstd` (float views of
// [G, C]). weight and bias may be null (data == nullptr).
// With a `residual` (the add before a transformer's layer norm), x = in + residual in f32 and
// x is written to `sum`: one launch where an add and the layer norm take two, and x read once.
// in, residual and sum are then f32; both or neither of residual and sum are given. A
// `dropMask` (f32, with a residual) drops the residual out first: x = in + residual * (dropMask
// / dropScale), each operation rounded to f32 in that order.
void layerNorm(const LaunchContext& ctx, const TensorView& out, const TensorView& mean,
               const TensorView& rstd, const TensorView& in, const TensorView& weight,
               const TensorView& bias, double eps, const TensorView& residual = {},
               const TensorView& sum = {}, const TensorView& dropMask = {}, double dropScale = 1);

// Layer norm's gradients from grad_out (dy), the input x and the saved mean and rstd:
//   gradInput  = rstd (g - mean(g) - xhat mean(g xhat)), g = dy * weight, xhat = (x - mean) rstd
//   gradWeight = sum over rows of dy xhat,   gradBias = sum over rows of dy.
// Any of the three outputs may be null (data == nullptr) to skip it; gradWeight and gradBias
// are 1-D [N] and take the workspace (f32 partial sums per workgroup, one reduction each).
// `oneAllocation` says both lie in one device allocation (views of one tensor): then, when
// they have one dtype and stride and do not overlap, one reduction sums both.
void layerNormBackward(const LaunchContext& ctx, const TensorView& gradInput,
                       const TensorView& gradWeight, const TensorView& gradBias,
                       const TensorView& gradOut, const TensorView& in, const TensorView& mean,
                       const TensorView& rstd, const TensorView& weight, const Workspace& workspace,
                       bool oneAllocation = false);

}  // namespace mimic::ops
