#include "torch_backend/aten/reduction_kernel.h"

#include <ATen/native/Resize.h>

#include <algorithm>
#include <stdexcept>

#include "mimic/mimic.hpp"
#include "torch_backend/aten/complex_reduction.h"
#include "torch_backend/aten/device_call.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/reduce.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

bool isDimType(const c10::TypePtr& type) {
  const std::string text = type->str();
  return text == "int" || text == "int[]" || text == "int?" || text == "int[]?";
}

// The reduced dims, sorted and unique, as PyTorch wraps and checks them; none or an empty list
// reduces them all.
std::vector<int> reducedDims(const at::Tensor& self, const c10::IValue* dim) {
  std::vector<int64_t> given;
  if (dim && dim->isInt()) given.push_back(dim->toInt());
  if (dim && dim->isIntList()) given = dim->toIntVector();
  std::vector<int> dims;
  if (given.empty()) {
    for (int d = 0; d < self.dim(); ++d) dims.push_back(d);
    return dims;
  }
  const int64_t rank = std::max<int64_t>(self.dim(), 1);
  for (int64_t d : given) {
    const int64_t wrapped = d < 0 ? d + rank : d;
    TORCH_CHECK_INDEX(wrapped >= 0 && wrapped < rank, "Dimension out of range (expected to be in ",
                      "range of [", -rank, ", ", rank - 1, "], but got ", d, ")");
    if (wrapped < self.dim()) dims.push_back(static_cast<int>(wrapped));
  }
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  return dims;
}

at::ScalarType resultTypeOf(const ReductionOp& op, const at::Tensor& self,
                            c10::optional<at::ScalarType> dtype) {
  const at::ScalarType input = self.scalar_type();
  switch (op.result) {
    case ReductionResult::Accumulated:
      if (dtype) return *dtype;
      return c10::isIntegralType(input, /*includeBool=*/true) ? at::kLong : input;
    case ReductionResult::Float: {
      const at::ScalarType type = dtype.value_or(input);
      TORCH_CHECK(c10::isFloatingType(type) || c10::isComplexType(type) || type == at::kDouble,
                  op.name, "(): could not infer output dtype. Input dtype must be either a ",
                  "floating point or complex dtype. Got: ", c10::toString(type));
      return type;
    }
    case ReductionResult::Input:
      return input;
    case ReductionResult::Index:
      return at::kLong;
    case ReductionResult::Flag:
      return input == at::kByte ? at::kByte : at::kBool;
  }
  return input;
}

// x != 0 as uint8 flags, in the input's shape.
at::Tensor flagsOf(const at::Tensor& self, const std::string& name) {
  at::Tensor flags = emptyOnDevice(self.sizes(), at::kByte, self.device());
  if (flags.numel() == 0) return flags;
  isa::DType compute;
  const at::ScalarType type = self.scalar_type();
  isaDTypeOf(type == at::kHalf || type == at::kBFloat16 ? at::kFloat : type, &compute);
  onDevice(name, [&] {
    ops::elementwise(launchContextOf(flags), viewOf(flags), {viewOf(self)}, "x0 0 ne", compute, {});
  });
  return flags;
}

}  // namespace

std::unique_ptr<ReductionKernel> ReductionKernel::forSchema(const c10::FunctionSchema& schema) {
  const std::string& qualified = schema.name();
  if (qualified.rfind("aten::", 0) != 0) return nullptr;
  const ReductionOp* op = findReductionOp(std::string_view(qualified).substr(6));
  if (!op) return nullptr;
  const std::string overload =
      qualified.substr(6) + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
  std::unique_ptr<ReductionKernel> kernel(new ReductionKernel(*op, "aten::" + overload));
  const auto& arguments = schema.arguments();
  if (arguments.empty() || arguments[0].name() != "self") return nullptr;
  for (size_t i = 1; i < arguments.size(); ++i) {
    const c10::Argument& argument = arguments[i];
    const int position = static_cast<int>(i);
    if (argument.is_out()) {
      kernel->outs_.push_back(position);
    } else if (argument.name() == "dim" && isDimType(argument.type())) {
      kernel->dim_ = position;
    } else if (argument.name() == "keepdim") {
      kernel->keepdim_ = position;
    } else if (argument.name() == "dtype") {
      kernel->dtype_ = position;
    } else {
      return nullptr;
    }
  }
  // Indices come with dims: max(self) is the value alone, max.dim the values and indices.
  kernel->results_ = !op->indices.empty() && kernel->dim_ >= 0 ? 2 : 1;
  const size_t returns = schema.returns().size();
  if (returns != kernel->results_ || (!kernel->outs_.empty() && kernel->outs_.size() != returns)) {
    return nullptr;
  }
  return kernel;
}

void ReductionKernel::operator()(const c10::OperatorHandle& handle, c10::DispatchKeySet,
                                 torch::jit::Stack* stack) {
  const size_t count = handle.schema().arguments().size();
  const c10::IValue* args = stack->data() + (stack->size() - count);
  const at::Tensor& self = args[0].toTensor();
  const c10::IValue* dim = dim_ >= 0 && !args[dim_].isNone() ? &args[dim_] : nullptr;
  const bool keepdim = keepdim_ >= 0 && args[keepdim_].toBool();
  const c10::optional<at::ScalarType> dtype =
      dtype_ >= 0 && !args[dtype_].isNone()
          ? c10::optional<at::ScalarType>(args[dtype_].toScalarType())
          : c10::nullopt;

  if (self.is_complex() && results_ == 1) {
    at::Tensor complexResult;
    if (complexReduction(name_, op_, self, reducedDims(self, dim), keepdim, dtype,
                         outs_.empty() ? nullptr : &args[outs_[0]].toTensor(), &complexResult)) {
      torch::jit::drop(*stack, count);
      torch::jit::push(*stack, std::move(complexResult));
      return;
    }
  }
  const at::ScalarType result = resultTypeOf(op_, self, dtype);
  bool native = deviceComputes(self.scalar_type()) && deviceComputes(result);
  for (int out : outs_) native = native && deviceComputes(args[out].toTensor().scalar_type());
  if (!native) return cpuFallback(handle, stack);

  // argmax(dim=None) indexes the flattened input.
  const bool flatten = op_.result == ReductionResult::Index && !dim;
  at::Tensor input = flatten ? self.reshape({-1}) : self;
  std::vector<int> dims = reducedDims(input, dim);

  const bool needsElements = op_.reduce != "sum" && op_.reduce != "prod" && op_.prologue.empty();
  if (needsElements && input.numel() == 0) {
    // PyTorch raises IndexError for named dims (and argmax), RuntimeError when none were given.
    const bool dimsGiven = flatten || (dim && !(dim->isIntList() && dim->toIntList().empty()));
    bool empty = !dimsGiven;
    for (int d : dims) empty = empty || input.size(d) == 0;
    const std::string message = std::string(op_.name) +
                                "(): Expected reduction dim to be specified for input.numel() "
                                "== 0. Specify the reduction dim with the 'dim' argument.";
    TORCH_CHECK(dimsGiven || !empty, message);
    TORCH_CHECK_INDEX(!empty, message);
  }
  if (op_.result == ReductionResult::Accumulated && dtype && *dtype != self.scalar_type()) {
    input = input.to(*dtype);
  }

  std::vector<int64_t> kept = input.sizes().vec();
  for (int d : dims) kept[d] = 1;
  std::vector<int64_t> final;
  for (int64_t d = 0; d < input.dim(); ++d) {
    if (!std::binary_search(dims.begin(), dims.end(), static_cast<int>(d))) {
      final.push_back(input.size(d));
    }
  }
  if (flatten && keepdim) final.assign(self.dim(), 1);

  auto reduceInto = [&](std::string_view kind, at::ScalarType type, const at::Tensor& from) {
    at::Tensor out = emptyOnDevice(kept, type, input.device());
    if (out.numel() == 0) return out;
    if (from.numel() == 0 && !op_.prologue.empty()) {
      return out.fill_(op_.reduce == "min" ? 1 : 0);  // all() of nothing is true, any() false
    }
    ops::ReduceFusion fusion;
    // A bool holding a byte other than 0 or 1 counts as true, as the CPU's loads read it.
    if (from.scalar_type() == at::kBool && kind != "argmax" && kind != "argmin") {
      fusion.map = ops::ReduceMap::NonZero;
    }
    if (op_.mean) {
      int64_t elements = 1;
      for (int d : dims) elements *= from.size(d);
      fusion.divisor = static_cast<double>(elements);
    }
    reduceOnDevice(name_, out, from, dims, reduceKindOf(kind), fusion);
    return out;
  };
  at::Tensor values;
  if (op_.prologue.empty()) {
    values = reduceInto(op_.reduce, result, input);
  } else {
    values = reduceInto(op_.reduce, at::kByte, flagsOf(input, name_));
    if (result == at::kBool) values = values.view(at::kBool);
  }
  std::vector<at::Tensor> results{values};
  if (results_ == 2) results.push_back(reduceInto(op_.indices, at::kLong, input));
  for (at::Tensor& r : results) {
    if (!keepdim || flatten) r = r.view(final);
  }
  for (size_t i = 0; i < outs_.size(); ++i) {
    at::Tensor out = args[outs_[i]].toTensor();
    at::native::resize_output(out, results[i].sizes());
    out.copy_(results[i]);
    results[i] = std::move(out);
  }
  torch::jit::drop(*stack, count);
  for (at::Tensor& r : results) torch::jit::push(*stack, std::move(r));
}

}  // namespace mimic::torch_backend::aten
