// The functional part of a collective: what every rank's receive buffer holds when it ends.
// Reductions combine the ranks in rank order, one element type operation at a time (f16 and
// bf16 in f32, rounded after each step, as the device's vector unit does).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "mimic/mimic.h"

namespace mimic::driver {

size_t dataTypeBytes(mimicDataType type);

// sends[r] / recvs[r]: host views of rank r's buffers (null where the collective does not
// touch them). Buffers may overlap (in place): every result is computed before any is stored.
void applyCollective(const mimicCollectiveDesc& desc, const std::vector<const uint8_t*>& sends,
                     const std::vector<uint8_t*>& recvs);

}  // namespace mimic::driver
