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
#include <vector>

#include "mimic/mimic.h"

namespace mimic::ops::detail {

struct GemmTiles {
  int64_t m, n, k;
  int stages;      // buffer sets of A and B tiles: the loads of stages - 1 steps are in flight
  int64_t groupM;  // tile rows per group of the visiting order
};

// Where the buffers of an epilogue program (gemm.h's GemmEpilogue) go in scratchpad, for tiles
// of `tileElements`: one tile-sized buffer per entry of `bufferElementBytes` (the element size
// of each loaded input, the output, each temporary), 64-byte aligned, after the accumulator and
// C's old tile; they overlap the A and B tiles, whose loads are done. The last offset is the end.
std::vector<int64_t> gemmEpilogueOffsets(int64_t tileElements, int64_t elementBytes, bool readC,
                                         const std::vector<int>& bufferElementBytes);

// Scratchpad bytes a workgroup with these tiles uses, for elements of `elementBytes`; `readC`:
// the epilogue reads C's old tile (beta != 0) or a bias; `epilogueBuffers`: as above.
int64_t gemmScratchpadBytes(const GemmTiles& t, int64_t elementBytes, bool readC,
                            const std::vector<int>& epilogueBuffers = {});

GemmTiles planGemm(const mimicDeviceProperties& device, int64_t batch, int64_t m, int64_t n,
                   int64_t k, int64_t elementBytes, bool readC,
                   const std::vector<int>& epilogueBuffers = {});

}  // namespace mimic::ops::detail
