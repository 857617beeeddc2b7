// Which of an op's table entries a call runs: add with alpha != 1 scales other, div follows
// its rounding_mode, clamp the bounds it was given, gelu its approximation, and so on. Each rule
// reads named schema arguments and returns the variant of op_table.h; ops without a rule have
// one entry, the variant "".
#pragma once

#include <ATen/core/ivalue.h>

#include <string_view>
#include <vector>

namespace mimic::torch_backend::aten {

struct VariantRule {
  // The schema arguments the rule reads; `values` passes them in this order, null for an
  // argument the overload does not have (add.Tensor has alpha, mul.Tensor none).
  std::vector<std::string_view> arguments;
  // The variant of the call; throws c10::Error for arguments PyTorch rejects too.
  std::string_view (*choose)(const c10::IValue* const* values) = nullptr;
};

// The rule of an aten op (table name, e.g. "div"); ops without one get a rule that picks "".
const VariantRule& variantRuleOf(std::string_view op);
// Overloads the table's rules do not serve: Python registers them over the same table entries.
bool servedFromPython(std::string_view overload);

}  // namespace mimic::torch_backend::aten
