// The device side of the row ops (row.h): one kernel generator for softmax, log_softmax, their
// backward, layer norm and its backward. row_plan.cpp plans a call and passes what varies per
// call (addresses, sizes, strides, chunk sizes, the scratchpad layout, eps) as arguments.
//
// A workgroup owns `kc` consecutive rows along C of one grid row g (grid x: chunks of C, grid y:
// G). Rows live in the scratchpad as tiles [kc][nc], converted to f32; per-row statistics are
// f32 vectors [kc]. Two modes:
//   whole rows (nc = N): every input tile is loaded once, the statistics and the outputs are
//     computed from the scratchpad, and every output is stored once: one read and one write of
//     each operand.
//   long rows (`chunked`: a row does not fit, kc = 1): the row is streamed in chunks of nc
//     columns, once per pass, and only the statistics stay in the scratchpad:
//       softmax, log_softmax  pass 1: running max m and sum s of exp(x - m), the sum rescaled
//                             by exp(m_old - m_new) when the max grows (the online softmax);
//                             pass 2: the outputs.
//       their backward        pass 1: sum(dy y) or sum(dy); pass 2: the outputs.
//       layer norm            pass 1: the mean; pass 2: the variance about it; pass 3: outputs.
//       its backward          pass 1: sum(g) and sum(g xhat); pass 2: the outputs.
//     Inputs are read once per pass, outputs written once.
// A statistic broadcast along its row is applied row by row (the statistic as a scalar
// operand) or, for tiles with more rows than columns, column by column (the statistics as a
// vector with one element per row), whichever takes fewer instructions.
#pragma once

#include <string>

#include "sim/isa/module.h"

namespace mimic::ops::detail {

enum class RowKind {
  Softmax,
  LogSoftmax,
  SoftmaxBackward,
  LogSoftmaxBackward,
  LayerNorm,
  LayerNormBackward
};

// Everything the generated code depends on (the kernel cache key).
struct RowShape {
  RowKind kind = RowKind::Softmax;
  bool chunked = false;  // long rows (see above)
  // Element types: the row inputs (in0, in1), the row output, the statistics, the columns.
  isa::DType in0 = isa::DType::F32, in1 = isa::DType::F32, out = isa::DType::F32;
  isa::DType stat = isa::DType::F32, col0 = isa::DType::F32, col1 = isa::DType::F32;
  bool hasCol0 = false, hasCol1 = false;  // layer norm: weight, bias
  bool writeOut = true;                   // layer norm backward: grad_input wanted
  bool part0 = false, part1 = false;      // layer norm backward: weight / bias partial sums
  // Layer norm of x = in0 + in1, or (dropout) in0 + in1 * (in2 / kRowScale), f32 rows; x is
  // stored to kRowSum.
  bool residual = false, dropout = false;

  // Row inputs the kind reads: in0 (x, or dy for the backwards), in1 (y, or x).
  int rowInputs() const;
  bool readsStats() const { return kind == RowKind::LayerNormBackward; }
  bool writesStats() const { return kind == RowKind::LayerNorm; }
  int temps() const;  // f32 tiles of intermediate values
  std::string key() const;
};

// Row operands: the address, then byte strides along G, C and N.
enum RowOperandField { kOpAddr, kOpG, kOpC, kOpN, kOpFields };
// Statistics: the address, then byte strides along G and C.
enum RowStatField { kStAddr, kStG, kStC, kStFields };
// Columns: the address, then the byte stride along N.
enum RowColField { kColAddr, kColN, kColFields };

constexpr int kRowTemps = 3;  // at most, T0..T2
constexpr int kRowStats = 6;  // f32 vectors [kc]: S0..S5

// Argument slots.
enum RowArg : int {
  kRowG,
  kRowC,
  kRowN,
  kRowKc,    // rows of C per workgroup
  kRowNc,    // columns per chunk (N for whole rows)
  kRowEps,   // f32 bits
  kRowInvN,  // f32 bits of 1 / N
  kRowIn0,
  kRowIn1 = kRowIn0 + kOpFields,
  kRowOut = kRowIn1 + kOpFields,
  kRowSum = kRowOut + kOpFields,      // layer norm with a residual: in0 + in1
  kRowIn2 = kRowSum + kOpFields,      // the residual's dropout mask
  kRowStat0 = kRowIn2 + kOpFields,    // mean
  kRowStat1 = kRowStat0 + kStFields,  // rstd
  kRowCol0 = kRowStat1 + kStFields,   // weight
  kRowCol1 = kRowCol0 + kColFields,   // bias
  kRowPart0 = kRowCol1 + kColFields,  // f32 [workgroups][N]: weight gradient partial sums
  kRowPart1,                          //   bias gradient partial sums
  // Tiles are [kc][nc] with rows kRowPitch elements apart (nc, padded: see row_plan.cpp), in
  // an operand's own type (raw tiles) or in f32; an f32 operand's raw tile is its f32 tile.
  kRowPitch,
  // Scratchpad byte addresses.
  kRowSpRaw0,
  kRowSpRaw1,
  kRowSpRawOut,
  kRowSpF0,
  kRowSpF1,
  kRowSpT0,
  kRowSpS0 = kRowSpT0 + kRowTemps,
  kRowSpStatRaw = kRowSpS0 + kRowStats,  // [2][kc] statistics in their own type (4 bytes each)
  kRowSpColRaw0,                         // [nc] columns in their own type, then as f32
  kRowSpColRaw1,
  kRowSpColF0,
  kRowSpColF1,
  kRowSpAcc0,  // [nc] f32 column sums (partials)
  kRowSpAcc1,
  kRowSpRaw2,  // in2's tile (f32: its own f32 tile)
  kRowScale,   // f32 bits: the dropout's keep probability, which in2 is divided by
  kRowArgCount,
};

// Grid: x = chunks of kc rows along C, y = G.
isa::Function buildRowKernel(const RowShape& shape);

}  // namespace mimic::ops::detail
