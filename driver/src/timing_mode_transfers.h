// Which transfers move their bytes in timing-only mode (MIMIC_MODE=timing): copies, fills and
// collective calls up to kTimingModeMovedBytes. They carry the host's own control data
// (indices, sizes, flags), which programs send to the device, exchange between ranks and read
// back to decide what to do next: DDP checks that the ranks' parameters agree by gathering
// their count and broadcasting their sizes in device tensors, and builds its gradient buckets
// from an order it broadcasts and reads back. Bulk data (weights, activations, gradients) is
// far larger, so the memory committed stays small. Kernels still compute nothing: memory that a
// kernel would have written holds whatever bytes were there before. Moving bytes or not never
// changes a command, so simulated times are the same either way.
#pragma once

#include <cstdint>

namespace mimic::driver {

constexpr uint64_t kTimingModeMovedBytes = 64 * 1024;

// For a collective, `bytes` counts all of the call's buffers on a rank (sent and received).
inline bool movesBytes(bool timingOnly, uint64_t bytes) {
  return !timingOnly || bytes <= kTimingModeMovedBytes;
}

}  // namespace mimic::driver
