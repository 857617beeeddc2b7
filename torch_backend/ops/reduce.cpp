// Host side of reduce: checks, dim normalisation (dropping size-1 dims, sorting and coalescing),
// and the plan that maps the dims onto one launch of the kernel in reduce_kernel.h.
#include "torch_backend/ops/reduce.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/reduce_kernel.h"

namespace mimic::ops {
namespace {

using detail::ReduceShape;
using isa::DType;

struct Dim {
  int64_t size, in, out;  // strides in elements; out is unused for reduced dims
};
using Dims = std::vector<Dim>;  // outermost first

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

void check(const TensorView& out, const TensorView& in, const std::vector<int>& dims,
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

// Merges neighbours that walk memory as one dim (for kept dims, in both in and out).
Dims coalesce(const Dims& dims, bool kept) {
  Dims merged;
  for (const Dim& d : dims) {
    if (!merged.empty()) {
      Dim& outer = merged.back();
      if (outer.in == d.in * d.size && (!kept || outer.out == d.out * d.size)) {
        outer = {outer.size * d.size, d.in, d.out};
        continue;
      }
    }
    merged.push_back(d);
  }
  return merged;
}

int64_t product(const Dims& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i].size;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// A launch of the reduce kernel: which dims go where, chunks and the scratchpad layout.
struct Plan {
  ReduceShape shape;
  Dims kept, red;  // outermost first; the last descKept / descRed are in the descriptor
  int64_t kc = 1, rc = 1;
  int64_t keptCap = 1, redCap = 1;
  int64_t pitch = 1;  // elements from one tile row to the next (>= the row's elements)
};

// Bytes of scratchpad per tile element and per kept element of a tile (see arguments()).
int64_t bytesPerElement(const ReduceShape& s) {
  return isa::dtypeSize(s.in) + (s.acc != s.in ? isa::dtypeSize(s.acc) : 0);
}
int64_t bytesPerKept(const ReduceShape& s) {
  const int64_t a = isa::dtypeSize(s.acc);
  const bool arg = isArg(s.kind);
  return a + (!s.columns && s.kind != ReduceKind::Prod ? a : 0) + (arg ? 8 + 8 + 3 : 0) +
         (!arg && s.out != s.acc ? isa::dtypeSize(s.out) : 0);
}
constexpr int64_t kAlignSlack = 8 * 8;  // each buffer starts 8-aligned

// Tile rows a multiple of 1 KiB apart make the DMA's row copies alias in the host's caches (4K
// aliasing, several times slower): such rows get 64 bytes of padding, at most 1/16 more.
int64_t pitchOf(int64_t rowElems, int64_t elementBytes) {
  return rowElems * elementBytes % 1024 == 0 ? rowElems + 64 / elementBytes : rowElems;
}

// Whether the columns layout is cheaper for the interpreter than the rows layout, by rough
// host costs: the rows layout pays one reduce call per kept element; both pay the DMA gather,
// whose innermost dim is the innermost reduced dim (rows) or kept dim (columns), copied as one
// run when contiguous and element by element otherwise.
bool preferColumns(const Dims& kept, const Dims& red, ReduceKind kind) {
  if (isArg(kind) || kept.empty()) return false;
  if (red.empty()) return true;
  constexpr double kReduceCallNs = 20, kRunNs = 4, kElementNs = 1.5;
  auto gatherNs = [&](const Dim& innermost) {  // per element
    return std::llabs(innermost.in) == 1 ? kRunNs / innermost.size : kElementNs;
  };
  const double perKept = static_cast<double>(product(red, 0, red.size()));
  return perKept * gatherNs(kept.back()) < kReduceCallNs + perKept * gatherNs(red.back());
}

Plan makePlan(Dims kept, Dims red, const ReduceShape& base, int device) {
  Plan p{base, {}, {}};
  ReduceShape& s = p.shape;
  s.columns = preferColumns(kept, red, s.kind);
  if (kept.empty()) kept.push_back({1, 0, 0});
  if (red.empty()) red.push_back({1, 0, 0});
  const int nKept = static_cast<int>(kept.size()), nRed = static_cast<int>(red.size());
  if (s.columns) {
    s.descKept = std::min(nKept, 3);
    s.descRed = std::min(nRed, 4 - s.descKept);
  } else {
    s.descRed = std::min(nRed, 3);
    s.descKept = std::min(nKept, 4 - s.descRed);
  }

  const int64_t perElem = bytesPerElement(s), perKept = bytesPerKept(s);
  const int64_t budget = static_cast<int64_t>(scratchpadBytes(device)) * 15 / 16 - kAlignSlack;
  auto maxKept = [&](int64_t redCap) { return budget / (redCap * perElem + perKept); };
  auto maxRed = [&](int64_t keptCap) { return (budget / keptCap - perKept) / perElem; };
  auto innerKept = [&] { return product(kept, nKept - s.descKept + 1, nKept); };
  auto innerRed = [&] { return product(red, nRed - s.descRed + 1, nRed); };
  // Inner descriptor dims are loaded whole: move outer ones out until one chunk fits.
  while ((s.descKept > 1 || s.descRed > 1) && maxKept(innerRed()) < innerKept()) {
    if (s.descKept > 1 && (s.descRed == 1 || innerKept() >= innerRed())) {
      --s.descKept;
    } else {
      --s.descRed;
    }
  }
  s.gridKept = nKept - s.descKept;
  s.loopRed = nRed - s.descRed;
  const int64_t keptOuter = kept[s.gridKept].size, redOuter = red[s.loopRed].size;
  const int64_t gridY = product(kept, 0, s.gridKept);
  // Enough workgroups to occupy every compute unit, when the kept dims allow.
  auto spread = [&](int64_t kc) {
    const int units = computeUnits(device);
    if (gridY >= units) return kc;
    return std::min(kc, std::max<int64_t>(1, ceilDiv(keptOuter, ceilDiv(units, gridY))));
  };
  auto clamp = [](int64_t v, int64_t hi) { return std::max<int64_t>(1, std::min(v, hi)); };
  if (s.columns) {
    p.kc = spread(clamp(maxKept(innerRed()) / innerKept(), keptOuter));
    p.rc = clamp(maxRed(p.kc * innerKept()) / innerRed(), redOuter);
  } else {
    p.rc = clamp(maxRed(innerKept()) / innerRed(), redOuter);
    p.kc = spread(clamp(maxKept(p.rc * innerRed()) / innerKept(), keptOuter));
  }
  p.keptCap = p.kc * innerKept();
  p.redCap = p.rc * innerRed();
  p.pitch = pitchOf(s.columns ? p.keptCap : p.redCap, isa::dtypeSize(s.in));
  p.kept = std::move(kept);
  p.red = std::move(red);
  return p;
}

std::vector<int64_t> arguments(const Plan& p, const TensorView& out, const TensorView& in) {
  const ReduceShape& s = p.shape;
  const int64_t e = isa::dtypeSize(s.in), a = isa::dtypeSize(s.acc), o = isa::dtypeSize(s.out);
  const bool arg = isArg(s.kind), cast = s.acc != s.in;
  std::vector<int64_t> args(detail::argCount(s), 0);
  int64_t used = 0;
  auto take = [&](int64_t bytes) {
    const int64_t at = used;
    used += (bytes + 7) / 8 * 8;
    return at;
  };
  const int64_t tileRows = s.columns ? p.redCap : p.keptCap;
  const int64_t tile = take(tileRows * p.pitch * e);
  args[detail::kArgTileSp] = tile;
  args[detail::kArgTileAccSp] = cast ? take(tileRows * p.pitch * a) : tile;
  args[detail::kArgAccSp] = take(p.keptCap * a);
  if (!s.columns && s.kind != ReduceKind::Prod) args[detail::kArgPartialSp] = take(p.keptCap * a);
  if (arg) {
    args[detail::kArgIndexSp] = take(p.keptCap * 8);
    args[detail::kArgPartialIndexSp] = take(p.keptCap * 8);
    args[detail::kArgMaskSp] = take(p.keptCap * 3);
  }
  if (!arg && s.out != s.acc) args[detail::kArgOutSp] = take(p.keptCap * o);

  const int nKept = static_cast<int>(p.kept.size()), nRed = static_cast<int>(p.red.size());
  const int64_t innerKept = product(p.kept, s.gridKept + 1, nKept);
  const int64_t innerRed = product(p.red, s.loopRed + 1, nRed);
  args[detail::kArgOut] = reinterpret_cast<int64_t>(out.data);
  args[detail::kArgIn] = reinterpret_cast<int64_t>(in.data);
  args[detail::kArgKeptChunk] = p.kc;
  args[detail::kArgRedChunk] = p.rc;
  args[detail::kArgInnerKept] = innerKept;
  args[detail::kArgInnerRed] = innerRed;
  args[detail::kArgRedDescTotal] = innerRed * p.red[s.loopRed].size;
  args[detail::kArgLoopTotal] = product(p.red, 0, s.loopRed);
  args[detail::kArgTileRowBytes] = p.pitch * e;
  args[detail::kArgAccRowBytes] = p.pitch * (cast ? a : e);
  // Tile strides: the columns' dims are dense within a row, the rows' dims step whole rows.
  const int64_t keptUnit = s.columns ? e : p.pitch * e;
  const int64_t redUnit = s.columns ? p.pitch * e : e;
  int64_t keptInner = 1, redInner = 1;
  for (int i = 0; i < s.descKept; ++i) {
    const Dim& d = p.kept[nKept - 1 - i];
    int64_t* r = &args[detail::keptDescArg(s, i)];
    r[0] = d.size;
    r[1] = d.in * e;
    r[2] = keptUnit * keptInner;
    r[3] = d.out * o;
    r[4] = o * keptInner;
    keptInner *= d.size;
  }
  for (int i = 0; i < s.descRed; ++i) {
    const Dim& d = p.red[nRed - 1 - i];
    int64_t* r = &args[detail::redDescArg(s, i)];
    r[0] = d.size;
    r[1] = d.in * e;
    r[2] = redUnit * redInner;
    redInner *= d.size;
  }
  for (int i = 0; i < s.gridKept; ++i) {
    const Dim& d = p.kept[s.gridKept - 1 - i];
    int64_t* r = &args[detail::gridArg(s, i)];
    r[0] = d.size;
    r[1] = d.in * e;
    r[2] = d.out * o;
  }
  for (int i = 0; i < s.loopRed; ++i) {
    const Dim& d = p.red[s.loopRed - 1 - i];
    int64_t* r = &args[detail::loopArg(s, i)];
    r[0] = d.size;
    r[1] = d.in * e;
  }
  return args;
}

}  // namespace

void reduce(const LaunchContext& ctx, const TensorView& out, const TensorView& in,
            const std::vector<int>& dims, ReduceKind kind) {
  check(out, in, dims, kind);
  if (out.numel() == 0) return;
  Dims kept, red;
  bool emptyReduction = false;
  for (int d = 0; d < in.dim(); ++d) {
    const int64_t size = in.sizes[d];
    if (std::binary_search(dims.begin(), dims.end(), d)) {
      emptyReduction |= size == 0;
      if (size != 1) red.push_back({size, in.strides[d], 0});
    } else if (size != 1) {
      kept.push_back({size, in.strides[d], out.strides[d]});
    }
  }
  if (emptyReduction) {
    if (kind != ReduceKind::Sum && kind != ReduceKind::Prod) {
      fail(kind, "the reduction is empty (a reduced dim has size 0) and has no identity");
    }
    red = {{0, 0, 0}};  // no tiles: the accumulator keeps the identity
  }
  // The visiting order only matters for indices: elsewhere, walk memory innermost-first.
  auto byStride = [](const Dim& x, const Dim& y) { return std::llabs(x.in) > std::llabs(y.in); };
  std::stable_sort(kept.begin(), kept.end(), byStride);
  if (!isArg(kind)) std::stable_sort(red.begin(), red.end(), byStride);

  ReduceShape shape;
  shape.kind = kind;
  shape.in = in.dtype;
  shape.out = out.dtype;
  const bool accumulates = kind == ReduceKind::Sum || kind == ReduceKind::Prod;
  shape.acc = !accumulates ? in.dtype : isa::isFloat(in.dtype) ? DType::F32 : DType::I64;
  const Plan plan = makePlan(coalesce(kept, true), coalesce(red, false), shape, ctx.device);
  const ReduceShape& s = plan.shape;
  const int64_t gridX = ceilDiv(plan.kept[s.gridKept].size, plan.kc);
  const int64_t gridY = product(plan.kept, 0, s.gridKept);
  mimicFunction fn =
      cachedKernel(ctx.device, s.key(), [&] { return detail::buildReduceKernel(s); });
  launch(ctx, fn, {static_cast<uint32_t>(gridX), static_cast<uint32_t>(gridY), 1},
         arguments(plan, out, in));
}

}  // namespace mimic::ops
