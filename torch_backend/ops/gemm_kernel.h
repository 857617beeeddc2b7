// The device side of gemm (gemm.h): one workgroup computes a TM x TN tile of C for one batch
// entry (tiles visited in groups of tile rows, gemm_plan.h), walking K in TK steps with
// multi-stage DMA loads of A and B tiles (the next stages - 1 steps' loads in flight, gathered
// dense and row-major from any strides) and Mma into an f32 accumulator; then it applies alpha
// and beta (to C's old tile, or to the bias tile), runs the epilogue program if there is one
// (gemm.h's GemmEpilogue, through the elementwise code generator) and stores the tile converted
// to C's type.
#pragma once

#include <string>
#include <vector>

#include "sim/isa/module.h"
#include "torch_backend/ops/elementwise_program.h"

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
  // Two batch dims: workgroup z is b0 * innerBatch + b1, each with strides of its own.
  bool batch2 = false;
  // The epilogue program (nullptr: none; rand and idx excluded): x0 is the accumulator, x<i+1>
  // extra input i, loaded as C's tile is, walked by column where inputColumnWalk[i] says so.
  const Program* program = nullptr;
  int temps = 0;             // countTemps(*program)
  int64_t tileElements = 0;  // TM x TN, which places the program's buffers
  size_t numScalars = 0;
  std::vector<bool> inputColumnWalk;

  std::string name() const;  // the kernel's: what it does, without the program
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

// Argument slots after the fixed ones (kGemmArgCount, or kGemmBiasArgCount with a bias); -1
// where the shape has none.
struct GemmExtraArgs {
  int innerBatch = -1;     // batch2: the size of the inner batch dim,
  int batch2Strides = -1;  // then its byte stride for A, B, C (and the bias)
  int inputs = -1;         // epilogue input i: base at inputs + kGemmInputSlots * i, then its
                           // byte strides: batch, inner batch, row, column
  int scalars = -1;        // s0.. as f32 bits
  int total = 0;
};
constexpr int kGemmInputSlots = 5;

GemmExtraArgs gemmExtraArgs(const GemmShape& shape);

// The element size of each tile buffer the epilogue program needs (gemm_plan.h's
// gemmEpilogueOffsets): its used inputs, its result in C's type (f16 and bf16 only: an f32
// result goes to the accumulator), its temporaries in f32.
std::vector<int> epilogueBufferBytes(const GemmShape& shape);

// Grid: x = tiles (tiles along M x along N, in grouped order), z = batch.
isa::Function buildGemmKernel(const GemmShape& shape);

}  // namespace mimic::ops::detail
