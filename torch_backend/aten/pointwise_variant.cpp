#include "torch_backend/aten/pointwise_variant.h"

#include <ATen/core/Tensor.h>
#include <ATen/native/TypeProperties.h>

#include <map>
#include <string>

namespace mimic::torch_backend::aten {
namespace {

bool present(const c10::IValue* value) {
  return value && !value->isNone();
}

bool isNumber(const c10::IValue& value) {
  return value.isDouble() || value.isInt() || value.isBool();
}

bool equals(const c10::IValue& value, double number) {
  if (value.isDouble()) return value.toDouble() == number;
  if (value.isInt()) return static_cast<double>(value.toInt()) == number;
  if (value.isBool()) return (value.toBool() ? 1.0 : 0.0) == number;
  return false;
}

at::native::ResultTypeState promote(const c10::IValue& value, at::native::ResultTypeState state) {
  if (value.isTensor()) return at::native::update_result_type_state(value.toTensor(), state);
  return at::native::update_result_type_state(value.toScalar(), state);
}

std::string_view scaledByAlpha(const c10::IValue* const* values) {
  return present(values[0]) && !equals(*values[0], 1.0) ? "alpha" : "";
}

std::string_view roundingMode(const c10::IValue* const* values) {
  if (!present(values[2])) return "";
  const std::string mode = values[2]->toStringRef();
  TORCH_CHECK(mode == "trunc" || mode == "floor",
              "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '", mode,
              "'");
  const at::ScalarType type = at::native::result_type(promote(*values[1], promote(*values[0], {})));
  const bool integral = c10::isIntegralType(type, /*includeBool=*/true);
  if (mode == "floor") return integral ? "floor_integer" : "floor";
  return integral ? "trunc_integer" : "trunc";
}

std::string_view squareExponent(const c10::IValue* const* values) {
  return values[0]->isTensor() && isNumber(*values[1]) && equals(*values[1], 2.0) ? "square" : "";
}

std::string_view clampBounds(const c10::IValue* const* values) {
  const bool min = present(values[0]), max = present(values[1]);
  TORCH_CHECK(min || max, "torch.clamp: At least one of 'min' or 'max' must not be None");
  return min && max ? "min max" : min ? "min" : "max";
}

void checkZeroDimValue(const c10::IValue& value, const char* op) {
  TORCH_CHECK(!value.isTensor() || value.toTensor().dim() == 0, op,
              " only supports 0-dimension value tensor but got tensor with ",
              value.toTensor().dim(), " dimensions.");
}

std::string_view fillValue(const c10::IValue* const* values) {
  checkZeroDimValue(*values[1], "fill_");
  return values[0]->toTensor().scalar_type() == at::kBool ? "bool" : "";
}

std::string_view booleanMask(const c10::IValue* const* values) {
  const at::ScalarType mask = values[0]->toTensor().scalar_type();
  TORCH_CHECK(mask == at::kBool,
              "masked_fill_ only supports boolean masks, but got mask with dtype ", mask);
  checkZeroDimValue(*values[1], "masked_fill_");
  return "";
}

std::string_view approximation(const c10::IValue* const* values) {
  const std::string approximate = present(values[0]) ? values[0]->toStringRef() : "none";
  TORCH_CHECK(approximate == "none" || approximate == "tanh",
              "approximate argument must be either none or tanh.");
  return approximate == "tanh" ? "tanh" : "none";
}

std::string_view eluGradientFrom(const c10::IValue* const* values) {
  return values[0]->toBool() ? "result" : "input";
}

std::string_view byteComplement(const c10::IValue* const* values) {
  return values[0]->toTensor().scalar_type() == at::kByte ? "byte" : "";
}

std::string_view single(const c10::IValue* const*) {
  return "";
}

}  // namespace

const VariantRule& variantRuleOf(std::string_view op) {
  static const std::map<std::string_view, VariantRule> rules = {
      {"add", {{"alpha"}, scaledByAlpha}},
      {"sub", {{"alpha"}, scaledByAlpha}},
      {"div", {{"self", "other", "rounding_mode"}, roundingMode}},
      {"pow", {{"self", "exponent"}, squareExponent}},
      {"clamp", {{"min", "max"}, clampBounds}},
      {"fill", {{"self", "value"}, fillValue}},
      {"bitwise_not", {{"self"}, byteComplement}},
      {"masked_fill", {{"mask", "value"}, booleanMask}},
      {"gelu", {{"approximate"}, approximation}},
      {"gelu_backward", {{"approximate"}, approximation}},
      {"elu_backward", {{"is_result"}, eluGradientFrom}},
      // self_is_result only decides an error (PointwiseKernel checks it against the slope).
      {"leaky_relu_backward", {{"self_is_result"}, single}},
      // The buffer is empty: the backward recomputes from self.
      {"log_sigmoid_backward", {{"buffer"}, single}},
  };
  static const VariantRule none{{}, single};
  auto found = rules.find(op);
  return found == rules.end() ? none : found->second;
}

bool servedFromPython(std::string_view overload) {
  // 10^decimals is computed in double on the host before it becomes the kernel's scalar.
  return overload == "round.decimals" || overload == "round_.decimals" ||
         overload == "round.decimals_out";
}

}  // namespace mimic::torch_backend::aten
