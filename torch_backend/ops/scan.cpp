// Host side of the scans: checks, the plan (lanes per workgroup, steps per chunk, the
// scratchpad layout) and the launch.
#include "torch_backend/ops/scan.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "torch_backend/ops/elementwise.h"
#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/scan_kernel.h"

namespace mimic::ops {
namespace {

using detail::ScanShape;
using isa::DType;

constexpr int64_t kAlign = 64;  // every scratchpad buffer starts 64-byte aligned
// Lanes per workgroup at most: wider tiles leave too few steps per chunk for rows of N that do
// not fit, and a step's instruction is already long at this width.
constexpr int64_t kMaxLanes = 1024;
constexpr int64_t kMinSteps = 16;  // steps per chunk worth narrowing the lanes for

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("scan: " + what);
}

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

int64_t alignUp(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

struct Layout {
  std::vector<int64_t> at = std::vector<int64_t>(detail::kScanArgCount, 0);
  int64_t bytes = 0;
};

Layout layout(const ScanShape& s, int64_t nc, int64_t pitch) {
  Layout l;
  auto place = [&](int slot, int64_t bytes) {
    l.at[slot] = l.bytes;
    l.bytes += alignUp(bytes);
  };
  const DType cs = s.compute();
  if (s.in != cs) place(detail::kScanSpRawIn, nc * pitch * isa::dtypeSize(s.in));
  if (s.out != cs) place(detail::kScanSpRawOut, nc * pitch * isa::dtypeSize(s.out));
  place(detail::kScanSpTile, (nc + 1) * pitch * isa::dtypeSize(cs));
  if (s.withIndex()) {
    place(detail::kScanSpIdx, (nc + 1) * pitch * 8);
    place(detail::kScanSpStep, pitch * 8);
  }
  place(detail::kScanSpMask0, pitch);
  if (s.withIndex() || s.kind == ScanKind::LogSumExp) place(detail::kScanSpMask1, pitch);
  if (s.kind == ScanKind::LogSumExp) {
    for (int slot : {detail::kScanSpT0, detail::kScanSpT1, detail::kScanSpT2, detail::kScanSpLow,
                     detail::kScanSpT4, detail::kScanSpT5}) {
      place(slot, pitch * 4);
    }
  }
  return l;
}

// Tile rows a multiple of 1 KiB apart make the DMA's row copies alias in the host's caches
// (as in row_plan.cpp): such rows get 64 bytes of padding. Rows need no other alignment than
// their elements', so a few lanes take a few elements per row.
int64_t pitchOf(int64_t kc) {
  return kc * 4 % 1024 == 0 ? kc + 16 : kc;
}

struct Plan {
  ScanShape shape;
  int64_t g = 0, n = 0, c = 0, kc = 1, nc = 1, pitch = 1;
  int64_t gridX() const { return (c + kc - 1) / kc; }
};

// As many lanes per workgroup as spread the lanes over two workgroups per compute unit (at most
// kMaxLanes), narrowed while a chunk would hold fewer than kMinSteps steps; then as many steps
// per chunk as fit half the scratchpad (so that two workgroups share a unit).
Plan plan(const ScanShape& shape, int64_t g, int64_t n, int64_t c, int device) {
  Plan p{shape, g, n, c};
  const int64_t budget = static_cast<int64_t>(scratchpadBytes(device)) * 15 / 32;
  const int64_t units = computeUnits(device);
  const int64_t perG = std::max<int64_t>(1, (2 * units + g - 1) / g);
  p.kc = std::min<int64_t>(kMaxLanes, std::max<int64_t>(1, (c + perG - 1) / perG));
  auto stepsThatFit = [&](int64_t kc) {
    const int64_t pitch = pitchOf(kc);
    int64_t lo = 0, hi = n;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (layout(shape, mid, pitch).bytes <= budget) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    return lo;
  };
  while (p.kc > 1 && stepsThatFit(p.kc) < std::min(n, kMinSteps)) p.kc = (p.kc + 1) / 2;
  p.nc = stepsThatFit(p.kc);
  if (p.nc < 1) fail("one step of one lane does not fit the scratchpad");
  p.pitch = pitchOf(p.kc);
  return p;
}

std::vector<int64_t> arguments(const Plan& p, const TensorView& in, const TensorView& out,
                               const TensorView& indices) {
  std::vector<int64_t> args = layout(p.shape, p.nc, p.pitch).at;
  args[detail::kScanG] = p.g;
  args[detail::kScanN] = p.n;
  args[detail::kScanC] = p.c;
  args[detail::kScanKc] = p.kc;
  args[detail::kScanNc] = p.nc;
  args[detail::kScanPitch] = p.pitch;
  auto operand = [&](int slot, const TensorView& v) {
    if (v.data == nullptr) return;
    const int64_t e = isa::dtypeSize(v.dtype);
    args[slot + detail::kScAddr] = reinterpret_cast<int64_t>(v.data);
    args[slot + detail::kScG] = v.strides[0] * e;
    args[slot + detail::kScN] = v.strides[1] * e;
    args[slot + detail::kScC] = v.strides[2] * e;
  };
  operand(detail::kScanIn, in);
  operand(detail::kScanOut, out);
  operand(detail::kScanIdx, indices);
  return args;
}

void checkOperand(const char* name, const TensorView& v, const std::vector<int64_t>& sizes) {
  if (v.sizes != sizes || v.strides.size() != sizes.size()) {
    fail(std::string(name) + " has sizes " + sizesText(v.sizes) + " and " +
         std::to_string(v.strides.size()) + " strides; expected sizes " + sizesText(sizes));
  }
}

// Lanes along G instead (a scan along the last dim): the kernel's lanes lie along C.
TensorView lanesAlongG(TensorView v) {
  std::swap(v.sizes[0], v.sizes[2]);
  std::swap(v.strides[0], v.strides[2]);
  return v;
}

// One launch of the scan kernel.
void launchScan(const LaunchContext& ctx, const TensorView& out, const TensorView& indices,
                const TensorView& in, const ScanShape& shape) {
  TensorView i = in, o = out, x = shape.withIndex() ? indices : TensorView{};
  if (in.sizes[2] == 1 && in.sizes[0] > 1) {
    i = lanesAlongG(i);
    o = lanesAlongG(o);
    if (x.data != nullptr) x = lanesAlongG(x);
  }
  const Plan p = plan(shape, i.sizes[0], i.sizes[1], i.sizes[2], ctx.device);
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildScanKernel(shape); });
  launch(ctx, fn, {static_cast<uint32_t>(p.gridX()), static_cast<uint32_t>(p.g), 1},
         arguments(p, i, o, x));
}

// Few lanes this long are scanned in blocks (blockedScan).
constexpr int64_t kBlockedSteps = 4096;
constexpr int64_t kBlockedLanes = 16;

// Sums and products along the last dim (C = 1) of few lanes, long ones, into their compute type.
bool blocks(const ScanShape& shape, const TensorView& in) {
  return (shape.kind == ScanKind::Sum || shape.kind == ScanKind::Prod) &&
         shape.out == shape.compute() && in.sizes[2] == 1 && in.sizes[0] <= kBlockedLanes &&
         in.sizes[1] >= kBlockedSteps;
}

TensorView offsetView(const TensorView& v, int64_t elements, std::vector<int64_t> sizes,
                      std::vector<int64_t> strides) {
  return {static_cast<uint8_t*>(v.data) + elements * isa::dtypeSize(v.dtype), v.dtype,
          std::move(sizes), std::move(strides)};
}

// A lane of N steps is cut into R rows of B steps (B about sqrt(N)): the rows are scanned side
// by side (R lanes of B steps), then the rows' totals in place (R steps), then every row past
// the first combines its other elements with the total before it (one elementwise launch); a
// tail of N mod B steps is scanned last and combined with the total before it. Three launches
// (five with a tail) of about sqrt(N) steps each instead of one of N steps. The sums are then
// associated by rows rather than strictly left to right: as deterministic, and their error
// bound no larger.
void blockedScan(const LaunchContext& ctx, const TensorView& out, const TensorView& in,
                 const ScanShape& shape) {
  const int64_t g = in.sizes[0], n = in.sizes[1];
  const int64_t b = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(n))));
  const int64_t r = n / b, m = r * b, t = n - m;
  const int64_t ig = in.strides[0], in1 = in.strides[1], og = out.strides[0], on = out.strides[1];
  launchScan(ctx, offsetView(out, 0, {g, b, r}, {og, on, b * on}), {},
             offsetView(in, 0, {g, b, r}, {ig, in1, b * in1}), shape);
  const TensorView totals = offsetView(out, (b - 1) * on, {g, r, 1}, {og, b * on, 0});
  const ScanShape totalShape{shape.kind, shape.out, shape.out};
  launchScan(ctx, totals, {}, totals, totalShape);
  const isa::DType cs = shape.compute();
  const std::string program = shape.kind == ScanKind::Sum ? "x0 x1 add" : "x0 x1 mul";
  if (r > 1 && b > 1) {
    const TensorView rows = offsetView(out, b * on, {g, r - 1, b - 1}, {og, b * on, on});
    const TensorView before = offsetView(out, (b - 1) * on, {g, r - 1, b - 1}, {og, b * on, 0});
    elementwise(ctx, rows, {rows, before}, program, cs, {});
  }
  if (t > 0) {
    const TensorView tailOut = offsetView(out, m * on, {g, t, 1}, {og, on, 0});
    launchScan(ctx, tailOut, {}, offsetView(in, m * in1, {g, t, 1}, {ig, in1, 0}), shape);
    const TensorView last = offsetView(out, (m - 1) * on, {g, t, 1}, {og, 0, 0});
    elementwise(ctx, tailOut, {tailOut, last}, program, cs, {});
  }
}

}  // namespace

void scan(const LaunchContext& ctx, const TensorView& out, const TensorView& indices,
          const TensorView& in, ScanKind kind) {
  if (in.sizes.size() != 3) fail("operands must be 3-D [G, N, C], got " + sizesText(in.sizes));
  checkOperand("in", in, in.sizes);
  checkOperand("out", out, in.sizes);
  ScanShape shape{kind, in.dtype, out.dtype};
  const bool floatIn = isa::isFloat(in.dtype);
  // Float scans compute in f32: f64 would lose its precision.
  if (in.dtype == DType::F64 || out.dtype == DType::F64) fail("f64 scans are not supported");
  if (kind == ScanKind::LogSumExp && (!floatIn || !isa::isFloat(out.dtype))) {
    fail("logsumexp scans float dtypes only, got in " + std::string(isa::dtypeName(in.dtype)) +
         " and out " + isa::dtypeName(out.dtype));
  }
  if (shape.withIndex()) {
    checkOperand("indices", indices, in.sizes);
    if (indices.dtype != DType::I64) {
      fail("indices must be i64, got " + std::string(isa::dtypeName(indices.dtype)));
    }
    if (out.dtype != in.dtype) {
      fail("max and min scans keep in's dtype, got out " + std::string(isa::dtypeName(out.dtype)));
    }
  }
  if (in.numel() == 0) return;
  if (blocks(shape, in)) return blockedScan(ctx, out, in, shape);
  launchScan(ctx, out, indices, in, shape);
}

}  // namespace mimic::ops
