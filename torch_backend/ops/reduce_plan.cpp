#include "torch_backend/ops/reduce_plan.h"

#include <algorithm>
#include <cstdlib>

#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops::detail {
namespace {

constexpr int64_t kSets = 2;             // tile buffer sets (double buffering)
constexpr int64_t kAlignSlack = 12 * 8;  // each buffer starts 8-aligned

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

// Bytes of scratchpad per tile element and per kept element of a tile (see arguments()).
int64_t bytesPerElement(const ReduceShape& s) {
  const int64_t cast = s.acc != s.in ? isa::dtypeSize(s.acc) : 0;
  int64_t bytes = kSets * isa::dtypeSize(s.in) + cast;
  if (s.hasOther()) bytes += kSets * isa::dtypeSize(s.otherType());
  if (s.pairs()) bytes += cast;
  return bytes;
}
int64_t bytesPerKept(const ReduceShape& s) {
  const int64_t a = isa::dtypeSize(s.acc);
  const bool arg = isArg(s.kind);
  return a + (!s.columns && s.kind != ReduceKind::Prod ? a : 0) + (arg ? 8 + 8 + 3 : 0) +
         (!arg && s.out != s.acc ? isa::dtypeSize(s.out) : 0);
}

// Tile rows a multiple of 1 KiB apart make the DMA's row copies alias in the host's caches (4K
// aliasing, several times slower): such rows get 64 bytes of padding, at most 1/16 more.
int64_t pitchOf(int64_t rowElems, int64_t elementBytes) {
  return rowElems * elementBytes % 1024 == 0 ? rowElems + 64 / elementBytes : rowElems;
}

void setPitch(Plan& p) {
  p.pitch = pitchOf(p.shape.columns ? p.keptCap : p.redCap, isa::dtypeSize(p.shape.in));
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

}  // namespace

int64_t product(const Dims& dims, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < to; ++i) p *= dims[i].size;
  return p;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t Plan::innerKept() const {
  return product(kept, shape.gridKept + 1, kept.size());
}

int64_t Plan::innerRed() const {
  return product(red, shape.loopRed + 1, red.size());
}

Plan makePlan(Dims kept, Dims red, const ReduceShape& base, int device, bool spread,
              int residents) {
  Plan p{base, {}, {}};
  ReduceShape& s = p.shape;
  s.columns = preferColumns(kept, red, s.kind);
  if (kept.empty()) kept.push_back({1, 0, 0, 0});
  if (red.empty()) red.push_back({1, 0, 0, 0});
  const int nKept = static_cast<int>(kept.size()), nRed = static_cast<int>(red.size());
  if (s.columns) {
    s.descKept = std::min(nKept, 3);
    s.descRed = std::min(nRed, 4 - s.descKept);
  } else {
    s.descRed = std::min(nRed, 3);
    s.descKept = std::min(nKept, 4 - s.descRed);
  }

  const int64_t perElem = bytesPerElement(s), perKept = bytesPerKept(s);
  const int64_t budget =
      static_cast<int64_t>(scratchpadBytes(device)) * 15 / 16 / residents - kAlignSlack;
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
  auto spreadOut = [&](int64_t kc) {
    const int units = computeUnits(device);
    if (!spread || gridY >= units) return kc;
    return std::min(kc, std::max<int64_t>(1, ceilDiv(keptOuter, ceilDiv(units, gridY))));
  };
  auto clamp = [](int64_t v, int64_t hi) { return std::max<int64_t>(1, std::min(v, hi)); };
  if (s.columns) {
    p.kc = spreadOut(clamp(maxKept(innerRed()) / innerKept(), keptOuter));
    p.rc = clamp(maxRed(p.kc * innerKept()) / innerRed(), redOuter);
  } else {
    p.rc = clamp(maxRed(innerKept()) / innerRed(), redOuter);
    p.kc = spreadOut(clamp(maxKept(p.rc * innerRed()) / innerKept(), keptOuter));
  }
  p.keptCap = p.kc * innerKept();
  p.redCap = p.rc * innerRed();
  p.kept = std::move(kept);
  p.red = std::move(red);
  setPitch(p);
  return p;
}

void setRedChunk(Plan& p, int64_t rc) {
  p.rc = std::max<int64_t>(1, std::min(rc, p.rc));
  p.redCap = p.rc * p.innerRed();
  setPitch(p);
}

std::vector<int64_t> arguments(const Plan& p, const LaunchOperands& operands) {
  const ReduceShape& s = p.shape;
  const int64_t e = isa::dtypeSize(s.in), a = isa::dtypeSize(s.acc), o = isa::dtypeSize(s.out);
  const int64_t eo = isa::dtypeSize(s.otherType());
  const bool arg = isArg(s.kind), cast = s.acc != s.in;
  std::vector<int64_t> args(argCount(s), 0);
  int64_t used = 0;
  auto take = [&](int64_t bytes) {
    const int64_t at = used;
    used += (bytes + 7) / 8 * 8;
    return at;
  };
  const int64_t tileRows = s.columns ? p.redCap : p.keptCap;
  for (int set = 0; set < kSets; ++set) {
    args[kArgTileSp0 + set] = take(tileRows * p.pitch * e);
    if (s.hasOther()) args[kArgOtherSp0 + set] = take(tileRows * p.pitch * eo);
  }
  if (cast) {
    args[kArgTileAccSp] = take(tileRows * p.pitch * a);
    if (s.pairs()) args[kArgOtherAccSp] = take(tileRows * p.pitch * a);
  }
  args[kArgAccSp] = take(p.keptCap * a);
  if (!s.columns && s.kind != ReduceKind::Prod) args[kArgPartialSp] = take(p.keptCap * a);
  if (arg) {
    args[kArgIndexSp] = take(p.keptCap * 8);
    args[kArgPartialIndexSp] = take(p.keptCap * 8);
    args[kArgMaskSp] = take(p.keptCap * 3);
  }
  if (!arg && s.out != s.acc) args[kArgOutSp] = take(p.keptCap * o);

  const int nKept = static_cast<int>(p.kept.size()), nRed = static_cast<int>(p.red.size());
  const int64_t innerRed = p.innerRed();
  args[kArgOut] = reinterpret_cast<int64_t>(operands.out);
  args[kArgIn] = reinterpret_cast<int64_t>(operands.in);
  args[kArgOther] = reinterpret_cast<int64_t>(operands.other);
  args[kArgValuesOut] = reinterpret_cast<int64_t>(operands.values);
  args[kArgSplitStride] = operands.splitStride;
  args[kArgKeptChunk] = p.kc;
  args[kArgRedChunk] = p.rc;
  args[kArgRedChunks] = p.redChunks();
  args[kArgTiles] = p.tiles();
  args[kArgInnerKept] = p.innerKept();
  args[kArgInnerRed] = innerRed;
  args[kArgRedDescTotal] = innerRed * p.red[s.loopRed].size;
  args[kArgTileRowBytes] = p.pitch * e;
  args[kArgOtherRowBytes] = p.pitch * eo;
  args[kArgAccRowBytes] = p.pitch * (cast ? a : e);
  // The divisor is a scalar of the accumulator's float type (f64 keeps its precision).
  args[kArgDivisor] =
      scalarBits(operands.divisor, s.acc == isa::DType::F64 ? isa::DType::F64 : isa::DType::F32);
  // Tile strides: the columns' dims are dense within a row, the rows' dims step whole rows.
  const int64_t keptUnit = s.columns ? 1 : p.pitch, redUnit = s.columns ? p.pitch : 1;
  int64_t keptInner = 1, redInner = 1;
  for (int i = 0; i < s.descKept; ++i) {
    const Dim& d = p.kept[nKept - 1 - i];
    int64_t* r = &args[keptDescArg(s, i)];
    r[kKeptSize] = d.size;
    r[kKeptIn] = d.in * e;
    r[kKeptTile] = keptUnit * keptInner * e;
    r[kKeptOut] = d.out * o;
    r[kKeptOutSp] = o * keptInner;
    r[kKeptOther] = d.other * eo;
    r[kKeptOtherTile] = keptUnit * keptInner * eo;
    keptInner *= d.size;
  }
  for (int i = 0; i < s.descRed; ++i) {
    const Dim& d = p.red[nRed - 1 - i];
    int64_t* r = &args[redDescArg(s, i)];
    r[kRedSize] = d.size;
    r[kRedIn] = d.in * e;
    r[kRedTile] = redUnit * redInner * e;
    r[kRedOther] = d.other * eo;
    r[kRedOtherTile] = redUnit * redInner * eo;
    redInner *= d.size;
  }
  for (int i = 0; i < s.gridKept; ++i) {
    const Dim& d = p.kept[s.gridKept - 1 - i];
    int64_t* r = &args[gridArg(s, i)];
    r[kGridSize] = d.size;
    r[kGridIn] = d.in * e;
    r[kGridOut] = d.out * o;
    r[kGridOther] = d.other * eo;
  }
  for (int i = 0; i < s.loopRed; ++i) {
    const Dim& d = p.red[s.loopRed - 1 - i];
    int64_t* r = &args[loopArg(s, i)];
    r[kLoopSize] = d.size;
    r[kLoopIn] = d.in * e;
    r[kLoopOther] = d.other * eo;
  }
  return args;
}

}  // namespace mimic::ops::detail
