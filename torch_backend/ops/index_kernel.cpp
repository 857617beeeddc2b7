#include "torch_backend/ops/index_kernel.h"

#include <stdexcept>

#include "torch_backend/ops/index_writer.h"

namespace mimic::ops::detail {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::Label;
using isa::Reg;
using isa::ScalarOp;

namespace {

int64_t align(int64_t bytes, int64_t to) {
  return (bytes + to - 1) / to * to;
}

const char* modeName(IndexMode mode) {
  switch (mode) {
    case IndexMode::Gather:
      return "gather";
    case IndexMode::Put:
      return "put";
    case IndexMode::AtomicAdd:
      return "atomic";
    case IndexMode::OrderedAdd:
      return "ordered";
  }
  return "?";
}

}  // namespace

IndexScratch indexScratch(const IndexKernelKey& key) {
  IndexScratch s;
  const int64_t ti = key.indexTile;
  int64_t at = 0;
  for (DType t : key.indexTypes) {
    s.raw.push_back(at);
    at += align(ti * isa::dtypeSize(t), 8);
  }
  s.wide = at;
  s.offsets = s.wide + ti * 8;
  s.temp = s.offsets + ti * 8;
  s.first = s.temp + ti * 8;
  s.mask = s.first + ti * 8;
  s.mask2 = s.mask + align(ti, 8);
  s.flag = s.mask2 + align(ti, 8);
  s.end = align(s.flag + 8, 64);
  return s;
}

IndexWriter::IndexWriter(const IndexKernelKey& key, const std::string& name)
    : key_(key),
      a_(indexArgs(key)),
      s_(indexScratch(key)),
      k_(name, static_cast<uint32_t>(a_.count)),
      e_(isa::dtypeSize(key.dtype)),
      r_(key.itemRank),
      b_(key.blockRank) {}

isa::Function IndexWriter::build() {
  fault_ = k_.label();
  indexDesc_ = k_.desc();
  blockDesc_ = k_.desc();
  tileDesc_ = k_.desc();
  setUpBlock();
  if (key_.mode != IndexMode::AtomicAdd) blockDims(blockDesc_, a_.indexedBlockStride);
  if (key_.mode == IndexMode::OrderedAdd && key_.scaled) {
    Reg alpha = k_.arg(a_.alphaSlab), bits = k_.arg(a_.alphaBits);
    k_.fill(key_.dtype, alpha, 1.0, slabElems_);
    k_.binaryScalar(BinaryOp::Mul, key_.dtype, alpha, alpha, bits, slabElems_);
    k_.release(alpha);
    k_.release(bits);
  }

  // This workgroup's D0 range and rows.
  Reg d0Start = k_.workgroupId(0), d0End = k_.arg(a_.d0PerWorkgroup);
  k_.alu(ScalarOp::Mul, d0Start, d0Start, d0End);
  Reg first = k_.arg(a_.firstD0);
  k_.alu(ScalarOp::Add, d0Start, d0Start, first);
  k_.alu(ScalarOp::Add, d0End, d0End, d0Start);
  k_.release(first);
  Reg limit = k_.arg(a_.d0Limit);
  k_.alu(ScalarOp::Min, d0End, d0End, limit);
  k_.release(limit);
  Reg row = k_.workgroupId(1), rowEnd = k_.arg(a_.rowsPerWorkgroup);
  k_.alu(ScalarOp::Mul, row, row, rowEnd);
  first = k_.arg(a_.firstRow);
  k_.alu(ScalarOp::Add, row, row, first);
  k_.alu(ScalarOp::Add, rowEnd, rowEnd, row);
  k_.release(first);
  limit = k_.arg(a_.rowLimit);
  k_.alu(ScalarOp::Min, rowEnd, rowEnd, limit);
  k_.release(limit);
  for (int i = 1; i < r_; ++i) coords_[i] = k_.reg();
  if (key_.mode == IndexMode::Gather) storeToken_ = k_.li(0);  // waiting on token 0 is free

  Label rowLoop = k_.label(), rowNext = k_.label(), tileLoop = k_.label(), done = k_.label();
  Reg t0 = k_.reg();
  auto branchIfGe = [&](Reg a, Reg b, Label to) {
    Reg t = k_.reg();
    k_.cmp(Cond::Ge, t, a, b);
    k_.brnz(t, to);
    k_.release(t);
  };
  k_.bind(rowLoop);
  branchIfGe(row, rowEnd, done);
  coordinates(row);
  k_.mov(t0, d0Start);
  k_.bind(tileLoop);
  branchIfGe(t0, d0End, rowNext);
  tile(t0, d0End);
  Reg step = k_.arg(a_.tileItems);
  k_.alu(ScalarOp::Add, t0, t0, step);
  k_.release(step);
  k_.br(tileLoop);
  k_.bind(rowNext);
  k_.alu(ScalarOp::Add, row, row, 1);
  k_.br(rowLoop);
  k_.bind(done);
  k_.waitAll();
  k_.exit();

  // An index out of range: fault on purpose, with nothing in flight so that the fault is the
  // illegal address and not a scratchpad hazard.
  k_.bind(fault_);
  k_.waitAll();
  Reg zero = k_.li(0), one = k_.li(1);
  k_.dmaDim(indexDesc_, DType::U8, 0, one, one, one);
  k_.dmaLoad(one, zero, zero, indexDesc_);
  return k_.finish();
}

void IndexWriter::addArgTimes(Reg acc, int slot, Reg factor) {
  Reg t = k_.arg(slot);
  k_.alu(ScalarOp::Mul, t, t, factor);
  k_.alu(ScalarOp::Add, acc, acc, t);
  k_.release(t);
}

// The grid z chunk of the block's outermost dim, and the block's size in elements and bytes.
void IndexWriter::setUpBlock() {
  if (b_ == 0) {
    slabElems_ = k_.li(1);
    slabBytes_ = k_.li(e_);
    return;
  }
  Reg start = k_.workgroupId(2), chunk = k_.arg(a_.chunk);
  k_.alu(ScalarOp::Mul, start, start, chunk);
  nTop_ = k_.arg(a_.blockSize[b_ - 1]);
  k_.alu(ScalarOp::Sub, nTop_, nTop_, start);
  k_.alu(ScalarOp::Min, nTop_, nTop_, chunk);
  k_.release(chunk);
  indexedOffset_ = k_.arg(a_.indexedBlockStride[b_ - 1]);
  k_.alu(ScalarOp::Mul, indexedOffset_, indexedOffset_, start);
  itemOffset_ = k_.arg(a_.itemBlockStride[b_ - 1]);
  k_.alu(ScalarOp::Mul, itemOffset_, itemOffset_, start);
  k_.release(start);
  slabElems_ = k_.arg(a_.innerElements);
  k_.alu(ScalarOp::Mul, slabElems_, slabElems_, nTop_);
  slabBytes_ = k_.reg();
  k_.alu(ScalarOp::Mul, slabBytes_, slabElems_, e_);
}

// coords_[i] = the row's position along item dim i (row-major, dim 1 fastest).
void IndexWriter::coordinates(Reg row) {
  if (r_ < 2) return;
  Reg q = k_.reg();
  k_.mov(q, row);
  for (int i = 1; i < r_ - 1; ++i) {
    Reg size = k_.arg(a_.itemSize[i]);
    k_.alu(ScalarOp::Rem, coords_[i], q, size);
    k_.alu(ScalarOp::Div, q, q, size);
    k_.release(size);
  }
  k_.mov(coords_[r_ - 1], q);
  k_.release(q);
}

// base + the row's outer item offsets + t0 * stride[0] (+ *extra): the address of item t0.
Reg IndexWriter::operandAddress(int base, const int* strides, Reg t0, bool moves,
                                const Reg* extra) {
  Reg address = k_.arg(base);
  if (moves) {
    for (int i = 1; i < r_; ++i) addArgTimes(address, strides[i], coords_[i]);
    addArgTimes(address, strides[0], t0);
  }
  if (extra) k_.alu(ScalarOp::Add, address, address, *extra);
  return address;
}

// Dims 0..blockRank-1 of `d`: the block's sizes (this chunk's for the outermost) with the given
// HBM strides, dense in the scratchpad. A block of no dims is one element.
void IndexWriter::blockDims(isa::Desc d, const int* hbmStrides) {
  Reg count = k_.reg(), sp = k_.li(e_);
  if (b_ == 0) {
    k_.li(count, 1);
    k_.dmaDim(d, key_.dtype, 0, count, sp, sp);
  }
  for (int i = 0; i < b_; ++i) {
    if (i == b_ - 1) {
      k_.mov(count, nTop_);
    } else {
      Reg size = k_.arg(a_.blockSize[i]);
      k_.mov(count, size);
      k_.release(size);
    }
    Reg stride = k_.arg(hbmStrides[i]);
    k_.dmaDim(d, key_.dtype, i, count, stride, sp);
    k_.release(stride);
    k_.alu(ScalarOp::Mul, sp, sp, count);
  }
  k_.release(count);
  k_.release(sp);
}

// The item-side tile: n items of one block each, one after the other in the scratchpad.
void IndexWriter::tileDims(Reg n) {
  if (b_ > 0) blockDims(tileDesc_, a_.itemBlockStride);
  Reg stride = k_.arg(a_.itemItemStride[0]);
  k_.dmaDim(tileDesc_, key_.dtype, b_, n, stride, slabBytes_);
  k_.release(stride);
}

void IndexWriter::tile(Reg t0, Reg d0End) {
  Reg n = k_.arg(a_.tileItems), t = k_.reg();
  k_.alu(ScalarOp::Sub, t, d0End, t0);
  k_.alu(ScalarOp::Min, n, n, t);
  // Waits name their tokens where they can: a WaitAll costs the timing model time in proportion
  // to all the DMAs the workgroup has issued.
  if (key_.mode == IndexMode::Gather) k_.wait(storeToken_);  // it reads the data tile
  for (size_t i = 0; i < key_.indexTypes.size(); ++i) {
    const DType type = key_.indexTypes[i];
    Reg address = operandAddress(a_.indexBase[i], a_.indexItemStride[i].data(), t0, true, nullptr);
    Reg stride = k_.arg(a_.indexItemStride[i][0]), sp = k_.li(isa::dtypeSize(type));
    k_.dmaDim(indexDesc_, type, 0, n, stride, sp);
    k_.li(sp, s_.raw[i]);
    k_.dmaLoad(t, sp, address, indexDesc_);
    for (Reg r : {address, stride, sp}) k_.release(r);
  }
  Reg data = k_.li(s_.end);
  if (key_.mode != IndexMode::Gather) {
    Reg address = operandAddress(a_.itemBase, a_.itemItemStride, t0, true, itemOffset());
    tileDims(n);
    k_.dmaLoad(t, data, address, tileDesc_);
    k_.release(address);
  }
  const int loads = int(key_.indexTypes.size()) + (key_.mode != IndexMode::Gather);
  Reg token = k_.reg();
  for (int i = 0; i < loads; ++i) {
    k_.alu(ScalarOp::Sub, token, t, i);
    k_.wait(token);
  }
  k_.release(token);
  offsets(n);
  if (key_.mode == IndexMode::AtomicAdd && key_.scaled) {
    Reg bits = k_.arg(a_.alphaBits);
    k_.alu(ScalarOp::Mul, t, n, slabElems_);
    k_.binaryScalar(BinaryOp::Mul, key_.dtype, data, data, bits, t);
    k_.release(bits);
  }
  k_.release(data);
  k_.release(t);
  // The item offsets include the item positions: one base serves the whole tile.
  Reg base = operandAddress(a_.indexedBase, a_.indexedItemStride, t0, key_.indexedMovesWithItem,
                            indexedOffset());
  if (key_.mode == IndexMode::OrderedAdd) {
    orderedAdd(n, base);
  } else {
    transfers(n, base);
  }
  k_.release(base);
  if (key_.mode == IndexMode::Gather) {
    k_.waitAll();
    Reg address = operandAddress(a_.itemBase, a_.itemItemStride, t0, true, itemOffset());
    tileDims(n);
    data = k_.li(s_.end);
    k_.dmaStore(storeToken_, address, data, tileDesc_);
    k_.release(address);
    k_.release(data);
  }
  if (key_.mode == IndexMode::Put) k_.waitAll();  // the stores read the data tile
  k_.release(n);
}

// offsets[i] = the sum over index tensors of (wrapped, checked index) * indexed dim stride, plus
// item i's own offset in the indexed tensor (gather and scatter).
void IndexWriter::offsets(Reg n) {
  Reg wide = k_.li(s_.wide), offsets = k_.li(s_.offsets), temp = k_.li(s_.temp);
  Reg mask = k_.li(s_.mask), mask2 = k_.li(s_.mask2), src = k_.reg(), scalar = k_.reg();
  for (size_t i = 0; i < key_.indexTypes.size(); ++i) {
    k_.li(src, s_.raw[i]);
    if (key_.indexTypes[i] == DType::I32) {
      k_.cast(DType::I32, DType::I64, wide, src, n);
      k_.mov(src, wide);
    }
    Reg size = k_.arg(a_.indexDimSize[i]);
    if (key_.wrapNegative) {
      k_.compareScalar(Cond::Lt, DType::I64, mask, src, 0.0, n);
      k_.binaryScalar(BinaryOp::Add, DType::I64, temp, src, size, n);
      k_.select(DType::I64, wide, mask, temp, src, n);
      k_.mov(src, wide);
    }
    // Out of range when index < 0 or index - size >= 0.
    k_.compareScalar(Cond::Lt, DType::I64, mask, src, 0.0, n);
    k_.binaryScalar(BinaryOp::Sub, DType::I64, temp, src, size, n);
    k_.compareScalar(Cond::Ge, DType::I64, mask2, temp, 0.0, n);
    k_.binary(BinaryOp::Or, DType::U8, mask, mask, mask2, n);
    k_.li(scalar, s_.flag);
    k_.reduce(isa::ReduceOp::Max, DType::U8, scalar, mask, n);
    k_.sload(DType::U8, scalar, scalar);
    k_.brnz(scalar, fault_);
    k_.release(size);
    Reg stride = k_.arg(a_.indexDimStride[i]);
    if (i == 0) {
      k_.binaryScalar(BinaryOp::Mul, DType::I64, offsets, src, stride, n);
    } else {
      k_.binaryScalar(BinaryOp::Mul, DType::I64, temp, src, stride, n);
      k_.binary(BinaryOp::Add, DType::I64, offsets, offsets, temp, n);
    }
    k_.release(stride);
  }
  if (key_.indexedMovesWithItem) {
    Reg stride = k_.arg(a_.indexedItemStride[0]);
    k_.iota(DType::I64, temp, n);
    k_.binaryScalar(BinaryOp::Mul, DType::I64, temp, temp, stride, n);
    k_.binary(BinaryOp::Add, DType::I64, offsets, offsets, temp, n);
    k_.release(stride);
  }
  for (Reg r : {wide, offsets, temp, mask, mask2, src, scalar}) k_.release(r);
}

std::string IndexKernelKey::cacheKey() const {
  std::string key = std::string("index.") + modeName(mode) + "." + isa::dtypeName(dtype) + ".";
  for (DType t : indexTypes) key += isa::dtypeName(t);
  key += ".r" + std::to_string(itemRank) + "b" + std::to_string(blockRank) + "t" +
         std::to_string(indexTile) + (wrapNegative ? "w" : "") + (indexedMovesWithItem ? "m" : "") +
         (scaled ? "s" : "") + (atomicPerElement ? "e" : "");
  return key;
}

IndexArgs indexArgs(const IndexKernelKey& key) {
  IndexArgs a{};
  int next = 0;
  auto slot = [&] { return next++; };
  a.indexedBase = slot();
  a.itemBase = slot();
  for (int i = 0; i < kMaxItemRank; ++i) {
    a.itemSize[i] = i == 0 ? -1 : slot();
    a.indexedItemStride[i] = slot();
    a.itemItemStride[i] = slot();
  }
  for (int i = 0; i < kMaxBlockRank; ++i) {
    a.blockSize[i] = slot();
    a.indexedBlockStride[i] = slot();
    a.itemBlockStride[i] = slot();
  }
  for (size_t t = 0; t < key.indexTypes.size(); ++t) {
    a.indexBase.push_back(slot());
    a.indexDimSize.push_back(slot());
    a.indexDimStride.push_back(slot());
    a.indexItemStride.emplace_back();
    for (int i = 0; i < kMaxItemRank; ++i) a.indexItemStride.back().push_back(slot());
  }
  for (int* field : {&a.chunk, &a.innerElements, &a.tileItems, &a.firstD0, &a.d0Limit,
                     &a.d0PerWorkgroup, &a.firstRow, &a.rowLimit, &a.rowsPerWorkgroup, &a.window,
                     &a.alphaBits, &a.targetSlab, &a.alphaSlab}) {
    *field = slot();
  }
  a.count = next;
  return a;
}

int64_t indexScratchBytes(const IndexKernelKey& key) {
  return indexScratch(key).end;
}

isa::Function buildIndexKernel(const IndexKernelKey& key, const std::string& name) {
  if (key.indexTypes.empty() || key.itemRank < 1 || key.itemRank > kMaxItemRank ||
      key.blockRank < 0 || key.blockRank > kMaxBlockRank) {
    throw std::logic_error("buildIndexKernel: bad key " + key.cacheKey());
  }
  return IndexWriter(key, name).build();
}

}  // namespace mimic::ops::detail
