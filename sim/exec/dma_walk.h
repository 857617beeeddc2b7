// DMA descriptors: up to four dimensions, each with a count and a byte stride on the HBM side
// and on the scratchpad side. Strides may be zero (broadcast) or negative.
#pragma once

#include <cstdint>

#include "sim/isa/isa.h"

namespace mimic::exec {

struct DmaDescriptor {
  uint32_t elementBytes = 4;
  int64_t count[isa::kDmaDims] = {1, 1, 1, 1};
  int64_t hbmStride[isa::kDmaDims] = {};
  int64_t spStride[isa::kDmaDims] = {};

  uint64_t elements() const;  // UINT64_MAX when the product does not fit
  bool operator==(const DmaDescriptor& o) const;
};

// The byte range [low, high) that a descriptor touches from `base` with the given strides.
struct Extent {
  int64_t low;
  int64_t high;
};
// False when the range does not fit in int64 (it then lies outside every memory).
bool extentOf(const DmaDescriptor& d, const int64_t* strides, Extent* extent);

// Copies every element the descriptor describes: to scratchpad when `load`, else to HBM.
void walkDma(const DmaDescriptor& d, uint8_t* hbm, uint8_t* scratchpad, bool load);

// Calls span(first, extent, bytes) for each row of the descriptor on the HBM side, in its
// order: the innermost dimension's elements as one span from `first` over `extent` bytes that
// holds `bytes` of them, when no gap between neighbouring elements is wider than `maxGap`
// (0: dense rows only; a cache passes its line size so that a span touches every line it
// covers), else one span per element. Strides may be zero or negative.
template <typename Span>
void forEachHbmSpan(const DmaDescriptor& d, uint64_t address, int64_t maxGap, Span&& span) {
  const int64_t e = d.elementBytes;
  const int64_t stride = d.hbmStride[0] < 0 ? -d.hbmStride[0] : d.hbmStride[0];
  const bool whole = d.count[0] == 1 || stride <= e + maxGap;
  const int64_t inner = whole ? 1 : d.count[0];
  const int64_t extent = whole ? (d.count[0] - 1) * stride + e : e;
  const int64_t bytes = whole ? d.count[0] * e : e;
  const int64_t start = whole && d.hbmStride[0] < 0 ? (1 - d.count[0]) * stride : 0;
  for (int64_t i3 = 0; i3 < d.count[3]; ++i3) {
    for (int64_t i2 = 0; i2 < d.count[2]; ++i2) {
      for (int64_t i1 = 0; i1 < d.count[1]; ++i1) {
        const int64_t row = i3 * d.hbmStride[3] + i2 * d.hbmStride[2] + i1 * d.hbmStride[1];
        for (int64_t i0 = 0; i0 < inner; ++i0) {
          span(address + static_cast<uint64_t>(row + i0 * d.hbmStride[0] + start),
               static_cast<uint64_t>(extent), static_cast<uint64_t>(bytes));
        }
      }
    }
  }
}

}  // namespace mimic::exec
