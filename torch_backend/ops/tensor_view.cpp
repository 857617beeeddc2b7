#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

bool TensorView::isContiguous() const {
  int64_t expected = 1;
  for (int d = dim() - 1; d >= 0; --d) {
    if (sizes[d] != 1 && strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size());
  int64_t stride = 1;
  for (int d = static_cast<int>(sizes.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= sizes[d];
  }
  return strides;
}

namespace {

// Dims [from, to) of v as one size and stride, or false when they do not merge.
bool merge(const TensorView& v, int from, int to, int64_t* size, int64_t* stride) {
  *size = 1;
  *stride = 0;
  int64_t next = -1;  // the stride the next outer dim needs to continue the merged run
  for (int d = to - 1; d >= from; --d) {
    if (v.sizes[d] == 1) continue;
    if (next != -1 && v.strides[d] != next) return false;
    if (next == -1) *stride = v.strides[d];
    *size *= v.sizes[d];
    next = v.strides[d] * v.sizes[d];
  }
  return true;
}

}  // namespace

std::optional<TensorView> aroundDim(const TensorView& v, int64_t dim) {
  TensorView r{v.data, v.dtype, {1, v.sizes[dim], 1}, {0, v.strides[dim], 0}};
  if (!merge(v, 0, static_cast<int>(dim), &r.sizes[0], &r.strides[0]) ||
      !merge(v, static_cast<int>(dim) + 1, v.dim(), &r.sizes[2], &r.strides[2])) {
    return std::nullopt;
  }
  return r;
}

}  // namespace mimic::ops
