// The device side of sort (sort.h): one workgroup sorts one row in the scratchpad with a
// bitonic network over (key, index) pairs.
//
// Keys are i64 whose signed order is the order PyTorch's CPU sort gives the values:
//   integers and bool   the value itself;
//   floats              f32 (f16 and bf16 convert exactly), -0 made +0 and every NaN the one
//                       quiet NaN, then the bits as i32 with the magnitude bits flipped for
//                       negative values: ascending bits are ascending values, NaN largest;
//   descending          the bitwise not of the key, so that the network always sorts
//                       ascending (NaN then comes first, as on the CPU).
// Each pair compares (key, index) lexicographically: the indices make every pair distinct, so
// the network's result is the one stable order. Keys of 32 bits (every type but i64) are
// packed with their index into one i64, key * 2^32 + index, which orders as the pair does: a
// compare-exchange is then a min and a max, and the index buffers stay unused. The row is padded to
// P, a power of two, with (INT64_MAX, index >= N) pairs, which sort after every real pair and are
// not stored.
//
// The network has log2(P) stages k = 2, 4, .., P, each of steps j = k/2, .., 1 comparing
// element i with i + j inside blocks of 2j. Stage k sorts blocks of k alternately ascending
// and descending; the descending blocks are bitwise negated (keys and indices) for the stage,
// which reverses their order, so that every step is one ascending compare-exchange of the
// whole row: a 2-D vector shape [P / 2j rows][j elements], rows 2j elements apart. Steps
// ping-pong between two buffers, so that a step is a min and a max (packed keys) or three
// compares, two mask ops and four selects (i64 keys), each over P/2 elements.
//
// Values are rebuilt from the sorted keys (the inverse of the key map), indices stored as i64.
//
// Rows longer than a workgroup sorts (P > L, L the local network's length) take the same
// network over the whole row in passes, the pairs in an HBM workspace ([R][P] keys and
// indices), with grid x = L-element pieces of a row and grid y = rows:
//   Chunk  each piece of L elements is keyed and sorted in the scratchpad, ascending or (odd
//          pieces) descending, and stored to the workspace: stages 2 .. L of the network;
//   Step   for stage k > L, each step j >= L pairs elements j apart: a workgroup loads L/2
//          pairs (two runs of L/2 elements), compare-exchanges them in the direction of their
//          block of k and stores them back;
//   Merge  the stage's steps j < L stay inside a piece: each piece is loaded, runs steps L/2
//          .. 1 in the direction of its block and is stored back, or, in the last stage (k =
//          P, `last`), its values and indices go to the outputs.
// A descending block is negated around its steps, as in the whole-row network.
#pragma once

#include <string>

#include "sim/isa/module.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
enum class SortPass { Whole, Chunk, Step, Merge };

struct SortShape {
  isa::DType in = isa::DType::F32;  // the values' type (f32, f16, bf16, i32, i64, u8)
  bool descending = false;
  bool writeValues = true, writeIndices = true;
  SortPass pass = SortPass::Whole;
  bool last = false;  // Merge: the network's last stage, which writes the outputs
  // Keys of 32 bits carry their index: key * 2^32 + index, one i64 whose order is the pairs'.
  bool packed() const { return in != isa::DType::I64; }
  std::string key() const;
};

// Operands: the address, then byte strides along rows and along N.
enum SortOperandField { kSortAddr, kSortRow, kSortN, kSortFields };

enum SortArg : int {
  kSortN_,        // elements per row
  kSortP,         // the local network's length L: the padded row, or a piece of it (a power of two)
  kSortStage,     // passes: the stage k (Step, Merge)
  kSortStep,      // Step: j
  kSortWorkKeys,  // passes: the workspace's keys and indices, [R][P] i64 each
  kSortWorkIdx,
  kSortWorkRow,  // bytes from one row of the workspace to the next (8P)
  kSortIn,
  kSortValues = kSortIn + kSortFields,
  kSortIndices = kSortValues + kSortFields,
  // Scratchpad byte addresses: two key and two index buffers of 8P bytes, three masks of P.
  kSortSpKeys0 = kSortIndices + kSortFields,
  kSortSpKeys1,
  kSortSpIdx0,
  kSortSpIdx1,
  kSortSpMask0,
  kSortSpMask1,
  kSortSpMask2,
  kSortArgCount,
};

// Scratchpad bytes a row padded to p elements takes.
constexpr int64_t sortScratchpadBytes(int64_t p) {
  return 35 * p;
}

// Grid: x = rows (Whole); x = pieces of a row, y = rows (passes).
isa::Function buildSortKernel(const SortShape& shape);

}  // namespace mimic::ops::detail
