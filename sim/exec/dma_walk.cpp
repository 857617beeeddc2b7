#include "sim/exec/dma_walk.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace mimic::exec {

uint64_t DmaDescriptor::elements() const {
  uint64_t n = 1;
  for (int64_t c : count) {
    // Saturates: no watchdog allows that many (a later count of 0 still makes it 0).
    if (__builtin_mul_overflow(n, static_cast<uint64_t>(c), &n)) n = UINT64_MAX;
  }
  return n;
}

bool DmaDescriptor::operator==(const DmaDescriptor& o) const {
  for (int i = 0; i < isa::kDmaDims; ++i) {
    if (count[i] != o.count[i] || hbmStride[i] != o.hbmStride[i] || spStride[i] != o.spStride[i]) {
      return false;
    }
  }
  return elementBytes == o.elementBytes;
}

bool extentOf(const DmaDescriptor& d, const int64_t* strides, Extent* extent) {
  Extent e{0, static_cast<int64_t>(d.elementBytes)};
  for (int i = 0; i < isa::kDmaDims; ++i) {
    int64_t span = 0;
    if (__builtin_mul_overflow(d.count[i] - 1, strides[i], &span) ||
        __builtin_add_overflow(e.low, std::min<int64_t>(0, span), &e.low) ||
        __builtin_add_overflow(e.high, std::max<int64_t>(0, span), &e.high)) {
      return false;
    }
  }
  *extent = e;
  return true;
}

namespace {

// One strided run of n elements. A fixed element size lets the compiler turn each copy into a
// single move; a runtime-sized memcpy per element costs a call.
template <typename Word>
void copyRun(uint8_t* h, int64_t hStride, uint8_t* s, int64_t sStride, int64_t n, bool load) {
  Word w;
  if (load) {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&w, h + i * hStride, sizeof(Word));
      std::memcpy(s + i * sStride, &w, sizeof(Word));
    }
  } else {
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(&w, s + i * sStride, sizeof(Word));
      std::memcpy(h + i * hStride, &w, sizeof(Word));
    }
  }
}

void copyRun(int64_t e, uint8_t* h, int64_t hStride, uint8_t* s, int64_t sStride, int64_t n,
             bool load) {
  if (hStride == e && sStride == e) {
    std::memcpy(load ? s : h, load ? h : s, n * e);
    return;
  }
  switch (e) {
    case 1:
      return copyRun<uint8_t>(h, hStride, s, sStride, n, load);
    case 2:
      return copyRun<uint16_t>(h, hStride, s, sStride, n, load);
    case 4:
      return copyRun<uint32_t>(h, hStride, s, sStride, n, load);
    case 8:
      return copyRun<uint64_t>(h, hStride, s, sStride, n, load);
    default:
      for (int64_t i = 0; i < n; ++i) {
        uint8_t* hp = h + i * hStride;
        uint8_t* sp = s + i * sStride;
        std::memcpy(load ? sp : hp, load ? hp : sp, e);
      }
  }
}

}  // namespace

void walkDma(const DmaDescriptor& d, uint8_t* hbm, uint8_t* scratchpad, bool load) {
  const int64_t e = d.elementBytes;
  // Walk HBM in the order its addresses run: when dimension 1 is the closer one in HBM (a
  // transposing load or store), it becomes the inner loop, so each run reads whole cache lines.
  // Stores swap only where the two dimensions cannot write the same bytes, so the order of
  // writes to any one address is unchanged.
  const int64_t inner1 = std::llabs(d.hbmStride[1]), outer0 = std::llabs(d.hbmStride[0]);
  const bool disjoint = inner1 > 0 && outer0 >= d.count[1] * inner1;
  const bool swap = d.count[1] > 1 && d.count[0] > 1 && inner1 < outer0 && (load || disjoint);
  const int inner = swap ? 1 : 0, outer = swap ? 0 : 1;
  for (int64_t i3 = 0; i3 < d.count[3]; ++i3) {
    for (int64_t i2 = 0; i2 < d.count[2]; ++i2) {
      uint8_t* h2 = hbm + i3 * d.hbmStride[3] + i2 * d.hbmStride[2];
      uint8_t* s2 = scratchpad + i3 * d.spStride[3] + i2 * d.spStride[2];
      for (int64_t o = 0; o < d.count[outer]; ++o) {
        copyRun(e, h2 + o * d.hbmStride[outer], d.hbmStride[inner], s2 + o * d.spStride[outer],
                d.spStride[inner], d.count[inner], load);
      }
    }
  }
}

}  // namespace mimic::exec
