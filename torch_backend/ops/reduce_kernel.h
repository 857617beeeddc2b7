// The device side of reduce (reduce.h): one kernel generator for every reduction, shape and
// layout. reduce.cpp plans a call (which dims go where, tile sizes, scratchpad layout) and
// passes everything that varies per call as arguments in the layout below.
//
// The kernel's model: after coalescing, `in` has kept dims and reduced dims. The innermost
// `descKept` kept dims and `descRed` reduced dims are gathered by one DMA descriptor into a
// scratchpad tile; the outermost of each is chunked (kept chunks over grid x, reduced chunks in
// a loop). Outer kept dims are decomposed from grid y; outer reduced dims are a second loop.
// The tile holds, per kept element, `redBlock` reduced elements:
//   rows layout     tile[kept][red]: VReduce per row;
//   columns layout  tile[red][kept]: one VBinary with VShape rows folds every reduced row
//                   into the accumulator (Sum, Prod, Max, Min).
// Tile rows are kArgTileRowBytes apart (padded, see reduce.cpp).
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
  bool columns = false;              // the columns layout (see above)
  int descKept = 1, descRed = 1;     // dims in the DMA descriptor, 1..3 each, sum <= 4
  int gridKept = 0, loopRed = 0;     // outer dims: decomposed from grid y / looped

  std::string key() const;
};

// Argument slots. Strides are in bytes; dims are listed innermost first within each group.
enum ReduceArg : int {
  kArgOut,           // out address of the workgroup's first kept element (before offsets)
  kArgIn,            // in address
  kArgKeptChunk,     // kc: elements of the outermost descriptor kept dim per workgroup
  kArgRedChunk,      // rc: elements of the outermost descriptor reduced dim per tile
  kArgInnerKept,     // product of the inner descriptor kept dims
  kArgInnerRed,      // product of the inner descriptor reduced dims
  kArgRedDescTotal,  // product of all descriptor reduced dims (an ArgMax index stride)
  kArgLoopTotal,     // product of the loop reduced dims
  kArgTileRowBytes,  // the tile's row stride
  kArgAccRowBytes,   // the row stride of the tile converted to the accumulation type
  kArgTileSp,        // scratchpad addresses: the tile,
  kArgTileAccSp,     //   the tile in the accumulation type (= kArgTileSp without a cast),
  kArgAccSp,         //   the accumulator (values),
  kArgPartialSp,     //   per-tile values (rows layout),
  kArgIndexSp,       //   the accumulated indices (ArgMax/ArgMin),
  kArgPartialIndexSp,
  kArgMaskSp,  //   three masks of keptCap bytes (ArgMax/ArgMin),
  kArgOutSp,   //   the accumulator converted to the output type
  kArgFirstDim,
};

// Per-dim records after kArgFirstDim, in this order.
constexpr int kKeptDescRecord = 5;  // size, in stride, tile stride, out stride, out-buffer stride
constexpr int kRedDescRecord = 3;   // size, in stride, tile stride
constexpr int kGridRecord = 3;      // size, in stride, out stride
constexpr int kLoopRecord = 2;      // size, in stride

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

// Grid: x = chunks of the outermost descriptor kept dim, y = product of the grid kept dims.
isa::Function buildReduceKernel(const ReduceShape& shape);

}  // namespace mimic::ops::detail
