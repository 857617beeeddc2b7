// torch.ops.mimic.sort and sort_capacity: the device sort (ops/sort.h) for the sort family of
// aten ops in Python (torch_mimic/ops_sort.py, ops_unique.py). Rows are the 2-D [R, N] views
// the op kernel takes, of any length; either output may be absent. sort_capacity is the longest
// row one launch sorts.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/sort.h"
#include "torch_backend/src/aten_core.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

ops::TensorView optionalOutput(const c10::optional<at::Tensor>& t, const at::Tensor& input) {
  if (!t.has_value()) return {};
  aten::checkSameDevice(*t, input, "sort");
  return viewOf(*t);
}

// A long rows' workspace comes from the caching allocator on the current stream and is released
// when the call returns: the stream orders its reuse after the kernels.
void sort(const c10::optional<at::Tensor>& values, const c10::optional<at::Tensor>& indices,
          const at::Tensor& input, bool descending) {
  // Fake mode decomposes the catch-all kernel onto tensors without storage: shapes only.
  if (input.numel() > 0 && input.data_ptr() == nullptr) return;
  std::vector<at::Tensor> workspaces;
  const ops::Workspace allocate = [&](size_t bytes) {
    workspaces.push_back(emptyOnDevice({static_cast<int64_t>(bytes)}, at::kByte, input.device()));
    return workspaces.back().data_ptr();
  };
  aten::onDevice("sort", [&] {
    ops::sort(launchContextOf(input), optionalOutput(values, input), optionalOutput(indices, input),
              viewOf(input), descending, allocate);
  });
}

int64_t sortCapacity(int64_t device) {
  ensureInitialized();
  return ops::sortRowCapacity(static_cast<int>(device));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("sort(Tensor(a!)? values, Tensor(b!)? indices, Tensor input, bool descending) -> ()", sort);
  m.def("sort_capacity(int device) -> int", sortCapacity);
}

}  // namespace mimic::torch_backend
