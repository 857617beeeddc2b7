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

// Calls run(first, bytes) for each contiguous HBM byte range the descriptor touches from
// `address`, in the descriptor's order: whole rows where the innermost dimension is dense
// (forwards or backwards), else one element at a time.
template <typename Run>
void forEachHbmRun(const DmaDescriptor& d, uint64_t address, Run&& run) {
  const int64_t e = d.elementBytes;
  const bool dense = d.count[0] == 1 || d.hbmStride[0] == e || d.hbmStride[0] == -e;
  const int64_t runElements = dense ? d.count[0] : 1;
  const int64_t runBytes = runElements * e;
  const int64_t runStart = dense && d.hbmStride[0] < 0 ? (1 - d.count[0]) * e : 0;
  const int64_t inner = dense ? 1 : d.count[0];
  for (int64_t i3 = 0; i3 < d.count[3]; ++i3) {
    for (int64_t i2 = 0; i2 < d.count[2]; ++i2) {
      for (int64_t i1 = 0; i1 < d.count[1]; ++i1) {
        const int64_t row = i3 * d.hbmStride[3] + i2 * d.hbmStride[2] + i1 * d.hbmStride[1];
        for (int64_t i0 = 0; i0 < inner; ++i0) {
          run(address + static_cast<uint64_t>(row + i0 * d.hbmStride[0] + runStart),
              static_cast<uint64_t>(runBytes));
        }
      }
    }
  }
}

}  // namespace mimic::exec
