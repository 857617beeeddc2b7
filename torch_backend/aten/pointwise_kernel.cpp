#include "torch_backend/aten/pointwise_kernel.h"

#include <algorithm>

#include <ATen/ExpandUtils.h>
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/native/Resize.h>
#include <ATen/native/TypeProperties.h>

#include "torch_backend/aten/complex_pointwise.h"
#include "torch_backend/aten/device_call.h"
#include "torch_backend/ops/elementwise.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

// Results take TensorIterator's layout: a channels_last or otherwise permuted input gives the
// output its order of dims, as on the CPU. Inputs with row-major strides give a row-major one.
bool rowMajor(c10::ArrayRef<const at::Tensor*> tensors) {
  return std::all_of(tensors.begin(), tensors.end(), [](const at::Tensor* t) {
    return t->strides() == at::IntArrayRef(c10::contiguous_strides(t->sizes()));
  });
}

// TensorIterator lays out (allocates, or resizes) the output: an undefined one is allocated.
at::TensorIterator layOut(const at::Tensor& out, c10::ArrayRef<const at::Tensor*> tensors,
                          at::ScalarType dtype, at::Device device) {
  at::TensorIteratorConfig config;
  config.set_check_mem_overlap(false).check_all_same_dtype(false);
  config.declare_static_dtype_and_device(dtype, device);
  if (out.defined()) {
    config.add_output(out);
  } else {
    config.add_owned_output(at::Tensor());
  }
  for (const at::Tensor* t : tensors) config.add_input(*t);
  return config.build();
}

at::Tensor allocateResult(c10::ArrayRef<const at::Tensor*> tensors, at::IntArrayRef shape,
                          at::ScalarType dtype, at::Device device) {
  if (rowMajor(tensors)) return emptyOnDevice(shape, dtype, device);
  return layOut(at::Tensor(), tensors, dtype, device).output();
}

// An out= tensor of another shape is resized (with PyTorch's warning when it held elements) to
// the layout a new result would have.
void resizeOut(const at::Tensor& out, c10::ArrayRef<const at::Tensor*> tensors,
               at::IntArrayRef shape) {
  if (out.sizes() == shape || rowMajor(tensors)) {
    at::native::resize_output(out, shape);
    return;
  }
  layOut(out, tensors, out.scalar_type(), out.device());
}

std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const size_t space = text.find(' ');
    out.push_back(text.substr(0, space));
    if (space == std::string_view::npos) break;
    text.remove_prefix(space + 1);
  }
  return out;
}

// The template with {i} replaced by operand i's token: tensors are x0, x1, ... and scalars s0,
// s1, ... in operand order, as `scalarOperands` (bit i: operand i is a scalar) says.
// Bool tensor operands (bit i of `flagOperands`) read as `x != 0`.
std::string instantiate(std::string_view program, size_t operands, unsigned scalarOperands,
                        unsigned flagOperands = 0) {
  std::vector<std::string> tokens;
  int tensors = 0, scalars = 0;
  for (size_t i = 0; i < operands; ++i) {
    tokens.push_back(scalarOperands >> i & 1u ? "s" + std::to_string(scalars++)
                                              : "x" + std::to_string(tensors++));
    if (flagOperands >> i & 1u) tokens.back() += " 0 ne";
  }
  std::string text;
  for (size_t i = 0; i < program.size(); ++i) {
    if (program[i] != '{') {
      text += program[i];
      continue;
    }
    const size_t close = program.find('}', i);
    text += tokens.at(std::stoul(std::string(program.substr(i + 1, close - i - 1))));
    i = close;
  }
  return text;
}

bool isBool(const c10::IValue& value) {
  return value.isTensor() ? value.toTensor().scalar_type() == at::kBool
                          : value.isScalar() && value.toScalar().isBoolean();
}

// PyTorch's sub_check.
void checkSubtraction(const c10::IValue& self, const c10::IValue& other) {
  TORCH_CHECK(!(isBool(self) && isBool(other)),
              "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` "
              "or `logical_xor()` operator instead.");
  TORCH_CHECK(!isBool(self) && !isBool(other),
              "Subtraction, the `-` operator, with a bool tensor is not supported. If you are "
              "trying to invert a mask, use the `~` or `logical_not()` operator instead.");
}

// lerp's meta functions: no promotion, end and a tensor weight must have self's dtype.
void checkInterpolation(const c10::IValue* args) {
  const at::Tensor& self = args[0].toTensor();
  const at::Tensor& end = args[1].toTensor();
  TORCH_CHECK(self.dtype() == end.dtype(), "expected dtype ", self.dtype(),
              " for `end` but got dtype ", end.dtype());
  if (!args[2].isTensor()) return;
  const at::Tensor& weight = args[2].toTensor();
  TORCH_CHECK(self.dtype() == weight.dtype(), "expected dtype ", self.dtype(),
              " for `weight` but got dtype ", weight.dtype());
}

// PyTorch's alpha check of add and sub, against the result dtype.
void checkAlpha(const c10::IValue& alpha, at::ScalarType result) {
  if (!alpha.isScalar()) return;
  const c10::Scalar value = alpha.toScalar();
  TORCH_CHECK(!value.isBoolean() || result == at::kBool,
              "Boolean alpha only supported for Boolean results.");
  TORCH_CHECK(c10::isFloatingType(result) || c10::isComplexType(result) ||
                  value.isIntegral(/*includeBool=*/true),
              "For integral input tensors, argument alpha must not be a floating point number.");
  TORCH_CHECK(c10::isComplexType(result) || !value.isComplex(),
              "For non-complex input tensors, argument alpha must not be a complex number.");
}

// The type a program computes in: float32 for the half types (PyTorch's opmath), uint8 for
// bool; false for types the device does not compute in.
bool computeTypeOf(at::ScalarType type, isa::DType* out) {
  if (type == at::kHalf || type == at::kBFloat16) type = at::kFloat;
  return isaDTypeOf(type, out);
}

}  // namespace

std::unique_ptr<PointwiseKernel> PointwiseKernel::forSchema(const c10::FunctionSchema& schema) {
  const std::string& qualified = schema.name();
  if (qualified.rfind("aten::", 0) != 0) return nullptr;
  std::string op = qualified.substr(6);
  const std::string overload =
      schema.overload_name().empty() ? op : op + "." + schema.overload_name();
  if (servedFromPython(overload)) return nullptr;
  const auto& arguments = schema.arguments();
  if (schema.returns().size() != 1 ||
      !schema.returns()[0].type()->isSubtypeOf(*c10::TensorType::get())) {
    return nullptr;
  }
  int outArgument = -1;
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (!arguments[i].is_out()) continue;
    if (outArgument >= 0) return nullptr;  // several outputs
    outArgument = static_cast<int>(i);
  }
  const bool inPlace = outArgument < 0 && !arguments.empty() && arguments[0].alias_info() &&
                       arguments[0].alias_info()->isWrite();
  if (inPlace && op.back() == '_') op.pop_back();

  std::vector<const PointwiseOp*> entries;
  for (const PointwiseOp& entry : pointwiseOps()) {
    if (entry.name == op) entries.push_back(&entry);
  }
  if (entries.empty()) return nullptr;

  auto position = [&](std::string_view name) {
    for (size_t i = 0; i < arguments.size(); ++i) {
      if (arguments[i].name() == name) return static_cast<int>(i);
    }
    return -1;
  };
  // Every argument must mean something to the table or the rule, or the overload is another op.
  const VariantRule& rule = variantRuleOf(op);
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& name = arguments[i].name();
    bool known = static_cast<int>(i) == outArgument;
    for (std::string_view ruled : rule.arguments) known = known || ruled == name;
    for (const PointwiseOp* entry : entries) {
      for (std::string_view operand : words(entry->operands)) known = known || operand == name;
    }
    if (!known) return nullptr;
  }
  std::vector<int> ruleArguments;
  for (std::string_view name : rule.arguments) ruleArguments.push_back(position(name));

  const Output output = outArgument >= 0 ? Output::Out
                        : inPlace        ? Output::InPlace
                                         : Output::Functional;
  std::unique_ptr<PointwiseKernel> kernel(new PointwiseKernel(
      "aten::" + overload, rule, std::move(ruleArguments), output, outArgument));
  for (const PointwiseOp* entry : entries) {
    Program program;
    program.op = entry;
    bool complete = true;
    for (std::string_view operand : words(entry->operands)) {
      program.operands.push_back(position(operand));
      complete = complete && program.operands.back() >= 0;
    }
    if (!complete) continue;  // a variant this overload cannot select
    for (std::string_view operand :
         words(entry->promoted.empty() ? entry->operands : entry->promoted)) {
      program.promoted.push_back(position(operand));
    }
    const unsigned combinations = 1u << program.operands.size();
    for (unsigned scalars = 0; scalars < combinations; ++scalars) {
      program.texts.push_back(instantiate(entry->program, program.operands.size(), scalars));
    }
    kernel->programs_.push_back(std::move(program));
  }
  if (kernel->programs_.empty()) return nullptr;
  kernel->complex_ = findComplexPointwiseOp(op);
  kernel->alphaArgument_ = position("alpha");
  kernel->schemaArguments_ = arguments.size();
  kernel->subtracts_ = op == "sub" && position("self") == 0 && position("other") == 1;
  kernel->interpolates_ =
      op == "lerp" && position("self") == 0 && position("end") == 1 && position("weight") == 2;
  // As PyTorch's kernels of these ops build their TensorIterator without the overlap check:
  // writing one value to elements that share memory gives the same result in any order.
  if (op == "leaky_relu_backward") {
    kernel->slopeArgument_ = position("negative_slope");
    kernel->selfIsResultArgument_ = position("self_is_result");
  }
  kernel->checksOverlap_ = output != Output::Functional && op != "fill" && op != "zero" &&
                           op != "masked_fill" && op != "threshold";
  return kernel;
}

PointwiseKernel::PointwiseKernel(std::string name, const VariantRule& rule,
                                 std::vector<int> ruleArguments, Output output, int outArgument)
    : name_(std::move(name)),
      rule_(rule),
      ruleArguments_(std::move(ruleArguments)),
      output_(output),
      outArgument_(outArgument) {}

const PointwiseKernel::Program* PointwiseKernel::programFor(std::string_view variant) const {
  for (const Program& program : programs_) {
    if (program.op->variant == variant) return &program;
  }
  return nullptr;
}

void PointwiseKernel::checkArguments(const c10::IValue* args) const {
  if (subtracts_) checkSubtraction(args[0], args[1]);
  if (interpolates_) checkInterpolation(args);
  // The input of an in-place forward with a negative slope was overwritten, and its sign no
  // longer tells the branch.
  TORCH_CHECK(slopeArgument_ < 0 || selfIsResultArgument_ < 0 ||
                  !args[selfIsResultArgument_].toBool() ||
                  args[slopeArgument_].toScalar().toDouble() >= 0.0,
              "In-place leakyReLu backward calculation is triggered with a negative slope which is "
              "not supported. This is caused by calling in-place forward function with a negative "
              "slope, please call out-of-place version instead. File an issue at "
              "https://github.com/pytorch/pytorch if you do require supporting in-place leakRelu "
              "backward calculation with negative slope");
  if (!checksOverlap_) return;
  // TensorIterator's memory-overlap checks, which the CPU's and CUDA's kernels run: an output
  // whose elements share memory (an expanded tensor), or one that an input partly overlaps,
  // would be written in an order-dependent way.
  const at::Tensor& target =
      output_ == Output::InPlace ? args[0].toTensor() : args[outArgument_].toTensor();
  at::assert_no_internal_overlap(target);
  for (const c10::IValue& value : c10::ArrayRef<c10::IValue>(args, schemaArguments_)) {
    if (value.isTensor() && value.toTensor().defined() && !value.toTensor().is_same(target)) {
      at::assert_no_partial_overlap(target, value.toTensor());
    }
  }
}

bool PointwiseKernel::prepare(const c10::IValue* args, PointwiseLaunch* launch) const {
  checkArguments(args);
  const c10::IValue* ruleValues[4] = {};
  for (size_t i = 0; i < ruleArguments_.size(); ++i) {
    ruleValues[i] = ruleArguments_[i] < 0 ? nullptr : &args[ruleArguments_[i]];
  }
  const std::string_view variant = rule_.choose(ruleValues);
  const Program* program = programFor(variant);
  TORCH_CHECK(program, "mimic: ", name_, " has no program for its variant '", std::string(variant),
              "'");

  // Device tensors are inputs; numbers and CPU 0-dim tensors are scalar kernel arguments.
  c10::SmallVector<const at::Tensor*, 4> tensors;
  unsigned scalarOperands = 0;
  for (size_t i = 0; i < program->operands.size(); ++i) {
    const c10::IValue& value = args[program->operands[i]];
    if (value.isTensor() && value.toTensor().device().type() == kDeviceType) {
      const at::Tensor& t = value.toTensor();
      TORCH_CHECK(tensors.empty() || t.device() == tensors[0]->device(),
                  "Expected all tensors to be on the same device, but found at least two devices, ",
                  tensors[0]->device(), " and ", t.device(), "! (in ", name_, ")");
      tensors.push_back(&t);
      continue;
    }
    c10::Scalar scalar;
    if (value.isTensor()) {
      const at::Tensor& t = value.toTensor();
      TORCH_CHECK(t.dim() == 0 && t.is_cpu(),
                  "Expected all tensors to be on the same device, but found at least two devices, ",
                  kDeviceType, " and ", t.device(), "! (in ", name_, ")");
      scalar = t.item();
    } else {
      scalar = value.toScalar();
    }
    if (scalar.isComplex()) return false;
    launch->scalars.push_back(scalarArgOf(scalar));
    scalarOperands |= 1u << i;
  }
  const at::Tensor* outArgument = outArgument_ >= 0 ? &args[outArgument_].toTensor() : nullptr;
  if (tensors.empty() && !outArgument) return false;

  at::native::ResultTypeState state;
  for (int p : program->promoted) {
    state = args[p].isTensor() ? at::native::update_result_type_state(args[p].toTensor(), state)
                               : at::native::update_result_type_state(args[p].toScalar(), state);
  }
  const at::ScalarType promoted = at::native::result_type(state);
  at::ScalarType result = promoted;
  switch (program->op->result) {
    case ResultType::Promoted:
      break;
    case ResultType::PromotedFloat:
      if (c10::isIntegralType(promoted, /*includeBool=*/true))
        result = c10::typeMetaToScalarType(c10::get_default_dtype());
      break;
    case ResultType::Bool:
      result = at::kBool;
      break;
    case ResultType::FirstOperand:
      result = args[program->operands[0]].toTensor().scalar_type();
      break;
  }
  if (alphaArgument_ >= 0) checkAlpha(args[alphaArgument_], result);
  at::ScalarType computeScalarType = result;
  if (program->op->compute == ComputeType::Promoted) computeScalarType = promoted;
  if (program->op->compute == ComputeType::PromotedFloat) {
    computeScalarType = c10::isFloatingType(promoted) ? promoted : at::kFloat;
  }
  isa::DType compute;
  bool native = computeTypeOf(computeScalarType, &compute) && deviceComputes(result);
  for (const at::Tensor* t : tensors) native = native && deviceComputes(t->scalar_type());
  if (!native) return false;

  at::DimVector shape;
  if (!tensors.empty()) shape.assign(tensors[0]->sizes().begin(), tensors[0]->sizes().end());
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (tensors[i]->sizes() != at::IntArrayRef(shape)) {
      shape = at::infer_size_dimvector(shape, tensors[i]->sizes());
    }
  }

  at::Tensor target;
  if (output_ == Output::Functional) {
    target = allocateResult(tensors, shape, result, tensors[0]->device());
  } else {
    target = output_ == Output::InPlace ? args[0].toTensor() : *outArgument;
    TORCH_CHECK(target.device().type() == kDeviceType &&
                    (tensors.empty() || target.device() == tensors[0]->device()),
                "Expected all tensors to be on the same device, but found ", target.device(),
                " for the output of ", name_);
    TORCH_CHECK(c10::canCast(result, target.scalar_type()), "result type ", result,
                " can't be cast to the desired output type ", target.scalar_type());
    if (!deviceComputes(target.scalar_type())) return false;
    if (output_ == Output::InPlace) {
      TORCH_CHECK(target.sizes() == at::IntArrayRef(shape), "output with shape ",
                  shapeText(target.sizes()), " doesn't match the broadcast shape ",
                  shapeText(shape));
    } else {
      resizeOut(target, tensors, shape);
    }
  }

  launch->inputs.clear();
  for (const at::Tensor* t : tensors) {
    launch->inputs.push_back(viewOf(*t));
    if (t->sizes() != at::IntArrayRef(shape)) expandTo(launch->inputs.back(), shape);
  }
  launch->target = std::move(target);
  unsigned flagOperands = 0;
  for (size_t i = 0; i < program->operands.size(); ++i) {
    const c10::IValue& value = args[program->operands[i]];
    if (!(scalarOperands >> i & 1u) && value.toTensor().scalar_type() == at::kBool) {
      flagOperands |= 1u << i;
    }
  }
  if (flagOperands == 0) {
    launch->program = &program->texts[scalarOperands];
  } else {
    std::lock_guard<std::mutex> lock(program->flagTexts->mutex);
    auto [entry, added] =
        program->flagTexts->texts.try_emplace({scalarOperands, flagOperands}, std::string());
    if (added) {
      entry->second =
          instantiate(program->op->program, program->operands.size(), scalarOperands, flagOperands);
    }
    launch->program = &entry->second;
  }
  launch->compute = compute;
  return true;
}

void PointwiseKernel::run(const PointwiseLaunch& launch) const {
  if (launch.target.numel() == 0) return;
  onDevice(name_, [&] {
    ops::elementwise(launchContextOf(launch.target), viewOf(launch.target), launch.inputs,
                     *launch.program, launch.compute, launch.scalars);
  });
}

void PointwiseKernel::operator()(const c10::OperatorHandle& op, c10::DispatchKeySet,
                                 torch::jit::Stack* stack) {
  const size_t count = op.schema().arguments().size();
  const c10::IValue* args = stack->data() + (stack->size() - count);
  at::Tensor complexResult;
  if (complex_) checkArguments(args);
  if (complex_ && runComplexPointwise(*complex_, op.schema(), args, output_ == Output::InPlace,
                                      outArgument_, &complexResult)) {
    torch::jit::drop(*stack, count);
    torch::jit::push(*stack, std::move(complexResult));
    return;
  }
  PointwiseLaunch launch;
  if (!prepare(args, &launch)) return cpuFallback(op, stack);
  run(launch);
  torch::jit::drop(*stack, count);
  torch::jit::push(*stack, std::move(launch.target));
}

}  // namespace mimic::torch_backend::aten
