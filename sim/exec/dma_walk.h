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

}  // namespace mimic::exec
