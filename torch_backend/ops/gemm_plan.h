// How a GEMM is cut into tiles for a device, as a vendor library's heuristics choose.
//
// Every tile shape and pipeline depth that fits the scratchpad (a set of A and B tiles per
// stage, the f32 accumulator and the epilogue's buffers) is scored by an estimate of its time from
// the device's published properties: the matrix pipe's rate at its sustained clock, waves of tiles
// over the compute units, the operand bytes each step pulls through the cache (or HBM) at the
// share of bandwidth each busy unit gets, and the compulsory HBM traffic. The fastest shape
// wins, the larger one among near ties (fewer instructions and DMAs). Tiles are then visited
// in groups of `groupM` tile rows, so that a wave of workgroups reuses the same A and B panels
// from the cache.
#pragma once

#include <cstdint>

#include "mimic/mimic.h"

namespace mimic::ops::detail {

struct GemmTiles {
  int64_t m, n, k;
  int stages;      // buffer sets of A and B tiles: the loads of stages - 1 steps are in flight
  int64_t groupM;  // tile rows per group of the visiting order
};

// Scratchpad bytes a workgroup with these tiles uses, for elements of `elementBytes`; `readC`:
// the epilogue reads C's old tile (beta != 0).
int64_t gemmScratchpadBytes(const GemmTiles& t, int64_t elementBytes, bool readC);

GemmTiles planGemm(const mimicDeviceProperties& device, int64_t batch, int64_t m, int64_t n,
                   int64_t k, int64_t elementBytes, bool readC);

}  // namespace mimic::ops::detail
