// Host side of reduce: checks, dim normalisation (dropping size-1 dims, sorting and coalescing)
// and the choice between one launch and a split (reduce_split.h).
#include "torch_backend/ops/reduce.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/reduce_split.h"

namespace mimic::ops {
namespace {

using detail::Dim;
using detail::Dims;
using detail::ReduceCall;
using detail::ReduceShape;
using isa::DType;

const char* kindName(ReduceKind k) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  return kNames[static_cast<int>(k)];
}

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

[[noreturn]] void fail(ReduceKind kind, const std::string& what) {
  throw std::invalid_argument(std::string("reduce(") + kindName(kind) + "): " + what);
}

void checkViews(const TensorView& out, const TensorView& in, const std::vector<int>& dims,
                ReduceKind kind) {
  for (const TensorView* v : {&in, &out}) {
    if (v->sizes.size() != v->strides.size()) {
      fail(kind, std::string(v == &in ? "in" : "out") + " has " + std::to_string(v->sizes.size()) +
                     " sizes but " + std::to_string(v->strides.size()) + " strides");
    }
    if (static_cast<int>(v->dtype) >= isa::kNumDTypes) fail(kind, "unknown dtype");
  }
  if (out.dim() != in.dim()) {
    fail(kind, "out has rank " + std::to_string(out.dim()) + " but in has rank " +
                   std::to_string(in.dim()) + " (out keeps reduced dims with size 1)");
  }
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= in.dim() || (i > 0 && dims[i] <= dims[i - 1])) {
      fail(kind, "dims must be sorted, unique and in [0, " + std::to_string(in.dim()) + "); got " +
                     std::to_string(dims[i]) + " at position " + std::to_string(i));
    }
  }
  for (int d = 0; d < in.dim(); ++d) {
    const bool reduced = std::binary_search(dims.begin(), dims.end(), d);
    const int64_t expected = reduced ? 1 : in.sizes[d];
    if (in.sizes[d] < 0) fail(kind, "in.sizes[" + std::to_string(d) + "] is negative");
    if (out.sizes[d] != expected) {
      fail(kind, "out.sizes[" + std::to_string(d) + "] is " + std::to_string(out.sizes[d]) +
                     ", expected " + std::to_string(expected));
    }
  }
  const bool extreme = kind == ReduceKind::Max || kind == ReduceKind::Min;
  if (extreme && out.dtype != in.dtype) {
    fail(kind, std::string("out.dtype ") + isa::dtypeName(out.dtype) + " must equal in.dtype " +
                   isa::dtypeName(in.dtype));
  }
  if (isArg(kind) && out.dtype != DType::I64) {
    fail(kind, std::string("out.dtype must be i64, not ") + isa::dtypeName(out.dtype));
  }
}

void checkFusion(const TensorView& in, ReduceKind kind, const ReduceFusion& f) {
  const bool floatIn = isa::isFloat(in.dtype);
  switch (f.map) {
    case ReduceMap::Identity:
      break;
    case ReduceMap::Abs:
      if (!floatIn || isArg(kind) || kind == ReduceKind::Prod) {
        fail(kind, "the abs map needs a float input and sum, max or min");
      }
      break;
    case ReduceMap::Square:
      if (!floatIn || kind != ReduceKind::Sum) fail(kind, "the square map needs a float sum");
      break;
    case ReduceMap::NonZero:
      if (in.dtype != DType::U8) fail(kind, "the nonzero map needs a u8 input");
      break;
    case ReduceMap::Mul:
    case ReduceMap::SquaredDifference:
      if (kind != ReduceKind::Sum) fail(kind, "the mul and sqdiff maps need sum");
      if (f.map == ReduceMap::SquaredDifference && !floatIn) {
        fail(kind, "the sqdiff map needs a float input");
      }
      if (f.other.data == nullptr && in.numel() > 0) {
        fail(kind, "the mul and sqdiff maps need fusion.other");
      }
      if (f.other.dtype != in.dtype) {
        fail(kind, std::string("fusion.other.dtype ") + isa::dtypeName(f.other.dtype) +
                       " must equal in.dtype " + isa::dtypeName(in.dtype));
      }
      if (f.other.sizes != in.sizes || f.other.strides.size() != in.sizes.size()) {
        fail(kind, "fusion.other needs in's sizes and one stride per dim");
      }
      break;
  }
  if (f.map != ReduceMap::Mul && f.map != ReduceMap::SquaredDifference && f.other.data != nullptr) {
    fail(kind, "fusion.other is only read by the mul and sqdiff maps");
  }
  if ((f.divisor != 1 || f.sqrt) && (kind != ReduceKind::Sum || !floatIn)) {
    fail(kind, "a divisor or square root needs a float sum");
  }
}

// Merges neighbours that walk memory as one dim (for kept dims, in both in and out).
Dims coalesce(const Dims& dims, bool kept) {
  Dims merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& outer = merged.back();
      if (outer.in == d.in * d.size && outer.other == d.other * d.size &&
          (!kept || outer.out == d.out * d.size)) {
        outer = {outer.size * d.size, d.in, d.out, d.other};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

}  // namespace

namespace detail {

void launchPlan(const LaunchContext& ctx, const Plan& p, const LaunchOperands& operands) {
  const KernelRef fn =
      cachedKernel(ctx.device, p.shape.key(), [&] { return buildReduceKernel(p.shape); });
  launch(ctx, fn,
         {static_cast<uint32_t>(p.gridX()), static_cast<uint32_t>(p.gridY()),
          static_cast<uint32_t>(p.parts)},
         arguments(p, operands));
}

void runReduce(const LaunchContext& ctx, const ReduceCall& call, const Workspace* workspace) {
  const TensorView &out = call.out, &in = call.in;
  const bool hasOther =
      call.map == ReduceMap::Mul || call.map == ReduceMap::SquaredDifference || call.gather;
  Dims kept, red;
  bool emptyReduction = false;
  for (int d = 0; d < in.dim(); ++d) {
    const int64_t size = in.sizes[d];
    const int64_t other = hasOther ? call.other.strides[d] : 0;
    if (std::binary_search(call.dims.begin(), call.dims.end(), d)) {
      emptyReduction |= size == 0;
      if (size != 1) red.push_back({size, in.strides[d], 0, other});
    } else if (size != 1) {
      kept.push_back({size, in.strides[d], out.strides[d], other});
    }
  }
  if (emptyReduction) {
    if (call.kind != ReduceKind::Sum && call.kind != ReduceKind::Prod) {
      fail(call.kind, "the reduction is empty (a reduced dim has size 0) and has no identity");
    }
    red = {{0, 0, 0, 0}};  // no tiles: the accumulator keeps the identity
  }
  // The visiting order only matters for indices: elsewhere, walk memory innermost-first.
  auto byStride = [](const Dim& x, const Dim& y) { return std::llabs(x.in) > std::llabs(y.in); };
  std::stable_sort(kept.begin(), kept.end(), byStride);
  if (!isArg(call.kind)) std::stable_sort(red.begin(), red.end(), byStride);
  kept = coalesce(kept, true);
  red = coalesce(red, false);

  ReduceShape shape;
  shape.kind = call.kind;
  shape.in = in.dtype;
  shape.out = out.dtype;
  const bool accumulates = call.kind == ReduceKind::Sum || call.kind == ReduceKind::Prod;
  // f64 accumulates in f64 (never narrowed to f32), the other floats in f32, integers in i64.
  shape.acc = !accumulates             ? in.dtype
              : in.dtype == DType::F64 ? DType::F64
              : isa::isFloat(in.dtype) ? DType::F32
                                       : DType::I64;
  shape.map = call.map;
  shape.gather = call.gather;
  shape.divide = call.divisor != 1;
  shape.sqrt = call.sqrt;
  LaunchOperands operands;
  operands.out = out.data;
  operands.in = in.data;
  operands.other = call.other.data;
  operands.divisor = call.divisor;
  if (workspace != nullptr && *workspace) {
    const Plan split = splitPlan(kept, red, shape, ctx.device);
    if (split.parts > 1) return reduceInParts(ctx, call, split, *workspace);
  }
  launchPlan(ctx, makePlan(kept, red, shape, ctx.device, true), operands);
}

}  // namespace detail

void reduce(const LaunchContext& ctx, const TensorView& out, const TensorView& in,
            const std::vector<int>& dims, ReduceKind kind, const Workspace& workspace,
            const ReduceFusion& fusion) {
  checkViews(out, in, dims, kind);
  checkFusion(in, kind, fusion);
  if (out.numel() == 0) return;
  ReduceCall call{out,        in,    fusion.other,   dims,       kind,
                  fusion.map, false, fusion.divisor, fusion.sqrt};
  detail::runReduce(ctx, call, &workspace);
}

}  // namespace mimic::ops
