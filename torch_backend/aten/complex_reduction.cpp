#include "torch_backend/aten/complex_reduction.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/src/aten_core.h"

namespace mimic::torch_backend::aten {

bool complexReduction(const std::string& name, const ReductionOp& op, const at::Tensor& self,
                      const std::vector<int>& dims, bool keepdim,
                      c10::optional<at::ScalarType> dtype, const at::Tensor* out,
                      at::Tensor* result) {
  if (self.scalar_type() != at::kComplexFloat || op.reduce != "sum" || !op.prologue.empty() ||
      self.is_neg()) {
    return false;
  }
  if ((dtype && *dtype != at::kComplexFloat) || (out && out->scalar_type() != at::kComplexFloat)) {
    return false;
  }
  // A conjugate view is reduced through its memory and the imaginary part negated after.
  const bool conjugate = self.is_conj();
  const at::Tensor pairs = at::view_as_real(conjugate ? self.conj() : self);

  std::vector<int64_t> kept = pairs.sizes().vec(), final;
  for (int d : dims) kept[d] = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), static_cast<int>(d));
    if (keepdim || !reduced) final.push_back(reduced ? 1 : self.size(d));
  }
  at::Tensor sums = emptyOnDevice(kept, at::kFloat, self.device());
  if (sums.numel() != 0) {
    ops::ReduceFusion fusion;
    if (op.mean) {
      int64_t elements = 1;
      for (int d : dims) elements *= self.size(d);
      fusion.divisor = static_cast<double>(elements);
    }
    reduceOnDevice(name, sums, pairs, dims, ops::ReduceKind::Sum, fusion);
    if (conjugate) sums.select(-1, 1).neg_();
  }
  at::Tensor values = at::view_as_complex(sums).view(final);
  if (out) {
    at::Tensor target = *out;
    at::native::resize_output(target, values.sizes());
    target.copy_(values);
    values = std::move(target);
  }
  *result = std::move(values);
  return true;
}

}  // namespace mimic::torch_backend::aten
