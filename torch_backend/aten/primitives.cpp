// torch.ops.mimic.* primitives over the device op kernels (torch_backend/ops), for the aten ops
// that stay in Python (torch_mimic/ops_*.py): each call queues kernels on the current stream of
// the tensors' device. A driver failure becomes a RuntimeError naming the primitive, the driver
// error and, through the driver's detail, the kernel.
#include <torch/library.h>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/gemm.h"
#include "torch_backend/ops/index.h"
#include "torch_backend/ops/reduce.h"
#include "torch_backend/ops/row.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

using aten::checkSameDevice;
using aten::onDevice;
using aten::reduceKindOf;
using aten::reduceOnDevice;

std::vector<ops::TensorView> viewsOf(const at::TensorList& tensors, const at::Tensor& out,
                                     const char* op) {
  std::vector<ops::TensorView> views;
  for (const at::Tensor& t : tensors) {
    checkSameDevice(t, out, op);
    views.push_back(viewOf(t));
  }
  return views;
}

void elementwise(const at::Tensor& out, at::TensorList inputs, c10::string_view program,
                 at::ScalarType compute, at::ArrayRef<c10::Scalar> scalars, int64_t seed,
                 int64_t offset) {
  isa::DType computeType;
  TORCH_CHECK_NOT_IMPLEMENTED(isaDTypeOf(compute, &computeType),
                              "mimic: elementwise cannot compute in ", compute);
  std::vector<ops::ScalarArg> values;
  for (const c10::Scalar& s : scalars) values.push_back(scalarArgOf(s));
  onDevice("elementwise", [&] {
    ops::elementwise(launchContextOf(out), viewOf(out), viewsOf(inputs, out, "elementwise"),
                     std::string(program), computeType, values,
                     ops::RandomKey{static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)});
  });
}

constexpr std::pair<const char*, ops::ReduceMap> kReduceMaps[] = {
    {"", ops::ReduceMap::Identity},
    {"abs", ops::ReduceMap::Abs},
    {"square", ops::ReduceMap::Square},
    {"mul", ops::ReduceMap::Mul},
    {"sqdiff", ops::ReduceMap::SquaredDifference}};

ops::ReduceMap reduceMapOf(c10::string_view map) {
  for (const auto& [name, value] : kReduceMaps) {
    if (map == name) return value;
  }
  TORCH_CHECK(false, "mimic: unknown reduction map '", std::string(map), "'");
}

// The names reduce's `map` takes, for callers that use a map only where the library has it.
std::vector<std::string> reduceMaps() {
  std::vector<std::string> names;
  for (const auto& [name, value] : kReduceMaps) names.emplace_back(name);
  return names;
}

void reduce(const at::Tensor& out, const at::Tensor& input, at::IntArrayRef dims,
            c10::string_view kind, c10::string_view map, const c10::optional<at::Tensor>& other,
            double divisor, bool sqrt) {
  checkSameDevice(input, out, "reduce");
  const ops::ReduceKind reduceKind = reduceKindOf(std::string_view(kind.data(), kind.size()));
  ops::ReduceFusion fusion;
  fusion.map = reduceMapOf(map);
  if (other.has_value()) {
    checkSameDevice(*other, out, "reduce");
    fusion.other = viewOf(*other);
  }
  fusion.divisor = divisor;
  fusion.sqrt = sqrt;
  reduceOnDevice("reduce", out, input, std::vector<int>(dims.begin(), dims.end()), reduceKind,
                 fusion);
}

void gemm(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b, double alpha, double beta,
          const c10::optional<at::Tensor>& bias) {
  checkSameDevice(a, c, "gemm");
  checkSameDevice(b, c, "gemm");
  ops::TensorView biasView;
  if (bias.has_value()) {
    checkSameDevice(*bias, c, "gemm");
    biasView = viewOf(*bias);
  }
  onDevice("gemm", [&] {
    ops::gemm(launchContextOf(c), viewOf(c), viewOf(a), viewOf(b), alpha, beta,
              bias.has_value() ? &biasView : nullptr);
  });
}

// c = program(alpha a @ b + beta bias, inputs..., scalars) in one launch (ops::GemmEpilogue):
// views of rank 3 or 4, as ops::gemm takes them.
void gemmEpilogue(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                  const c10::optional<at::Tensor>& bias, double alpha, double beta,
                  c10::string_view program, at::TensorList inputs,
                  at::ArrayRef<c10::Scalar> scalars) {
  checkSameDevice(a, c, "gemm_epilogue");
  checkSameDevice(b, c, "gemm_epilogue");
  ops::TensorView biasView;
  if (bias.has_value()) {
    checkSameDevice(*bias, c, "gemm_epilogue");
    biasView = viewOf(*bias);
  }
  ops::GemmEpilogue epilogue{std::string(program), viewsOf(inputs, c, "gemm_epilogue"), {}};
  for (const c10::Scalar& s : scalars) epilogue.scalars.push_back(scalarArgOf(s));
  onDevice("gemm_epilogue", [&] {
    ops::gemm(launchContextOf(c), viewOf(c), viewOf(a), viewOf(b), alpha, beta,
              bias.has_value() ? &biasView : nullptr, &epilogue);
  });
}

// An absent optional tensor is a view without data, which the row ops skip.
ops::TensorView optionalView(const c10::optional<at::Tensor>& t, const at::Tensor& reference,
                             const char* op) {
  if (!t.has_value()) return {};
  checkSameDevice(*t, reference, op);
  return viewOf(*t);
}

void softmax(const at::Tensor& out, const at::Tensor& input, bool log) {
  checkSameDevice(input, out, "softmax");
  onDevice("softmax", [&] { ops::softmax(launchContextOf(out), viewOf(out), viewOf(input), log); });
}

void softmaxBackward(const at::Tensor& gradInput, const at::Tensor& gradOutput,
                     const at::Tensor& output, bool log) {
  checkSameDevice(gradOutput, gradInput, "softmax_backward");
  checkSameDevice(output, gradInput, "softmax_backward");
  onDevice("softmax_backward", [&] {
    ops::softmaxBackward(launchContextOf(gradInput), viewOf(gradInput), viewOf(gradOutput),
                         viewOf(output), log);
  });
}

void layerNorm(const at::Tensor& out, const at::Tensor& mean, const at::Tensor& rstd,
               const at::Tensor& input, const c10::optional<at::Tensor>& weight,
               const c10::optional<at::Tensor>& bias, double eps) {
  for (const at::Tensor* t : {&mean, &rstd, &input}) checkSameDevice(*t, out, "layer_norm");
  onDevice("layer_norm", [&] {
    ops::layerNorm(launchContextOf(out), viewOf(out), viewOf(mean), viewOf(rstd), viewOf(input),
                   optionalView(weight, out, "layer_norm"), optionalView(bias, out, "layer_norm"),
                   eps);
  });
}

// layer_norm of x = input + residual (times mask / scale with a dropout mask), x written to
// `sum` (the add before a transformer's layer norm, in the same launch).
void layerNormResidual(const at::Tensor& out, const at::Tensor& mean, const at::Tensor& rstd,
                       const at::Tensor& sum, const at::Tensor& input, const at::Tensor& residual,
                       const c10::optional<at::Tensor>& weight,
                       const c10::optional<at::Tensor>& bias, double eps,
                       const c10::optional<at::Tensor>& mask, double scale) {
  const char* op = "layer_norm_residual";
  for (const at::Tensor* t : {&mean, &rstd, &sum, &input, &residual}) {
    checkSameDevice(*t, out, op);
  }
  onDevice(op, [&] {
    ops::layerNorm(launchContextOf(out), viewOf(out), viewOf(mean), viewOf(rstd), viewOf(input),
                   optionalView(weight, out, op), optionalView(bias, out, op), eps,
                   viewOf(residual), viewOf(sum), optionalView(mask, out, op), scale);
  });
}

// Workspaces come from the caching allocator on the current stream and are released when the
// call returns: the stream orders their reuse after the kernels.
void layerNormBackward(const c10::optional<at::Tensor>& gradInput,
                       const c10::optional<at::Tensor>& gradWeight,
                       const c10::optional<at::Tensor>& gradBias, const at::Tensor& gradOut,
                       const at::Tensor& input, const at::Tensor& mean, const at::Tensor& rstd,
                       const c10::optional<at::Tensor>& weight) {
  const char* op = "layer_norm_backward";
  for (const at::Tensor* t : {&gradOut, &mean, &rstd}) checkSameDevice(*t, input, op);
  std::vector<at::Tensor> workspaces;
  const ops::Workspace allocate = [&](size_t bytes) {
    workspaces.push_back(emptyOnDevice({static_cast<int64_t>(bytes)}, at::kByte, input.device()));
    return workspaces.back().data_ptr();
  };
  // Views of one tensor lie in one allocation: one reduction may store both sums.
  const bool oneAllocation =
      gradWeight.has_value() && gradBias.has_value() && gradWeight->is_alias_of(*gradBias);
  onDevice(op, [&] {
    ops::layerNormBackward(launchContextOf(input), optionalView(gradInput, input, op),
                           optionalView(gradWeight, input, op), optionalView(gradBias, input, op),
                           viewOf(gradOut), viewOf(input), viewOf(mean), viewOf(rstd),
                           optionalView(weight, input, op), allocate, oneAllocation);
  });
}

void indexSelect(const at::Tensor& out, const at::Tensor& input, int64_t dim,
                 const at::Tensor& index) {
  checkSameDevice(input, out, "index_select");
  checkSameDevice(index, out, "index_select");
  onDevice("index_select", [&] {
    ops::indexSelect(launchContextOf(out), viewOf(out), viewOf(input), static_cast<int>(dim),
                     viewOf(index));
  });
}

void gather(const at::Tensor& out, const at::Tensor& input, int64_t dim, const at::Tensor& index) {
  checkSameDevice(input, out, "gather");
  checkSameDevice(index, out, "gather");
  onDevice("gather", [&] {
    ops::gather(launchContextOf(out), viewOf(out), viewOf(input), static_cast<int>(dim),
                viewOf(index));
  });
}

void scatter(const at::Tensor& self, int64_t dim, const at::Tensor& index, const at::Tensor& src,
             bool accumulate) {
  checkSameDevice(index, self, "scatter");
  checkSameDevice(src, self, "scatter");
  onDevice("scatter", [&] {
    ops::scatter(launchContextOf(self), viewOf(self), static_cast<int>(dim), viewOf(index),
                 viewOf(src), accumulate);
  });
}

void indexAdd(const at::Tensor& self, int64_t dim, const at::Tensor& index,
              const at::Tensor& source, double alpha) {
  checkSameDevice(index, self, "index_add");
  checkSameDevice(source, self, "index_add");
  onDevice("index_add", [&] {
    ops::indexAdd(launchContextOf(self), viewOf(self), static_cast<int>(dim), viewOf(index),
                  viewOf(source), alpha);
  });
}

void indexPut(const at::Tensor& self, at::TensorList indices, const at::Tensor& values,
              bool accumulate) {
  checkSameDevice(values, self, "index_put");
  onDevice("index_put", [&] {
    ops::indexPut(launchContextOf(self), viewOf(self), viewsOf(indices, self, "index_put"),
                  viewOf(values), accumulate);
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def(
      "elementwise(Tensor(a!) out, Tensor[] inputs, str program, ScalarType compute, "
      "Scalar[] scalars, int seed=0, int offset=0) -> ()",
      elementwise);
  m.def(
      "reduce(Tensor(a!) out, Tensor input, int[] dims, str kind, str map=\"\", "
      "Tensor? other=None, float divisor=1., bool sqrt=False) -> ()",
      reduce);
  m.def("reduce_maps() -> str[]", reduceMaps);
  m.def("gemm(Tensor(a!) c, Tensor a, Tensor b, float alpha, float beta, Tensor? bias=None) -> ()",
        gemm);
  m.def(
      "gemm_epilogue(Tensor(a!) c, Tensor a, Tensor b, Tensor? bias, float alpha, float beta, "
      "str program, Tensor[] inputs, Scalar[] scalars) -> ()",
      gemmEpilogue);
  m.def("softmax(Tensor(a!) out, Tensor input, bool log) -> ()", softmax);
  m.def(
      "softmax_backward(Tensor(a!) grad_input, Tensor grad_output, Tensor output, bool log) -> ()",
      softmaxBackward);
  m.def(
      "layer_norm(Tensor(a!) out, Tensor(b!) mean, Tensor(c!) rstd, Tensor input, Tensor? weight, "
      "Tensor? bias, float eps) -> ()",
      layerNorm);
  m.def(
      "layer_norm_residual(Tensor(a!) out, Tensor(b!) mean, Tensor(c!) rstd, Tensor(d!) sum, "
      "Tensor input, Tensor residual, Tensor? weight, Tensor? bias, float eps, Tensor? mask=None, "
      "float scale=1.) -> ()",
      layerNormResidual);
  m.def(
      "layer_norm_backward(Tensor(a!)? grad_input, Tensor(b!)? grad_weight, Tensor(c!)? grad_bias, "
      "Tensor grad_out, Tensor input, Tensor mean, Tensor rstd, Tensor? weight) -> ()",
      layerNormBackward);
  m.def("index_select(Tensor(a!) out, Tensor input, int dim, Tensor index) -> ()", indexSelect);
  m.def("gather(Tensor(a!) out, Tensor input, int dim, Tensor index) -> ()", gather);
  m.def("scatter(Tensor(a!) self, int dim, Tensor index, Tensor src, bool accumulate) -> ()",
        scatter);
  m.def("index_add(Tensor(a!) self, int dim, Tensor index, Tensor source, float alpha) -> ()",
        indexAdd);
  m.def("index_put(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate) -> ()",
        indexPut);
}

}  // namespace mimic::torch_backend
