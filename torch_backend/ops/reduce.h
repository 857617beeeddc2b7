// Reductions for the PyTorch backend: sum, prod, amax/amin, argmax/argmin over any set of dims of
// any strided view, with torch's NaN, tie and empty-input semantics; optionally fused with an
// elementwise map before (dot, norms) and a scale or square root after (mean, 2-norm).
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

enum class ReduceKind { Sum, Prod, Max, Min, ArgMax, ArgMin };

// What each element becomes before it is reduced, in the accumulation type.
enum class ReduceMap {
  Identity,
  Abs,                // |x|: float inputs; Sum, Max, Min (the 1- and inf-norms)
  Square,             // x * x: float inputs; Sum (the 2-norm)
  Mul,                // x * other: Sum (dot)
  SquaredDifference,  // (x - other)^2: float inputs; Sum (the squared error of mse_loss)
  NonZero,            // 1 where x != 0, else 0: u8 inputs (bool, whose other bytes read as true)
};

struct ReduceFusion {
  ReduceMap map = ReduceMap::Identity;
  TensorView other;    // Mul's and SquaredDifference's second operand: in's sizes and dtype,
                       // any strides
  double divisor = 1;  // Sum with a float accumulator: the result divided by it (mean) ...
  bool sqrt = false;   // ... and then its square root (2-norm), before the conversion to out
};

// Device memory for a call's temporaries. The memory must stay usable by work queued on the
// call's queue until that work completes, as memory from a stream-aware caching allocator
// does when it is released after the call returns.
using Workspace = std::function<void*(size_t bytes)>;

// Reduces `in` over `dims` (sorted unique dim indices of in; may be empty = copy-convert, or
// all). `out` has in's rank with size 1 in every reduced dim (keepdim layout), any strides.
// `in` may have any strides, including 0 and overlapping windows (e.g. an as_strided
// sliding-window view for pooling: sizes [N,C,OH,OW,KH,KW]).
//
// Sum and Prod accumulate in f32 for float inputs (f32/f16/bf16) and in i64 for integer/u8
// inputs, then convert to out.dtype (any dtype). Max/Min keep in.dtype semantics (if any element
// is NaN the result is NaN) and need out.dtype == in.dtype. ArgMax/ArgMin need out.dtype == I64;
// the index is the row-major linear index within the reduced dims; ties give the first index;
// a NaN counts as the maximum (and minimum), so the first NaN's index wins.
// An empty reduction (a reduced dim of size 0, non-empty out): Sum gives 0, Prod 1; Max, Min,
// ArgMax and ArgMin throw std::invalid_argument. An empty out launches nothing.
//
// With a workspace, a reduction with fewer outputs than fill the device is split as vendor
// libraries split it: each output's reduced range is cut into a fixed number of contiguous
// parts (a function of the sizes and the device's properties), workgroups write one partial
// per part into the workspace, and a second launch combines the partials in part order. Results
// then depend on the device's preset, never on host threads or timing. Without a workspace, or
// when the split would not pay for its second launch, every output is reduced by one workgroup.
//
// Throws std::invalid_argument for bad dims, mismatched ranks or sizes, bad dtypes and fusions
// the kind does not allow, and mimic::Error when the launch fails. Asynchronous on ctx.queue.
void reduce(const LaunchContext& ctx, const TensorView& out, const TensorView& in,
            const std::vector<int>& dims, ReduceKind kind, const Workspace& workspace = {},
            const ReduceFusion& fusion = {});

}  // namespace mimic::ops
