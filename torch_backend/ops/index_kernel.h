// The one generated kernel behind every index op (index.h): for each item of an item space, it
// reads index values, turns them into a byte offset into the "indexed" tensor and moves a block
// of elements between that address and the item's slot in the "item-side" tensor.
//
//   Gather      item side <- indexed     (index_select, gather)
//   Put         indexed   <- item side   (scatter, index_put)
//   AtomicAdd   indexed  += item side    with AtomicAdd (f32, i32, i64)
//   OrderedAdd  indexed  += item side    by load, add, store (any dtype): per tile, one load
//                                          and one store per distinct target, and the adds in
//                                          item order (duplicates add into the first one's block)
//
// The item space has 1..4 dims, dim 0 innermost (D0). Items are processed in tiles of up to
// `tileItems` consecutive D0 positions of one row (a row = one position of the outer item dims):
// the index tiles are loaded with one DMA per index tensor, cast to i64, wrapped (index_put's
// negative indices), range-checked and turned into byte offsets with vector instructions; then
// each item costs one SLoad and one DMA (or atomic). At most `window` item DMAs are in flight:
// enough for the HBM bandwidth, as more would only cost the timing model host time. An index
// outside [0, size) (after wrapping) makes the workgroup fault on purpose with a DMA from HBM
// address 0, which the driver reports as a sticky MIMIC_ERROR_ILLEGAL_ADDRESS naming the kernel.
//
// The block has 0..3 dims (dim 0 innermost); its outermost dim is split into chunks of `chunk`
// elements, one chunk per grid z. Grid x takes `d0PerWorkgroup` D0 positions from `firstD0` on
// (below d0Limit), grid y `rowsPerWorkgroup` rows from `firstRow` on (below rowLimit); a
// workgroup goes through its rows and tiles in order, so the caller gets a serial order where it
// needs one by giving one workgroup everything along x and y (and launching ranges in order).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/isa/module.h"

namespace mimic::ops::detail {

enum class IndexMode : uint8_t { Gather, Put, AtomicAdd, OrderedAdd };

constexpr int kMaxItemRank = 4;
constexpr int kMaxBlockRank = 3;

// Everything the generated code depends on; the rest are kernel arguments.
struct IndexKernelKey {
  IndexMode mode = IndexMode::Gather;
  isa::DType dtype = isa::DType::F32;
  std::vector<isa::DType> indexTypes;  // one per index tensor: I32 or I64
  int itemRank = 1;                    // 1..kMaxItemRank
  int blockRank = 0;                   // 0..kMaxBlockRank
  bool wrapNegative = false;           // index + size for negative indices (index_put)
  bool indexedMovesWithItem = false;   // the indexed tensor has item strides (gather, scatter)
  bool scaled = false;                 // multiply the item side by alpha (the add modes)
  bool atomicPerElement = false;       // AtomicAdd: the indexed block's dim 0 is not dense
  int indexTile = 256;                 // capacity of the index tiles, in items

  std::string cacheKey() const;
};

// Argument slots of the kernel. Strides are in bytes; arrays are indexed innermost first.
struct IndexArgs {
  int indexedBase, itemBase;
  int itemSize[kMaxItemRank];  // [0] is -1: D0 positions come from firstD0 and d0Limit
  int indexedItemStride[kMaxItemRank], itemItemStride[kMaxItemRank];
  int blockSize[kMaxBlockRank];
  int indexedBlockStride[kMaxBlockRank], itemBlockStride[kMaxBlockRank];
  std::vector<int> indexBase, indexDimSize, indexDimStride;
  std::vector<std::vector<int>> indexItemStride;  // [tensor][item dim]
  int chunk;                                      // elements of the outermost block dim per grid z
  int innerElements;                              // elements of the block below its outermost dim
  int tileItems;                                  // items per tile, at most the key's indexTile
  int firstD0, d0Limit, d0PerWorkgroup;           // grid x
  int firstRow, rowLimit, rowsPerWorkgroup;       // grid y; rows number the outer item positions
  int window;                                     // item DMAs in flight
  int alphaBits;                                  // the scale as raw bits of the dtype
  int targetSlab, alphaSlab;  // scratchpad addresses of OrderedAdd's target tile and alpha
  int count;
};
IndexArgs indexArgs(const IndexKernelKey& key);

// The scratchpad bytes the index tiles take; the data tile starts there.
int64_t indexScratchBytes(const IndexKernelKey& key);

// Builds the kernel; `name` shows in fault messages.
isa::Function buildIndexKernel(const IndexKernelKey& key, const std::string& name);

}  // namespace mimic::ops::detail
