// Planning one launch of the row kernel (row_kernel.h): whole rows or chunks, rows per
// workgroup, the scratchpad layout and the argument vector.
#pragma once

#include <cstdint>
#include <vector>

#include "torch_backend/ops/row_kernel.h"
#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops::detail {

// A row op after the public checks. Row views are [G, C, N], statistics [G, C], columns [N];
// unused operands have data == nullptr. The shape's kind, element types and flags are set; the
// plan decides `chunked`.
struct RowCall {
  RowShape shape;
  TensorView in0, in1, out;
  TensorView sum;  // layer norm with a residual: in0 + in1 (* (in2 / scale))
  TensorView in2;  // the residual's dropout mask
  double scale = 1;
  TensorView stat0, stat1;
  TensorView col0, col1;
  void* part0 = nullptr;  // f32 [workgroups][N] each (see RowPlan::workgroups)
  void* part1 = nullptr;
  double eps = 0;
};

struct RowPlan {
  RowShape shape;
  int64_t g = 0, c = 0, n = 0;
  int64_t kc = 1, nc = 1, pitch = 1;
  int64_t gridX() const { return (c + kc - 1) / kc; }
  int64_t workgroups() const { return gridX() * g; }
};

// Whole rows when a row fits half the scratchpad (so that two workgroups share a compute unit)
// or else the whole of it, with as many rows per workgroup as fit, but few enough that the grid
// fills the device; longer rows in chunks of as many columns as fit half the scratchpad.
RowPlan planRows(const RowCall& call, int device);

std::vector<int64_t> rowArguments(const RowPlan& plan, const RowCall& call);

}  // namespace mimic::ops::detail
