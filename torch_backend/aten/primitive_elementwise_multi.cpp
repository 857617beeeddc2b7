// torch.ops.mimic.elementwise_multi: several elementwise programs over one index space in one
// launch (ops::elementwiseMulti), for fused pointwise trees that also write values the rest of
// the graph needs (torch_mimic/_lower_pointwise.py).
#include <torch/library.h>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

void elementwiseMulti(at::TensorList outs, at::TensorList inputs, std::vector<std::string> programs,
                      at::ScalarType compute, at::ArrayRef<c10::Scalar> scalars, int64_t seed,
                      int64_t offset) {
  TORCH_CHECK(!outs.empty(), "mimic: elementwise_multi needs at least one output");
  isa::DType computeType;
  TORCH_CHECK_NOT_IMPLEMENTED(isaDTypeOf(compute, &computeType),
                              "mimic: elementwise_multi cannot compute in ", compute);
  std::vector<ops::ScalarArg> values;
  for (const c10::Scalar& s : scalars) values.push_back(scalarArgOf(s));
  std::vector<ops::TensorView> outViews, inputViews;
  for (const at::Tensor& t : outs) {
    aten::checkSameDevice(t, outs[0], "elementwise_multi");
    outViews.push_back(viewOf(t));
  }
  for (const at::Tensor& t : inputs) {
    aten::checkSameDevice(t, outs[0], "elementwise_multi");
    inputViews.push_back(viewOf(t));
  }
  aten::onDevice("elementwise_multi", [&] {
    ops::elementwiseMulti(
        launchContextOf(outs[0]), outViews, inputViews, programs, computeType, values,
        ops::RandomKey{static_cast<uint64_t>(seed), static_cast<uint64_t>(offset)});
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def(
      "elementwise_multi(Tensor(a!)[] outs, Tensor[] inputs, str[] programs, ScalarType compute, "
      "Scalar[] scalars, int seed=0, int offset=0) -> ()",
      elementwiseMulti);
}

}  // namespace mimic::torch_backend
