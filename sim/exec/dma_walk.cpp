#include "sim/exec/dma_walk.h"

#include <algorithm>
#include <cstring>

namespace mimic::exec {

uint64_t DmaDescriptor::elements() const {
  uint64_t n = 1;
  for (int64_t c : count) n *= static_cast<uint64_t>(c);
  return n;
}

Extent extentOf(const DmaDescriptor& d, const int64_t* strides) {
  Extent e{0, static_cast<int64_t>(d.elementBytes)};
  for (int i = 0; i < isa::kDmaDims; ++i) {
    const int64_t span = (d.count[i] - 1) * strides[i];
    e.low += std::min<int64_t>(0, span);
    e.high += std::max<int64_t>(0, span);
  }
  return e;
}

void walkDma(const DmaDescriptor& d, uint8_t* hbm, uint8_t* scratchpad, bool load) {
  const int64_t e = d.elementBytes;
  const bool contiguousRows = d.hbmStride[0] == e && d.spStride[0] == e;
  for (int64_t i3 = 0; i3 < d.count[3]; ++i3) {
    for (int64_t i2 = 0; i2 < d.count[2]; ++i2) {
      for (int64_t i1 = 0; i1 < d.count[1]; ++i1) {
        uint8_t* h = hbm + i3 * d.hbmStride[3] + i2 * d.hbmStride[2] + i1 * d.hbmStride[1];
        uint8_t* s = scratchpad + i3 * d.spStride[3] + i2 * d.spStride[2] + i1 * d.spStride[1];
        if (contiguousRows) {
          if (load) {
            std::memcpy(s, h, d.count[0] * e);
          } else {
            std::memcpy(h, s, d.count[0] * e);
          }
          continue;
        }
        for (int64_t i0 = 0; i0 < d.count[0]; ++i0) {
          uint8_t* hp = h + i0 * d.hbmStride[0];
          uint8_t* sp = s + i0 * d.spStride[0];
          if (load) {
            std::memcpy(sp, hp, e);
          } else {
            std::memcpy(hp, sp, e);
          }
        }
      }
    }
  }
}

}  // namespace mimic::exec
