// Host side of the row ops: checks, the plan (row_plan.h) and the launch; layer norm's weight
// and bias gradients are reduced from the kernel's per-workgroup partial sums.
#include "torch_backend/ops/row.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/row_plan.h"

namespace mimic::ops {
namespace {

using detail::RowCall;
using detail::RowKind;
using isa::DType;

[[noreturn]] void fail(const char* op, const std::string& what) {
  throw std::invalid_argument(std::string(op) + ": " + what);
}

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

void checkView(const char* op, const char* name, const TensorView& v,
               const std::vector<int64_t>& sizes) {
  if (v.sizes != sizes || v.strides.size() != sizes.size()) {
    fail(op, std::string(name) + " has sizes " + sizesText(v.sizes) + " and " +
                 std::to_string(v.strides.size()) + " strides; expected sizes " + sizesText(sizes));
  }
  // The row kernels compute in f32: f64 would lose its precision, so it is refused too.
  if (!isa::isFloat(v.dtype) || v.dtype == isa::DType::F64) {
    fail(op, std::string(name) + " has dtype " + isa::dtypeName(v.dtype) +
                 "; only f32, f16 and bf16 are supported");
  }
}

void checkRows(const char* op, const TensorView& reference) {
  if (reference.sizes.size() != 3) {
    fail(op, "row operands must be 3-D [G, C, N], got sizes " + sizesText(reference.sizes));
  }
  for (int64_t s : reference.sizes) {
    if (s < 0) fail(op, "negative size in " + sizesText(reference.sizes));
  }
}

std::vector<int64_t> statSizes(const TensorView& rows) {
  return {rows.sizes[0], rows.sizes[1]};
}

void run(const LaunchContext& ctx, const RowCall& call, const detail::RowPlan& plan) {
  const KernelRef fn = cachedKernel(ctx.device, plan.shape.key(),
                                    [&] { return detail::buildRowKernel(plan.shape); });
  launch(ctx, fn, {static_cast<uint32_t>(plan.gridX()), static_cast<uint32_t>(plan.g), 1},
         detail::rowArguments(plan, call));
}

// Layer norm's per-row mean and rstd: one per row of `in`, in one dtype.
void checkStatistics(const char* op, const TensorView& in, const TensorView& mean,
                     const TensorView& rstd) {
  checkView(op, "mean", mean, statSizes(in));
  checkView(op, "rstd", rstd, statSizes(in));
  if (mean.dtype != rstd.dtype) fail(op, "mean and rstd have different dtypes");
}

// Elements from gradWeight to gradBias when one reduction can store both, as the rows of a
// [2, N] view: one dtype and stride, a whole number of elements apart, not overlapping; else 0.
int64_t jointGap(const TensorView& weight, const TensorView& bias, int64_t n) {
  if (weight.data == nullptr || bias.data == nullptr || weight.dtype != bias.dtype ||
      weight.strides[0] != bias.strides[0]) {
    return 0;
  }
  const int64_t size = isa::dtypeSize(weight.dtype);
  const int64_t bytes = static_cast<const char*>(bias.data) - static_cast<const char*>(weight.data);
  if (bytes % size != 0) return 0;
  const int64_t gap = bytes / size;
  return std::abs(gap) >= n * std::abs(weight.strides[0]) ? gap : 0;
}

}  // namespace

void softmax(const LaunchContext& ctx, const TensorView& out, const TensorView& in, bool log) {
  const char* op = log ? "log_softmax" : "softmax";
  checkRows(op, in);
  checkView(op, "in", in, in.sizes);
  checkView(op, "out", out, in.sizes);
  if (in.numel() == 0) return;
  RowCall call;
  call.shape.kind = log ? RowKind::LogSoftmax : RowKind::Softmax;
  call.shape.in0 = in.dtype;
  call.shape.out = out.dtype;
  call.in0 = in;
  call.out = out;
  run(ctx, call, detail::planRows(call, ctx.device));
}

void softmaxBackward(const LaunchContext& ctx, const TensorView& gradInput,
                     const TensorView& gradOutput, const TensorView& output, bool log) {
  const char* op = log ? "log_softmax_backward" : "softmax_backward";
  checkRows(op, output);
  checkView(op, "output", output, output.sizes);
  checkView(op, "grad_output", gradOutput, output.sizes);
  checkView(op, "grad_input", gradInput, output.sizes);
  if (output.numel() == 0) return;
  RowCall call;
  call.shape.kind = log ? RowKind::LogSoftmaxBackward : RowKind::SoftmaxBackward;
  call.shape.in0 = gradOutput.dtype;
  call.shape.in1 = output.dtype;
  call.shape.out = gradInput.dtype;
  call.in0 = gradOutput;
  call.in1 = output;
  call.out = gradInput;
  run(ctx, call, detail::planRows(call, ctx.device));
}

void layerNorm(const LaunchContext& ctx, const TensorView& out, const TensorView& mean,
               const TensorView& rstd, const TensorView& in, const TensorView& weight,
               const TensorView& bias, double eps, const TensorView& residual,
               const TensorView& sum, const TensorView& dropMask, double dropScale) {
  const char* op = "layer_norm";
  checkRows(op, in);
  checkView(op, "in", in, in.sizes);
  checkView(op, "out", out, in.sizes);
  const bool withResidual = residual.data != nullptr;
  if (withResidual != (sum.data != nullptr))
    fail(op, "a residual needs a sum, and a sum a residual");
  if (withResidual) {
    checkView(op, "residual", residual, in.sizes);
    checkView(op, "sum", sum, in.sizes);
    if (in.dtype != DType::F32 || residual.dtype != DType::F32 || sum.dtype != DType::F32) {
      fail(op, "in, residual and sum must be f32 with a residual");
    }
  }
  const bool dropout = dropMask.data != nullptr;
  if (dropout) {
    if (!withResidual) fail(op, "a dropout mask needs a residual");
    checkView(op, "dropout mask", dropMask, in.sizes);
    if (dropMask.dtype != DType::F32) fail(op, "the dropout mask must be f32");
  }
  checkStatistics(op, in, mean, rstd);
  const std::vector<int64_t> cols{in.sizes[2]};
  if (weight.data != nullptr) checkView(op, "weight", weight, cols);
  if (bias.data != nullptr) checkView(op, "bias", bias, cols);
  if (in.numel() == 0) return;
  RowCall call;
  call.shape.kind = RowKind::LayerNorm;
  call.shape.in0 = in.dtype;
  call.shape.out = out.dtype;
  call.shape.stat = mean.dtype;
  call.shape.hasCol0 = weight.data != nullptr;
  call.shape.hasCol1 = bias.data != nullptr;
  call.shape.col0 = weight.dtype;
  call.shape.col1 = bias.dtype;
  call.shape.residual = withResidual;
  call.shape.dropout = dropout;
  call.in2 = dropMask;
  call.scale = dropScale;
  call.shape.in1 = residual.dtype;
  call.in0 = in;
  call.in1 = residual;
  call.sum = sum;
  call.out = out;
  call.stat0 = mean;
  call.stat1 = rstd;
  call.col0 = weight;
  call.col1 = bias;
  call.eps = eps;
  run(ctx, call, detail::planRows(call, ctx.device));
}

void layerNormBackward(const LaunchContext& ctx, const TensorView& gradInput,
                       const TensorView& gradWeight, const TensorView& gradBias,
                       const TensorView& gradOut, const TensorView& in, const TensorView& mean,
                       const TensorView& rstd, const TensorView& weight, const Workspace& workspace,
                       bool oneAllocation) {
  const char* op = "layer_norm_backward";
  checkRows(op, in);
  checkView(op, "in", in, in.sizes);
  checkView(op, "grad_out", gradOut, in.sizes);
  checkStatistics(op, in, mean, rstd);
  const std::vector<int64_t> cols{in.sizes[2]};
  if (gradInput.data != nullptr) checkView(op, "grad_input", gradInput, in.sizes);
  if (weight.data != nullptr) checkView(op, "weight", weight, cols);
  if (gradWeight.data != nullptr) checkView(op, "grad_weight", gradWeight, cols);
  if (gradBias.data != nullptr) checkView(op, "grad_bias", gradBias, cols);
  const bool partials = gradWeight.data != nullptr || gradBias.data != nullptr;
  if (partials && !workspace) fail(op, "weight and bias gradients need a workspace");
  if (in.numel() == 0) return;
  RowCall call;
  call.shape.kind = RowKind::LayerNormBackward;
  call.shape.in0 = gradOut.dtype;
  call.shape.in1 = in.dtype;
  call.shape.writeOut = gradInput.data != nullptr;
  call.shape.out = gradInput.dtype;
  call.shape.stat = mean.dtype;
  call.shape.hasCol0 = weight.data != nullptr;
  call.shape.col0 = weight.dtype;
  call.shape.part0 = gradWeight.data != nullptr;
  call.shape.part1 = gradBias.data != nullptr;
  call.in0 = gradOut;
  call.in1 = in;
  call.out = gradInput;
  call.stat0 = mean;
  call.stat1 = rstd;
  call.col0 = weight;
  const detail::RowPlan plan = detail::planRows(call, ctx.device);
  const int64_t n = in.sizes[2], parts = plan.workgroups(), partElements = parts * n;
  // Gradients one strided view apart (a [2, N] buffer's rows, either order) are summed by one
  // reduction of the partials [2, workgroups, N]: the partials are laid out in their order.
  const int64_t gap = oneAllocation ? jointGap(gradWeight, gradBias, n) : 0;
  if (partials) {
    auto* base = static_cast<float*>(workspace(static_cast<size_t>(2 * partElements * 4)));
    const bool biasFirst = gap < 0;
    if (call.shape.part0) call.part0 = biasFirst ? base + partElements : base;
    if (call.shape.part1) call.part1 = biasFirst ? base : base + partElements;
  }
  run(ctx, call, plan);
  // The parameter gradients: the partial sums [workgroups, N] summed over the workgroups.
  if (gap != 0) {
    const TensorView& first = gap > 0 ? gradWeight : gradBias;
    TensorView source{
        gap > 0 ? call.part0 : call.part1, DType::F32, {2, parts, n}, {partElements, n, 1}};
    TensorView target{first.data, first.dtype, {2, 1, n}, {std::abs(gap), 0, first.strides[0]}};
    reduce(ctx, target, source, {1}, ReduceKind::Sum, workspace);
    return;
  }
  const TensorView* grads[2] = {&gradWeight, &gradBias};
  void* sources[2] = {call.part0, call.part1};
  for (int i = 0; i < 2; ++i) {
    if (grads[i]->data == nullptr) continue;
    TensorView source{sources[i], DType::F32, {parts, n}, {n, 1}};
    TensorView target{grads[i]->data, grads[i]->dtype, {1, n}, {0, grads[i]->strides[0]}};
    reduce(ctx, target, source, {0}, ReduceKind::Sum, workspace);
  }
}

}  // namespace mimic::ops
