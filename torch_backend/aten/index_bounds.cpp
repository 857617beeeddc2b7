// The bounds checks of the index kernels' indices, as the CPU's kernels make them.
#include "torch_backend/aten/index_bounds.h"

#include <algorithm>

#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

// The index's values as the device's index kernels will read them (see simulatorValues), as
// int64; undefined in timing mode, where there are none to check. The device's kernels address
// memory with the values they are given, so the bounds are checked before the launch.
at::Tensor indexValues(const at::Tensor& index) {
  const at::Tensor values = simulatorValues(index);
  return values.defined() ? values.to(at::kLong).reshape({-1}) : values;
}

bool within(const at::Tensor& index, int64_t low, int64_t high) {
  const at::Tensor values = indexValues(index);
  if (!values.defined() || values.numel() == 0) return true;
  return values.min().item<int64_t>() >= low && values.max().item<int64_t>() < high;
}

// The first value of index, in its elements' order, outside [low, high), for the error
// message: the CPU's kernels report the first one they meet.
int64_t firstOutside(const at::Tensor& index, int64_t low, int64_t high) {
  const at::Tensor values = indexValues(index).contiguous();
  const int64_t* read = values.data_ptr<int64_t>();
  for (int64_t i = 0; i < values.numel(); ++i) {
    if (read[i] < low || read[i] >= high) return read[i];
  }
  return read[0];
}

}  // namespace

int64_t wrapDim(int64_t dim, int64_t rank) {
  rank = std::max<int64_t>(rank, 1);
  TORCH_CHECK_INDEX(dim >= -rank && dim < rank, "Dimension out of range (expected to be in range ",
                    "of [", -rank, ", ", rank - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + rank : dim;
}

int64_t indexedSize(const at::Tensor& self, int64_t dim) {
  return self.dim() > 0 ? self.size(wrapDim(dim, self.dim())) : 1;
}

void checkSelectBounds(const at::Tensor& index, int64_t size) {
  TORCH_CHECK_INDEX(within(index, 0, size), "index out of range in self");
}

// index_select's: the CPU's kernel takes another path, with another error, for dim 1 of a
// tensor of 2 or more dims and for an empty one of 2 or more dims.
void checkIndexSelectBounds(const at::Tensor& self, int64_t dim, const at::Tensor& index) {
  const int64_t size = indexedSize(self, dim);
  if (self.dim() > 1 && (wrapDim(dim, self.dim()) == 1 || self.numel() == 0)) {
    if (within(index, 0, size)) return;
    TORCH_CHECK(false, "INDICES element is out of DATA bounds, id=", firstOutside(index, 0, size),
                " axis_dim=", size);
  }
  checkSelectBounds(index, size);
}

void checkGatherBounds(const at::Tensor& index, int64_t dim, int64_t size) {
  if (within(index, 0, size)) return;
  TORCH_CHECK(false, "index ", firstOutside(index, 0, size), " is out of bounds for dimension ",
              dim, " with size ", size);
}

// Advanced indexing's check: each index (broadcast to one shape) within [-size, size) of the
// dim it indexes, with the CPU's IndexError naming the first value out of bounds as the CPU's
// kernel visits them, element by element and dim by dim.
void checkAdvancedBounds(const at::Tensor& self, const std::vector<at::Tensor>& indices) {
  std::vector<at::Tensor> values;
  for (const at::Tensor& index : indices) {
    values.push_back(indexValues(index));
    if (!values.back().defined()) return;
    values.back() = values.back().contiguous();
  }
  if (values.empty()) return;
  for (int64_t i = 0; i < values.front().numel(); ++i) {
    for (size_t d = 0; d < values.size(); ++d) {
      const int64_t value = values[d].data_ptr<int64_t>()[i];
      const int64_t size = self.size(static_cast<int64_t>(d));
      TORCH_CHECK_INDEX(value >= -size && value < size, "index ", value,
                        " is out of bounds for dimension ", d, " with size ", size);
    }
  }
}

}  // namespace mimic::torch_backend::aten
