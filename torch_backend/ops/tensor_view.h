// What an op kernel needs to know about a tensor, without any torch header: a device address,
// an element type and the sizes and strides (in elements) of a view. The torch layer builds
// these from at::Tensor; tests build them by hand.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mimic/mimic.h"
#include "sim/isa/isa.h"

namespace mimic::ops {

struct TensorView {
  void* data = nullptr;  // device address of the view's first element (storage offset applied)
  isa::DType dtype = isa::DType::F32;
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;  // in elements; 0 broadcasts, negative strides are allowed

  int64_t numel() const;
  int dim() const { return static_cast<int>(sizes.size()); }
  bool isContiguous() const;  // row-major and dense
};

// Where a kernel runs: the device, and the queue its launch is ordered on (NULL = default).
struct LaunchContext {
  int device = 0;
  mimicQueue queue = nullptr;
};

// Contiguous row-major strides for `sizes`.
std::vector<int64_t> contiguousStrides(const std::vector<int64_t>& sizes);

// v as three dims [G, N, C] around `dim` (the dims before it merged into G, those after into C),
// as the row kernels (scans, FFT) take it; nothing when those dims do not merge into one stride.
std::optional<TensorView> aroundDim(const TensorView& v, int64_t dim);

}  // namespace mimic::ops
