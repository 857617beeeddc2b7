#include "torch_backend/aten/foreach_kernel.h"

#include <ATen/core/Tensor.h>
#include <torch/library.h>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

constexpr std::string_view kPrefix = "aten::_foreach_";

c10::TypePtr elementType(const c10::TypePtr& type) {
  if (auto list = type->cast<c10::ListType>()) return list->getElementType();
  return type;
}

bool isOut(const c10::Argument& argument) {
  return argument.is_out();
}

// Whether `perTensor` takes one element of each of the foreach op's `inputs` in the same
// positions, defaults for the rest, and an out= tensor exactly when the foreach op has a list.
bool matches(const c10::FunctionSchema& perTensor, const std::vector<c10::Argument>& inputs,
             bool hasOut, bool returnsTensor) {
  const auto& arguments = perTensor.arguments();
  size_t outs = 0;
  for (const auto& argument : arguments) outs += isOut(argument);
  if (outs != (hasOut ? 1u : 0u) || (hasOut && !isOut(arguments.back()))) return false;
  const size_t positional = arguments.size() - outs;
  if (positional < inputs.size()) return false;
  for (size_t j = 0; j < inputs.size(); ++j) {
    if (*elementType(inputs[j].type()) != *arguments[j].type()) return false;
  }
  for (size_t j = inputs.size(); j < positional; ++j) {
    if (!arguments[j].default_value()) return false;
  }
  if (!returnsTensor) return true;
  return perTensor.returns().size() == 1 &&
         perTensor.returns()[0].type()->isSubtypeOf(*c10::TensorType::get());
}

c10::optional<c10::OperatorHandle> findPerTensor(const std::string& name,
                                                 const std::vector<c10::Argument>& inputs,
                                                 bool hasOut, bool returnsTensor) {
  auto& dispatcher = c10::Dispatcher::singleton();
  for (const c10::OperatorName& candidate : dispatcher.getAllOpNames()) {
    if (candidate.name != name) continue;
    auto handle = dispatcher.findSchema(candidate);
    if (handle && matches(handle->schema(), inputs, hasOut, returnsTensor)) return handle;
  }
  return c10::nullopt;
}

}  // namespace

std::unique_ptr<ForeachKernel> ForeachKernel::forSchema(const c10::FunctionSchema& schema,
                                                        const PointwiseOf& pointwiseOf) {
  const std::string& qualified = schema.name();
  if (qualified.rfind(kPrefix, 0) != 0) return nullptr;
  std::string base = "aten::" + qualified.substr(kPrefix.size());
  std::vector<c10::Argument> inputs;
  std::vector<int> positions;
  int out = -1;
  for (size_t i = 0; i < schema.arguments().size(); ++i) {
    if (isOut(schema.arguments()[i])) {
      out = static_cast<int>(i);
    } else {
      inputs.push_back(schema.arguments()[i]);
      positions.push_back(static_cast<int>(i));
    }
  }
  const bool inPlace = base.back() == '_';
  const bool returnsList = !schema.returns().empty();
  auto perTensor = findPerTensor(base, inputs, out >= 0, returnsList);
  bool copyIntoSelf = false;
  if (!perTensor && inPlace) {
    base.pop_back();
    perTensor = findPerTensor(base, inputs, false, true);
    copyIntoSelf = perTensor.has_value();
  }
  if (!perTensor) return nullptr;
  const std::string overload =
      qualified.substr(6) + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
  std::unique_ptr<ForeachKernel> kernel(
      new ForeachKernel("aten::" + overload, *perTensor, copyIntoSelf));
  kernel->inputs_ = std::move(positions);
  for (const c10::Argument& input : inputs) {
    kernel->isList_.push_back(input.type()->kind() == c10::TypeKind::ListType);
  }
  kernel->out_ = out;
  kernel->returnsList_ = returnsList;
  kernel->pointwise_ = pointwiseOf(perTensor->operator_name());
  return kernel;
}

// Per-tensor calls go below autograd (a foreach op has none) and, for in-place ops, through
// their ADInplaceOrView kernel, which bumps the tensors' versions (elsewhere that key is a
// fallthrough, which must not be dispatched to directly).
ForeachKernel::ForeachKernel(std::string name, c10::OperatorHandle perTensor, bool copyIntoSelf)
    : name_(std::move(name)),
      perTensor_(std::move(perTensor)),
      copyIntoSelf_(copyIntoSelf),
      keys_(perTensor_.hasKernelForDispatchKey(c10::DispatchKey::ADInplaceOrView)
                ? c10::DispatchKeySet(
                      {c10::DispatchKey::ADInplaceOrView, c10::DispatchKey::PrivateUse1})
                : c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)) {}

void ForeachKernel::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet,
                               torch::jit::Stack* stack) {
  const size_t count = op.schema().arguments().size();
  const c10::IValue* args = stack->data() + (stack->size() - count);

  std::vector<c10::ArrayRef<c10::IValue>> lists(inputs_.size());
  size_t length = 0;
  bool first = true;
  for (size_t j = 0; j < inputs_.size(); ++j) {
    if (!isList_[j]) continue;
    lists[j] = args[inputs_[j]].toListRef();
    TORCH_CHECK(first || lists[j].size() == length,
                "Tensor lists must have the same number of tensors, got ", length, " and ",
                lists[j].size());
    length = lists[j].size();
    first = false;
  }
  TORCH_CHECK(length > 0, name_, ": Tensor list must have at least one tensor.");
  c10::ArrayRef<c10::IValue> outs;
  if (out_ >= 0) {
    outs = args[out_].toListRef();
    TORCH_CHECK(outs.size() == length, name_, ": out has ", outs.size(), " tensors for lists of ",
                length);
  }

  const auto& perTensorArguments = perTensor_.schema().arguments();
  std::vector<torch::jit::Stack> calls(length);
  for (size_t k = 0; k < length; ++k) {
    for (size_t j = 0; j < perTensorArguments.size(); ++j) {
      if (j < inputs_.size()) {
        calls[k].push_back(isList_[j] ? lists[j][k] : args[inputs_[j]]);
      } else if (perTensorArguments[j].is_out()) {
        calls[k].push_back(outs[k]);
      } else {
        calls[k].push_back(*perTensorArguments[j].default_value());
      }
    }
  }
  std::vector<at::Tensor> results;
  if (!launchAsLists(calls, &results)) {
    for (torch::jit::Stack& call : calls) {
      perTensor_.redispatchBoxed(keys_, &call);
      results.push_back(call.front().toTensor());
    }
  }
  for (size_t k = 0; k < length && copyIntoSelf_; ++k) lists[0][k].toTensor().copy_(results[k]);
  torch::jit::drop(*stack, count);
  if (returnsList_) torch::jit::push(*stack, c10::List<at::Tensor>(results));
}

bool ForeachKernel::launchAsLists(const std::vector<torch::jit::Stack>& calls,
                                  std::vector<at::Tensor>* results) const {
  if (!pointwise_) return false;
  std::vector<PointwiseLaunch> launches(calls.size());
  for (size_t k = 0; k < calls.size(); ++k) {
    if (!pointwise_->prepare(calls[k].data(), &launches[k])) return false;
  }
  auto listable = [](const PointwiseLaunch& launch) {
    if (!launch.target.is_contiguous()) return false;
    for (const ops::TensorView& input : launch.inputs) {
      if (!input.isContiguous() || input.numel() != launch.target.numel()) return false;
    }
    return true;
  };
  auto sameKernel = [](const PointwiseLaunch& a, const PointwiseLaunch& b) {
    if (a.program != b.program || a.compute != b.compute ||
        a.target.scalar_type() != b.target.scalar_type() ||
        a.target.device() != b.target.device() || a.inputs.size() != b.inputs.size() ||
        a.scalars.size() != b.scalars.size()) {
      return false;
    }
    for (size_t i = 0; i < a.inputs.size(); ++i) {
      if (a.inputs[i].dtype != b.inputs[i].dtype) return false;
    }
    for (size_t i = 0; i < a.scalars.size(); ++i) {
      const ops::ScalarArg &x = a.scalars[i], &y = b.scalars[i];
      if (x.isInteger != y.isInteger || x.integer != y.integer || x.real != y.real) return false;
    }
    return true;
  };
  for (size_t k = 0; k < launches.size();) {
    size_t end = k + 1;
    while (listable(launches[k]) && end < launches.size() && listable(launches[end]) &&
           sameKernel(launches[k], launches[end])) {
      ++end;
    }
    if (end - k == 1) {
      pointwise_->run(launches[k]);
    } else {
      std::vector<ops::TensorView> outs;
      std::vector<std::vector<ops::TensorView>> inputs;
      for (size_t j = k; j < end; ++j) {
        outs.push_back(viewOf(launches[j].target));
        inputs.push_back(launches[j].inputs);
      }
      onDevice(name_, [&] {
        ops::elementwiseList(launchContextOf(launches[k].target), outs, inputs,
                             *launches[k].program, launches[k].compute, launches[k].scalars);
      });
    }
    k = end;
  }
  for (PointwiseLaunch& launch : launches) {
    // What the per-tensor op's ADInplaceOrView kernel would have done for an in-place call.
    if (keys_.has(c10::DispatchKey::ADInplaceOrView)) {
      launch.target.unsafeGetTensorImpl()->bump_version();
    }
    results->push_back(std::move(launch.target));
  }
  return true;
}

namespace {

// torch.ops.mimic.elementwise_list: one program over a list of tensors, as the batched _foreach_
// kernels launch it, for the compiled optimiser step (torch_mimic/_compile_optimizer.py). Inputs
// are flat: out j reads inputs[j * inputs_per_out + i] as x<i>.
void elementwiseList(at::TensorList outs, at::TensorList inputs, int64_t inputsPerOut,
                     c10::string_view program, at::ScalarType compute,
                     at::ArrayRef<c10::Scalar> scalars) {
  TORCH_CHECK(!outs.empty(), "mimic: elementwise_list needs at least one output");
  TORCH_CHECK(inputsPerOut >= 0 && inputs.size() == outs.size() * size_t(inputsPerOut),
              "mimic: elementwise_list has ", inputs.size(), " inputs for ", outs.size(),
              " outputs of ", inputsPerOut, " inputs each");
  isa::DType computeType;
  TORCH_CHECK_NOT_IMPLEMENTED(isaDTypeOf(compute, &computeType),
                              "mimic: elementwise_list cannot compute in ", compute);
  std::vector<ops::TensorView> outViews;
  std::vector<std::vector<ops::TensorView>> inputViews(outs.size());
  for (size_t j = 0; j < outs.size(); ++j) {
    checkSameDevice(outs[j], outs[0], "elementwise_list");
    outViews.push_back(viewOf(outs[j]));
    for (int64_t i = 0; i < inputsPerOut; ++i) {
      const at::Tensor& input = inputs[j * inputsPerOut + i];
      checkSameDevice(input, outs[0], "elementwise_list");
      inputViews[j].push_back(viewOf(input));
    }
  }
  std::vector<ops::ScalarArg> values;
  for (const c10::Scalar& s : scalars) values.push_back(scalarArgOf(s));
  onDevice("elementwise_list", [&] {
    ops::elementwiseList(launchContextOf(outs[0]), outViews, inputViews, std::string(program),
                         computeType, values);
  });
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def(
      "elementwise_list(Tensor(a!)[] outs, Tensor[] inputs, int inputs_per_out, str program, "
      "ScalarType compute, Scalar[] scalars) -> ()",
      elementwiseList);
}

}  // namespace mimic::torch_backend::aten
