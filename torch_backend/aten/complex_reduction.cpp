#include "torch_backend/aten/complex_reduction.h"

#include <ATen/ATen.h>
#include <ATen/native/Resize.h>

#include <algorithm>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/src/aten_core.h"

namespace mimic::torch_backend::aten {

namespace {

// The product over the last dim of `rows` by halves: log2(n) launches of the device's complex
// multiply instead of n sequential ones. The tree's rounding error bound (log2(n) u per factor)
// is below the CPU's sequential one ((n - 1) u).
at::Tensor productOfRows(at::Tensor rows) {
  int64_t length = rows.size(-1);
  if (length == 0) {
    std::vector<int64_t> shape = rows.sizes().vec();
    shape.back() = 1;
    return at::ones(shape, rows.options());
  }
  if (length == 1) return rows.clone();
  while (length > 1) {
    const int64_t half = length / 2;
    at::Tensor products = at::mul(rows.narrow(-1, 0, half), rows.narrow(-1, half, half));
    if (length % 2 == 1) products.narrow(-1, 0, 1).mul_(rows.narrow(-1, length - 1, 1));
    rows = std::move(products);
    length = half;
  }
  return rows;
}

// complex64 prod over `dims`, shaped as the reduction's result (`final`).
at::Tensor complexProduct(const at::Tensor& self, const std::vector<int>& dims,
                          const std::vector<int64_t>& final) {
  std::vector<int64_t> order, rowShape;
  int64_t reduced = 1;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!std::binary_search(dims.begin(), dims.end(), static_cast<int>(d))) {
      order.push_back(d);
      rowShape.push_back(self.size(d));
    }
  }
  for (int d : dims) {
    order.push_back(d);
    reduced *= self.size(d);
  }
  rowShape.push_back(reduced);
  return productOfRows(self.permute(order).reshape(rowShape)).view(final);
}

// complex64 sum or mean: the float32 reduce kernel over the (real, imaginary) pairs.
at::Tensor complexSum(const std::string& name, const ReductionOp& op, const at::Tensor& pairs,
                      const std::vector<int>& dims, const std::vector<int64_t>& kept,
                      bool conjugate) {
  at::Tensor sums = emptyOnDevice(kept, at::kFloat, pairs.device());
  if (sums.numel() != 0) {
    ops::ReduceFusion fusion;
    if (op.mean) {
      int64_t elements = 1;
      for (int d : dims) elements *= pairs.size(d);
      fusion.divisor = static_cast<double>(elements);
    }
    reduceOnDevice(name, sums, pairs, dims, ops::ReduceKind::Sum, fusion);
    if (conjugate) sums.select(-1, 1).neg_();
  }
  return at::view_as_complex(sums);
}

}  // namespace

bool complexReduction(const std::string& name, const ReductionOp& op, const at::Tensor& self,
                      const std::vector<int>& dims, bool keepdim,
                      c10::optional<at::ScalarType> dtype, const at::Tensor* out,
                      at::Tensor* result) {
  const bool product = op.reduce == "prod" && !self.is_conj();
  if (self.scalar_type() != at::kComplexFloat || (op.reduce != "sum" && !product) ||
      !op.prologue.empty() || self.is_neg()) {
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
  at::Tensor values;
  if (product) {
    values = complexProduct(self, dims, final);
  } else {
    values = complexSum(name, op, pairs, dims, kept, conjugate).view(final);
  }
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
