// Planning one launch of the reduce kernel (reduce_kernel.h): a call normalised to kept and
// reduced dims, which of them go to the DMA descriptor, the grid and the tile sequence, the
// chunk sizes, the scratchpad layout and the argument vector.
#pragma once

#include <cstdint>
#include <vector>

#include "torch_backend/ops/reduce_kernel.h"

namespace mimic::ops::detail {

// A reduction after the public checks: reduce.h's call, or one pass of a split reduction.
struct ReduceCall {
  TensorView out, in;
  TensorView other;  // the second operand (ReduceMap::Mul, or the indices of a gather)
  std::vector<int> dims;
  ReduceKind kind = ReduceKind::Sum;
  ReduceMap map = ReduceMap::Identity;
  bool gather = false;  // see ReduceShape::gather
  double divisor = 1;
  bool sqrt = false;
};

struct Dim {
  int64_t size, in, out, other;  // strides in elements; out is unused for reduced dims
};
using Dims = std::vector<Dim>;  // outermost first

int64_t product(const Dims& dims, size_t from, size_t to);
int64_t ceilDiv(int64_t a, int64_t b);

struct Plan {
  ReduceShape shape;
  Dims kept, red;  // outermost first; the last descKept / descRed are in the descriptor
  int64_t kc = 1, rc = 1;
  int64_t keptCap = 1, redCap = 1;
  int64_t pitch = 1;  // elements from one tile row to the next (>= the row's elements)
  int64_t parts = 1;  // grid z: parts of the tile sequence, each reduced to a partial

  int64_t gridX() const { return ceilDiv(kept[shape.gridKept].size, kc); }
  int64_t gridY() const { return product(kept, 0, shape.gridKept); }
  int64_t redChunks() const { return ceilDiv(red[shape.loopRed].size, rc); }
  int64_t tiles() const { return product(red, 0, shape.loopRed) * redChunks(); }
  int64_t keptElements() const { return product(kept, 0, kept.size()); }
  // Elements of the inner descriptor kept / reduced dims (a chunk of one is a tile row).
  int64_t innerKept() const;
  int64_t innerRed() const;
};

// Chunks and layout for coalesced dims (`kept` and `red` may be empty), in 1/`residents` of the
// scratchpad so that that many workgroups fit on a compute unit together. With `spread`, kept
// chunks shrink until the grid fills the device, when the kept dims allow; without, they stay as
// large as the scratchpad allows, for a split over the reduced dims instead.
Plan makePlan(Dims kept, Dims red, const ReduceShape& base, int device, bool spread,
              int residents = 1);

// Chunks the outermost descriptor reduced dim by `rc` elements (at most the planned rc).
void setRedChunk(Plan& p, int64_t rc);

// Addresses and per-call values beside the plan.
struct LaunchOperands {
  void* out = nullptr;
  const void* in = nullptr;
  const void* other = nullptr;
  void* values = nullptr;   // storeValues
  int64_t splitStride = 0;  // bytes between the parts' partials
  double divisor = 1;
};

std::vector<int64_t> arguments(const Plan& p, const LaunchOperands& operands);

}  // namespace mimic::ops::detail
