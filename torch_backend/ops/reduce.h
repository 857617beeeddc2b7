// Reductions for the PyTorch backend: sum, prod, amax/amin, argmax/argmin over any set of dims of
// any strided view, with torch's NaN, tie and empty-input semantics.
#pragma once

#include <vector>

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

enum class ReduceKind { Sum, Prod, Max, Min, ArgMax, ArgMin };

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
// Throws std::invalid_argument for bad dims, mismatched ranks or sizes and bad dtypes, and
// mimic::Error when the launch fails. Asynchronous on ctx.queue.
void reduce(const LaunchContext& ctx, const TensorView& out, const TensorView& in,
            const std::vector<int>& dims, ReduceKind kind);

}  // namespace mimic::ops
