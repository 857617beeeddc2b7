// The device side of gemm (gemm.h): one workgroup computes a TM x TN tile of C for one batch
// entry (tiles visited in groups of tile rows, gemm_plan.h), walking K in TK steps with
// multi-stage DMA loads of A and B tiles (the next stages - 1 steps' loads in flight, gathered
// dense and row-major from any strides) and Mma into an f32 accumulator; then it applies alpha
// and beta (to C's old tile, or to the bias tile) and stores the tile converted to C's type.
#pragma once

#include <string>

#include "sim/isa/module.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
constexpr int kGemmMaxStages = 3;

struct GemmShape {
  isa::DType type = isa::DType::F32;  // A, B and C
  bool readC = true;                  // beta != 0: C's old tile is loaded
  bool bias = false;                  // beta * the bias tile is added instead (kGemmBias...)
  int stages = 2;                     // buffer sets of A and B tiles, 2..kGemmMaxStages
  // Per operand (A, B, C): the DMA walks the tile column by column, because the matrix is
  // contiguous along its rows (transposed): reading HBM in order is much faster to interpret.
  bool columnWalk[3] = {false, false, false};

  std::string key() const;
};

// Argument slots. Strides are in bytes.
enum GemmArg : int {
  kGemmC,
  kGemmA,
  kGemmB,
  kGemmM,
  kGemmN,
  kGemmK,
  kGemmABatch,
  kGemmARow,  // along M
  kGemmACol,  // along K
  kGemmBBatch,
  kGemmBRow,  // along K
  kGemmBCol,  // along N
  kGemmCBatch,
  kGemmCRow,
  kGemmCCol,
  kGemmTileM,
  kGemmTileN,
  kGemmTileK,
  kGemmAlpha,  // f32 bits
  kGemmBeta,   // f32 bits
  kGemmSpA0,   // scratchpad: A tiles (one per stage), B tiles, the f32 accumulator,
  kGemmSpB0 = kGemmSpA0 + kGemmMaxStages,
  kGemmSpAcc = kGemmSpB0 + kGemmMaxStages,
  kGemmSpOld,     // C's old tile in its type, then as f32 (f16/bf16 only), and the result
  kGemmSpOldF32,  // in C's type (f16/bf16 only); these overlap the A and B tiles
  kGemmSpOut,
  kGemmTilesM,  // tiles along M and N, and tile rows per group of the visiting order
  kGemmTilesN,
  kGemmGroupM,
  kGemmArgCount,
  // The bias (GemmShape::bias; only its kernels take these): address, byte strides.
  kGemmBias = kGemmArgCount,
  kGemmBiasBatch,
  kGemmBiasRow,
  kGemmBiasCol,
  kGemmBiasArgCount,
};

// Grid: x = tiles (tiles along M x along N, in grouped order), z = batch.
isa::Function buildGemmKernel(const GemmShape& shape);

}  // namespace mimic::ops::detail
