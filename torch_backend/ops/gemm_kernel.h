// The device side of gemm (gemm.h): one workgroup computes a TM x TN tile of C for one batch
// entry, walking K in TK steps with double-buffered DMA loads of A and B tiles (gathered dense
// and row-major from any strides) and Mma into an f32 accumulator; then it applies alpha and
// beta and stores the tile converted to C's type.
#pragma once

#include <string>

#include "sim/isa/module.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
struct GemmShape {
  isa::DType type = isa::DType::F32;  // A, B and C
  bool readC = true;                  // beta != 0: C's old tile is loaded
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
  kGemmSpA0,   // scratchpad: A tiles (two buffers), B tiles, the f32 accumulator,
  kGemmSpA1,
  kGemmSpB0,
  kGemmSpB1,
  kGemmSpAcc,
  kGemmSpOld,     // C's old tile in its type, then as f32 (f16/bf16 only), and the result
  kGemmSpOldF32,  // in C's type (f16/bf16 only); these overlap the A and B tiles
  kGemmSpOut,
  kGemmArgCount,
};

// Grid: x = tiles along N, y = tiles along M, z = batch.
isa::Function buildGemmKernel(const GemmShape& shape);

}  // namespace mimic::ops::detail
