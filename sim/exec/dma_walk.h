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

  uint64_t elements() const;
};

// The byte range [low, high) that a descriptor touches from `base` with the given strides.
struct Extent {
  int64_t low;
  int64_t high;
};
Extent extentOf(const DmaDescriptor& d, const int64_t* strides);

// Copies every element the descriptor describes: to scratchpad when `load`, else to HBM.
void walkDma(const DmaDescriptor& d, uint8_t* hbm, uint8_t* scratchpad, bool load);

}  // namespace mimic::exec
