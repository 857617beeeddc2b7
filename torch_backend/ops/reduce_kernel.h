// The device side of reduce (reduce.h): one kernel generator for every reduction, shape, layout
// and pass. reduce_plan.cpp plans a call (which dims go where, tile sizes, scratchpad layout) and
// passes everything that varies per call as arguments in the layout below.
//
// The kernel's model: after coalescing, `in` has kept dims and reduced dims. The innermost
// `descKept` kept dims and `descRed` reduced dims are gathered by one DMA descriptor into a
// scratchpad tile; the outermost of each is chunked (kept chunks over grid x, reduced chunks
// along the tile sequence). Outer kept dims are decomposed from grid y; outer reduced dims are
// the outer part of the tile sequence. The tile holds, per kept element, `redBlock` reduced
// elements:
//   rows layout     tile[kept][red]: VReduce per row;
//   columns layout  tile[red][kept]: one VBinary with VShape rows folds every reduced row
//                   into the accumulator (Sum, Prod, Max, Min).
// Tile rows are kArgTileRowBytes apart (padded, see reduce_plan.cpp).
//
// A workgroup walks tiles [z*T/Z, (z+1)*T/Z) of the T tiles (z = grid z, Z its size) in order,
// double-buffered: the next tile loads while the current one is folded. With Z > 1 each
// workgroup's result is a partial, stored kArgSplitStride bytes after the previous part's; a
// second launch of the same generator combines the partials (reduce_split.h).
#pragma once

#include <string>

#include "sim/isa/module.h"
#include "torch_backend/ops/reduce.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
struct ReduceShape {
  ReduceKind kind = ReduceKind::Sum;
  isa::DType in = isa::DType::F32;   // input element type
  isa::DType acc = isa::DType::F32;  // accumulation type (= in for Max/Min/ArgMax/ArgMin)
  isa::DType out = isa::DType::F32;  // output element type (I64 for ArgMax/ArgMin)
  ReduceMap map = ReduceMap::Identity;
  // ArgMax/ArgMin combining partials: `other` holds each candidate's index (I64), which the
  // result takes instead of the candidate's position in the tile.
  bool gather = false;
  bool storeValues = false;       // ArgMax/ArgMin partials: the extremes too, to kArgValuesOut
  bool divide = false;            // Sum: the result divided by the f32 kArgDivisor ...
  bool sqrt = false;              // ... and then its square root
  bool columns = false;           // the columns layout (see above)
  int descKept = 1, descRed = 1;  // dims in the DMA descriptor, 1..3 each, sum <= 4
  int gridKept = 0, loopRed = 0;  // outer dims: decomposed from grid y / the tile sequence

  bool hasOther() const { return pairs() || gather; }
  // Maps of two operands.
  bool pairs() const { return map == ReduceMap::Mul || map == ReduceMap::SquaredDifference; }
  // The second tile's element type: in's for Mul, indices for gather.
  isa::DType otherType() const { return gather ? isa::DType::I64 : in; }
  std::string key() const;
};

// Argument slots. Strides are in bytes; dims are listed innermost first within each group.
enum ReduceArg : int {
  kArgOut,             // out address of the workgroup's first kept element (before offsets)
  kArgIn,              // in address
  kArgOther,           // the second operand's address (hasOther)
  kArgValuesOut,       // where storeValues puts the extremes, laid out as out with in's type
  kArgSplitStride,     // bytes from one part's partials to the next (grid z)
  kArgKeptChunk,       // kc: elements of the outermost descriptor kept dim per workgroup
  kArgRedChunk,        // rc: elements of the outermost descriptor reduced dim per tile
  kArgRedChunks,       // tiles along the outermost descriptor reduced dim
  kArgTiles,           // T: kArgRedChunks times the product of the loop reduced dims
  kArgInnerKept,       // product of the inner descriptor kept dims
  kArgInnerRed,        // product of the inner descriptor reduced dims
  kArgRedDescTotal,    // product of all descriptor reduced dims (an ArgMax index stride)
  kArgTileRowBytes,    // the tile's row stride
  kArgOtherRowBytes,   // the second tile's row stride
  kArgAccRowBytes,     // the row stride of the tiles converted to the accumulation type
  kArgDivisor,         // f32 bits (divide)
  kArgTileSp0,         // scratchpad addresses: the tile of buffer set 0,
  kArgTileSp1,         //   of set 1,
  kArgOtherSp0,        //   the second operand's tile of set 0,
  kArgOtherSp1,        //   of set 1,
  kArgTileAccSp,       //   the tile in the accumulation type (when it differs from in),
  kArgOtherAccSp,      //   the second tile in the accumulation type (Mul, when it differs),
  kArgAccSp,           //   the accumulator (values),
  kArgPartialSp,       //   per-tile values (rows layout),
  kArgIndexSp,         //   the accumulated indices (ArgMax/ArgMin),
  kArgPartialIndexSp,  //   per-tile indices (ArgMax/ArgMin),
  kArgMaskSp,          //   three masks of keptCap bytes (ArgMax/ArgMin),
  kArgOutSp,           //   the accumulator converted to the output type
  kArgFirstDim,
};

// Per-dim records after kArgFirstDim, in this order: the descriptor's kept dims, its reduced
// dims, the grid kept dims, the loop reduced dims. Fields: the size; byte strides in in, in the
// tile, in out, in the scratchpad result, in the second operand and in its tile.
enum KeptDescField {
  kKeptSize,
  kKeptIn,
  kKeptTile,
  kKeptOut,
  kKeptOutSp,
  kKeptOther,
  kKeptOtherTile
};
enum RedDescField { kRedSize, kRedIn, kRedTile, kRedOther, kRedOtherTile };
enum GridField { kGridSize, kGridIn, kGridOut, kGridOther };
enum LoopField { kLoopSize, kLoopIn, kLoopOther };
constexpr int kKeptDescRecord = 7;
constexpr int kRedDescRecord = 5;
constexpr int kGridRecord = 4;
constexpr int kLoopRecord = 3;

inline int keptDescArg(const ReduceShape&, int i) {
  return kArgFirstDim + kKeptDescRecord * i;
}
inline int redDescArg(const ReduceShape& s, int i) {
  return keptDescArg(s, s.descKept) + kRedDescRecord * i;
}
inline int gridArg(const ReduceShape& s, int i) {
  return redDescArg(s, s.descRed) + kGridRecord * i;
}
inline int loopArg(const ReduceShape& s, int i) {
  return gridArg(s, s.gridKept) + kLoopRecord * i;
}
inline int argCount(const ReduceShape& s) {
  return loopArg(s, s.loopRed);
}

// Grid: x = chunks of the outermost descriptor kept dim, y = product of the grid kept dims,
// z = parts of the tile sequence.
isa::Function buildReduceKernel(const ReduceShape& shape);

}  // namespace mimic::ops::detail
