#include "torch_backend/ops/row_plan.h"

#include <algorithm>

#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops::detail {
namespace {

using isa::DType;

constexpr int64_t kAlign = 64;  // every scratchpad buffer starts 64-byte aligned

int64_t alignUp(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

int64_t size(DType t) {
  return isa::dtypeSize(t);
}

// Scratchpad addresses (indexed by argument slot; 0 for slots the shape does not use) and the
// bytes used, for tiles of kc rows at `pitch` elements and chunks of nc columns.
struct Layout {
  std::vector<int64_t> at = std::vector<int64_t>(kRowArgCount, 0);
  int64_t bytes = 0;
};

Layout layout(const RowShape& s, int64_t kc, int64_t nc, int64_t pitch) {
  Layout l;
  auto place = [&](int slot, int64_t bytes) {
    l.at[slot] = l.bytes;
    l.bytes += alignUp(bytes);
  };
  const DType inputs[2] = {s.in0, s.in1};
  for (int i = 0; i < s.rowInputs(); ++i) {
    place(kRowSpRaw0 + i, kc * pitch * size(inputs[i]));
    if (inputs[i] == DType::F32) {
      l.at[kRowSpF0 + i] = l.at[kRowSpRaw0 + i];
    } else {
      place(kRowSpF0 + i, kc * pitch * 4);
    }
  }
  if (s.dropout) place(kRowSpRaw2, kc * pitch * 4);
  if (s.writeOut && s.out != DType::F32) place(kRowSpRawOut, kc * pitch * size(s.out));
  for (int i = 0; i < s.temps(); ++i) place(kRowSpT0 + i, kc * pitch * 4);
  for (int i = 0; i < kRowStats; ++i) place(kRowSpS0 + i, kc * 4);
  place(kRowSpStatRaw, 2 * kc * 4);
  const bool has[2] = {s.hasCol0, s.hasCol1};
  const DType cols[2] = {s.col0, s.col1};
  for (int i = 0; i < 2; ++i) {
    if (!has[i]) continue;
    place(kRowSpColRaw0 + i, nc * size(cols[i]));
    if (cols[i] == DType::F32) {
      l.at[kRowSpColF0 + i] = l.at[kRowSpColRaw0 + i];
    } else {
      place(kRowSpColF0 + i, nc * 4);
    }
  }
  if (s.part0) place(kRowSpAcc0, nc * 4);
  if (s.part1) place(kRowSpAcc1, nc * 4);
  return l;
}

// Tile rows a multiple of 1 KiB apart make the DMA's row copies alias in the host's caches
// (4K aliasing, several times slower to interpret): such rows get 64 bytes of padding.
int64_t pitchOf(int64_t nc) {
  return nc * 4 % 1024 == 0 ? nc + 16 : nc;
}

}  // namespace

RowPlan planRows(const RowCall& call, int device) {
  RowPlan p;
  p.shape = call.shape;
  p.g = call.in0.sizes[0];
  p.c = call.in0.sizes[1];
  p.n = call.in0.sizes[2];
  const int64_t usable = static_cast<int64_t>(scratchpadBytes(device)) * 15 / 16;
  int64_t budget = usable / 2;
  auto fits = [&](int64_t kc, int64_t nc) {
    return layout(p.shape, kc, nc, pitchOf(nc)).bytes <= budget;
  };
  // A row that fits only the whole scratchpad is still read once: one workgroup per unit.
  if (!fits(1, p.n)) budget = usable;
  p.shape.chunked = !fits(1, p.n);
  if (p.shape.chunked) budget = usable / 2;
  if (!p.shape.chunked) {
    p.nc = p.n;
    // As many rows as fit, but no more than spread the rows over two workgroups per unit.
    const int64_t units = computeUnits(device);
    const int64_t perGridRow = std::max<int64_t>(1, (2 * units + p.g - 1) / p.g);
    int64_t kc = std::max<int64_t>(1, (p.c + perGridRow - 1) / perGridRow);
    int64_t lo = 1, hi = kc;  // the largest kc <= the spread one that fits
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (fits(mid, p.n)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    p.kc = lo;
  } else {
    p.kc = 1;
    int64_t lo = 1, hi = p.n;
    while (lo < hi) {
      const int64_t mid = (lo + hi + 1) / 2;
      if (fits(1, mid)) {
        lo = mid;
      } else {
        hi = mid - 1;
      }
    }
    // Whole lane groups per chunk.
    p.nc = lo >= 64 ? lo / 64 * 64 : lo;
  }
  p.pitch = pitchOf(p.nc);
  return p;
}

std::vector<int64_t> rowArguments(const RowPlan& p, const RowCall& call) {
  const RowShape& s = p.shape;
  std::vector<int64_t> args = layout(s, p.kc, p.nc, p.pitch).at;
  args[kRowG] = p.g;
  args[kRowC] = p.c;
  args[kRowN] = p.n;
  args[kRowKc] = p.kc;
  args[kRowNc] = p.nc;
  args[kRowEps] = scalarBits(call.eps, DType::F32);
  args[kRowInvN] = scalarBits(p.n > 0 ? 1.0 / static_cast<double>(p.n) : 0.0, DType::F32);
  args[kRowPitch] = p.pitch;
  auto rowOperand = [&](int slot, const TensorView& v) {
    if (v.data == nullptr) return;
    const int64_t e = size(v.dtype);
    args[slot + kOpAddr] = reinterpret_cast<int64_t>(v.data);
    args[slot + kOpG] = v.strides[0] * e;
    args[slot + kOpC] = v.strides[1] * e;
    args[slot + kOpN] = v.strides[2] * e;
  };
  rowOperand(kRowIn0, call.in0);
  rowOperand(kRowIn1, call.in1);
  rowOperand(kRowOut, call.out);
  rowOperand(kRowSum, call.sum);
  rowOperand(kRowIn2, call.in2);
  args[kRowScale] = scalarBits(call.scale, DType::F32);
  const TensorView* stats[2] = {&call.stat0, &call.stat1};
  for (int i = 0; i < 2; ++i) {
    if (stats[i]->data == nullptr) continue;
    const int slot = kRowStat0 + i * kStFields;
    const int64_t e = size(stats[i]->dtype);
    args[slot + kStAddr] = reinterpret_cast<int64_t>(stats[i]->data);
    args[slot + kStG] = stats[i]->strides[0] * e;
    args[slot + kStC] = stats[i]->strides[1] * e;
  }
  const TensorView* cols[2] = {&call.col0, &call.col1};
  for (int i = 0; i < 2; ++i) {
    if (cols[i]->data == nullptr) continue;
    const int slot = kRowCol0 + i * kColFields;
    args[slot + kColAddr] = reinterpret_cast<int64_t>(cols[i]->data);
    args[slot + kColN] = cols[i]->strides[0] * size(cols[i]->dtype);
  }
  args[kRowPart0] = reinterpret_cast<int64_t>(call.part0);
  args[kRowPart1] = reinterpret_cast<int64_t>(call.part1);
  return args;
}

}  // namespace mimic::ops::detail
