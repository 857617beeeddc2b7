// The code generator of the index kernel (index_kernel.h). index_kernel.cpp writes the set-up,
// the row and tile loops and the vector index arithmetic; index_items.cpp the per-item loops.
#pragma once

#include <string>
#include <vector>

#include "sim/isa/builder.h"
#include "torch_backend/ops/index_kernel.h"

namespace mimic::ops::detail {

// Scratchpad layout of the index tiles (compile-time, from the key): each index tensor's tile
// as loaded, i64 work tiles, u8 masks. The data tile starts at `end`.
struct IndexScratch {
  std::vector<int64_t> raw;
  int64_t wide, offsets, temp, first, mask, mask2, flag, end;
};
IndexScratch indexScratch(const IndexKernelKey& key);

class IndexWriter {
 public:
  IndexWriter(const IndexKernelKey& key, const std::string& name);
  isa::Function build();

 private:
  using Reg = isa::Reg;

  // index_kernel.cpp
  void setUpBlock();
  void coordinates(Reg row);
  Reg operandAddress(int base, const int* strides, Reg t0, bool moves, const Reg* extra);
  void blockDims(isa::Desc d, const int* hbmStrides);
  void tileDims(Reg n);
  void tile(Reg t0, Reg d0End);
  void offsets(Reg n);
  const Reg* itemOffset() const { return key_.blockRank > 0 ? &itemOffset_ : nullptr; }
  const Reg* indexedOffset() const { return key_.blockRank > 0 ? &indexedOffset_ : nullptr; }
  void addArgTimes(Reg acc, int slot, Reg factor);  // acc += arg[slot] * factor

  // index_items.cpp
  void transfers(Reg n, Reg base);
  void orderedAdd(Reg n, Reg base);
  void windowWait(Reg token, Reg window, Reg temp);
  void atomics(Reg address, Reg slot);
  void runs(int level, int first, Reg base, Reg sp, Reg runLength, Reg runBytes);

  const IndexKernelKey& key_;
  const IndexArgs a_;
  const IndexScratch s_;
  isa::KernelBuilder k_;
  const int e_, r_, b_;
  isa::Label fault_{};
  isa::Desc indexDesc_{}, blockDesc_{}, tileDesc_{};
  Reg coords_[kMaxItemRank] = {};  // [1, itemRank): the row's position in the outer item dims
  Reg nTop_{}, slabElems_{}, slabBytes_{}, indexedOffset_{}, itemOffset_{};
  Reg storeToken_{};  // Gather: the previous tile's store
};

}  // namespace mimic::ops::detail
