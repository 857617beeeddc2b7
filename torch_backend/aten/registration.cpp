// Registers the op table's kernels and the _foreach_ ops for PrivateUse1, and exposes the table
// read-only to Python as torch.ops.mimic.op_table() (a JSON text that torch_mimic.op_table() turns
// into a mapping).
//
// Registration walks every aten overload the dispatcher knows when the library loads, so each
// leaf overload of a table op (functional, in-place, out=) gets the boxed pointwise kernel.
// Overloads with a CompositeImplicitAutograd kernel are left to it: PyTorch decomposes them
// into ops that are registered here.
#include <torch/library.h>

#include <sstream>
#include <unordered_map>

#include "torch_backend/aten/foreach_kernel.h"
#include "torch_backend/aten/op_table.h"
#include "torch_backend/aten/pointwise_kernel.h"
#include "torch_backend/aten/reduction_kernel.h"

namespace mimic::torch_backend::aten {
namespace {

std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

std::string_view resultName(ResultType type) {
  switch (type) {
    case ResultType::Promoted:
      return "promoted";
    case ResultType::PromotedFloat:
      return "promoted_float";
    case ResultType::Bool:
      return "bool";
    case ResultType::FirstOperand:
      return "first_operand";
  }
  return "";
}

std::string_view computeName(ComputeType type) {
  switch (type) {
    case ComputeType::Result:
      return "result";
    case ComputeType::Promoted:
      return "promoted";
    case ComputeType::PromotedFloat:
      return "promoted_float";
  }
  return "";
}

std::string_view reductionResultName(ReductionResult type) {
  switch (type) {
    case ReductionResult::Accumulated:
      return "accumulated";
    case ReductionResult::Float:
      return "float";
    case ReductionResult::Input:
      return "input";
    case ReductionResult::Index:
      return "index";
    case ReductionResult::Flag:
      return "flag";
  }
  return "";
}

std::string opTableJson() {
  std::ostringstream json;
  json << "[";
  const char* separator = "";
  for (const PointwiseOp& op : pointwiseOps()) {
    json << separator << "{\"name\": " << quoted(op.name) << ", \"variant\": " << quoted(op.variant)
         << ", \"kind\": \"pointwise\", \"program\": " << quoted(op.program)
         << ", \"operands\": " << quoted(op.operands)
         << ", \"promoted\": " << quoted(op.promoted.empty() ? op.operands : op.promoted)
         << ", \"result\": " << quoted(resultName(op.result))
         << ", \"compute\": " << quoted(computeName(op.compute)) << "}";
    separator = ", ";
  }
  // A reduction's program is its reduce kind; its prologue, if any, is an elementwise template.
  for (const ReductionOp& op : reductionOps()) {
    json << separator << "{\"name\": " << quoted(op.name)
         << ", \"variant\": \"\", \"kind\": \"reduction\", \"program\": " << quoted(op.reduce)
         << ", \"operands\": \"self\", \"promoted\": \"self\", \"result\": "
         << quoted(reductionResultName(op.result)) << ", \"compute\": \"result\""
         << ", \"indices\": " << quoted(op.indices) << ", \"prologue\": " << quoted(op.prologue)
         << ", \"mean\": " << (op.mean ? "true" : "false") << "}";
  }
  for (const KernelOp& op : kernelOps()) {
    json << separator << "{\"name\": " << quoted(op.name)
         << ", \"variant\": \"\", \"kind\": " << quoted(op.kind)
         << ", \"program\": " << quoted(op.kernel)
         << ", \"operands\": \"\", \"promoted\": \"\", \"result\": \"\", \"compute\": \"\", "
         << "\"note\": " << quoted(op.note) << "}";
  }
  json << "]";
  return json.str();
}

}  // namespace

// Two passes: the _foreach_ kernels take their per-tensor ops' pointwise kernels.
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  auto& dispatcher = c10::Dispatcher::singleton();
  std::vector<c10::OperatorHandle> handles;
  for (const c10::OperatorName& name : dispatcher.getAllOpNames()) {
    const auto handle = dispatcher.findSchema(name);
    if (handle && !handle->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd)) {
      handles.push_back(*handle);
    }
  }
  auto overloadOf = [](const c10::OperatorHandle& handle) {
    const c10::OperatorName& name = handle.operator_name();
    return name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
  };
  std::unordered_map<c10::OperatorName, const PointwiseKernel*> pointwise;
  for (const c10::OperatorHandle& handle : handles) {
    const std::string overload = overloadOf(handle);
    if (auto kernel = PointwiseKernel::forSchema(handle.schema())) {
      pointwise[handle.operator_name()] = kernel.get();  // the dispatcher keeps it for good
      m.impl(overload.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::move(kernel)));
    } else if (auto reduction = ReductionKernel::forSchema(handle.schema())) {
      m.impl(overload.c_str(), torch::CppFunction::makeFromBoxedFunctor(std::move(reduction)));
    }
  }
  auto pointwiseOf = [&](const c10::OperatorName& name) -> const PointwiseKernel* {
    auto found = pointwise.find(name);
    return found == pointwise.end() ? nullptr : found->second;
  };
  for (const c10::OperatorHandle& handle : handles) {
    if (auto foreach = ForeachKernel::forSchema(handle.schema(), pointwiseOf)) {
      m.impl(overloadOf(handle).c_str(),
             torch::CppFunction::makeFromBoxedFunctor(std::move(foreach)));
    }
  }
}

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("op_table() -> str", [] { return opTableJson(); });
}

}  // namespace mimic::torch_backend::aten
