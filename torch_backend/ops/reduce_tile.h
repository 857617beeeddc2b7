// Code that folds one loaded tile of a reduction into the workgroup's accumulator
// (reduce_kernel.h): conversion to the accumulation type, the fused map, then the fold of the
// rows or columns layout for each kind.
#pragma once

#include "sim/isa/builder.h"
#include "torch_backend/ops/reduce_kernel.h"

namespace mimic::ops::detail {

class TileFold {
 public:
  TileFold(isa::KernelBuilder& k, const ReduceShape& s) : k_(k), s_(s) {}

  // Folds the tile in buffer set `set` (keptBlock kept by redBlock reduced elements) into the
  // accumulator. `first` is nonzero for the workgroup's first tile, which starts the
  // accumulator of the kinds without identity. j and c place the tile for ArgMax/ArgMin: its
  // index over the loop reduced dims and its first element along the outermost descriptor
  // reduced dim.
  void fold(int set, isa::Reg keptBlock, isa::Reg redBlock, isa::Reg first, isa::Reg j, isa::Reg c);

 private:
  isa::Reg arg(int i) { return k_.arg(i); }
  int tileArg(int set) const { return kArgTileSp0 + set; }
  int otherArg(int set) const { return kArgOtherSp0 + set; }
  int tileAccArg(int set) const { return s_.acc != s_.in ? kArgTileAccSp : tileArg(set); }
  int otherAccArg(int set) const { return s_.acc != s_.in ? kArgOtherAccSp : otherArg(set); }

  void oneRow();
  void vshape(isa::Reg rows, int64_t dstStride, isa::Reg srcStride, int64_t otherStride);
  // Converts the tiles to the accumulation type when they differ, then applies the map.
  void prepare(int set, isa::Reg rows, isa::Reg n);
  void rowsTile(int set, isa::Reg keptBlock, isa::Reg redBlock, isa::Reg first, isa::Reg j,
                isa::Reg c);
  void rowsProd(int set, isa::Reg keptBlock, isa::Reg redBlock);
  void rowsArg(int set, isa::Reg keptBlock, isa::Reg redBlock, isa::Reg first, isa::Reg j,
               isa::Reg c);
  // Replaces each row's position in the tile by the index the second tile holds there.
  void gatherIndices(int set, isa::Reg keptBlock);
  void columnsTile(int set, isa::Reg keptBlock, isa::Reg redBlock, isa::Reg first);
  // Branches to `skip` unless this is the workgroup's first tile.
  void unlessFirst(isa::Reg first, isa::Label skip) { k_.brz(first, skip); }
  void copy(isa::DType t, int dstArg, int srcArg, isa::Reg n);

  isa::KernelBuilder& k_;
  const ReduceShape& s_;
};

}  // namespace mimic::ops::detail
