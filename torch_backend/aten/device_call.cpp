#include "torch_backend/aten/device_call.h"

#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {

ops::ReduceKind reduceKindOf(std::string_view kind) {
  static const std::pair<std::string_view, ops::ReduceKind> kKinds[] = {
      {"sum", ops::ReduceKind::Sum},       {"prod", ops::ReduceKind::Prod},
      {"max", ops::ReduceKind::Max},       {"min", ops::ReduceKind::Min},
      {"argmax", ops::ReduceKind::ArgMax}, {"argmin", ops::ReduceKind::ArgMin}};
  for (const auto& [name, value] : kKinds) {
    if (kind == name) return value;
  }
  TORCH_CHECK(false, "mimic: unknown reduction '", std::string(kind), "'");
}

void reduceOnDevice(const std::string& op, const at::Tensor& out, const at::Tensor& in,
                    const std::vector<int>& dims, ops::ReduceKind kind,
                    const ops::ReduceFusion& fusion) {
  at::Tensor workspace;
  const ops::Workspace allocate = [&](size_t bytes) {
    workspace = emptyOnDevice({static_cast<int64_t>(bytes)}, at::kByte, out.device());
    return workspace.data_ptr();
  };
  onDevice(op, [&] {
    ops::reduce(launchContextOf(out), viewOf(out), viewOf(in), dims, kind, allocate, fusion);
  });
}

}  // namespace mimic::torch_backend::aten
