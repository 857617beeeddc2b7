// torch.ops.mimic.scan: the inclusive scans of torch_backend/ops/scan.h along any dim of any
// view, for the aten kernels of torch_mimic/ops_scan.py and ops_select.py. The dims before and
// after the scanned one become the kernel's G and C when each group merges into one stride; an
// operand whose dims do not merge goes through a contiguous copy.
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <optional>
#include <string>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/scan.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

using aten::checkSameDevice;
using aten::onDevice;

constexpr std::pair<const char*, ops::ScanKind> kScanKinds[] = {
    {"sum", ops::ScanKind::Sum},
    {"prod", ops::ScanKind::Prod},
    {"logsumexp", ops::ScanKind::LogSumExp},
    {"max", ops::ScanKind::Max},
    {"min", ops::ScanKind::Min}};

ops::ScanKind scanKindOf(c10::string_view kind) {
  for (const auto& [name, value] : kScanKinds) {
    if (kind == name) return value;
  }
  TORCH_CHECK(false, "mimic: unknown scan kind '", std::string(kind), "'");
}

// t as [G, N, C] around `dim`, or nothing when it does not merge.
std::optional<ops::TensorView> aroundDim(const at::Tensor& t, int64_t dim) {
  ops::TensorView v = viewOf(t);
  if (v.dim() == 0) return ops::TensorView{v.data, v.dtype, {1, 1, 1}, {0, 0, 0}};
  return ops::aroundDim(v, dim);
}

void scan(const at::Tensor& out, const c10::optional<at::Tensor>& indices, const at::Tensor& input,
          int64_t dim, c10::string_view kind) {
  checkSameDevice(input, out, "scan");
  const ops::ScanKind scanKind = scanKindOf(kind);
  const int64_t rank = std::max<int64_t>(input.dim(), 1);
  TORCH_CHECK(dim >= -rank && dim < rank, "mimic: scan dim ", dim, " out of range for a ",
              input.dim(), "-d input");
  if (dim < 0) dim += rank;
  TORCH_CHECK(out.sizes() == input.sizes(), "mimic: scan out has sizes ", out.sizes(), ", input ",
              input.sizes());
  if (indices.has_value()) {
    checkSameDevice(*indices, out, "scan");
    TORCH_CHECK(indices->sizes() == input.sizes(), "mimic: scan indices have sizes ",
                indices->sizes(), ", input ", input.sizes());
  }
  if (input.numel() == 0) return;
  std::optional<ops::TensorView> in = aroundDim(input, dim);
  at::Tensor contiguousInput;
  if (!in) {
    contiguousInput = input.contiguous();
    in = aroundDim(contiguousInput, dim);
  }
  // Outputs that do not merge are computed into contiguous tensors and copied back.
  auto target = [&](const at::Tensor& t, at::Tensor* staged) {
    std::optional<ops::TensorView> v = aroundDim(t, dim);
    if (v) return *v;
    *staged = at::empty(t.sizes(), t.options());
    return *aroundDim(*staged, dim);
  };
  at::Tensor stagedOut, stagedIndices;
  const ops::TensorView o = target(out, &stagedOut);
  const ops::TensorView x =
      indices.has_value() ? target(*indices, &stagedIndices) : ops::TensorView{};
  onDevice("scan", [&] { ops::scan(launchContextOf(out), o, x, *in, scanKind); });
  if (stagedOut.defined()) out.copy_(stagedOut);
  if (stagedIndices.defined()) indices->copy_(stagedIndices);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("scan(Tensor(a!) out, Tensor(b!)? indices, Tensor input, int dim, str kind) -> ()", scan);
}

}  // namespace mimic::torch_backend
