// The per-item loops of the index kernel: where the time of every index op goes.
#include "torch_backend/ops/index_writer.h"

namespace mimic::ops::detail {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::Label;
using isa::Reg;
using isa::ScalarOp;

// Tokens count up by one per DMA, so waiting for `token - window` keeps at most `window` item
// DMAs in flight without draining the pipeline.
void IndexWriter::windowWait(Reg token, Reg window, Reg temp) {
  k_.alu(ScalarOp::Sub, temp, token, window);
  k_.wait(temp);
}

// Gather, Put and AtomicAdd: one SLoad and one transfer per item, in item order.
void IndexWriter::transfers(Reg n, Reg base) {
  Reg slot = k_.li(s_.end), offset = k_.li(s_.offsets), end = k_.reg();
  k_.alu(ScalarOp::Mul, end, n, 8);
  k_.alu(ScalarOp::Add, end, end, offset);
  const bool dma = key_.mode != IndexMode::AtomicAdd;
  Reg window = dma ? k_.arg(a_.window) : Reg{};
  Reg address = k_.reg(), token = k_.reg();
  Label loop = k_.label();
  k_.bind(loop);
  k_.sload(DType::I64, address, offset);
  k_.alu(ScalarOp::Add, address, address, base);
  if (key_.mode == IndexMode::Gather) {
    k_.dmaLoad(token, slot, address, blockDesc_);
    windowWait(token, window, address);
  } else if (key_.mode == IndexMode::Put) {
    k_.dmaStore(token, address, slot, blockDesc_);
    windowWait(token, window, address);
  } else {
    atomics(address, slot);
  }
  k_.alu(ScalarOp::Add, slot, slot, slabBytes_);
  k_.alu(ScalarOp::Add, offset, offset, 8);
  k_.cmp(Cond::Lt, token, offset, end);
  k_.brnz(token, loop);
  for (Reg r : {slot, offset, end, address, token}) k_.release(r);
  if (dma) k_.release(window);
}

// OrderedAdd in passes over the tile, so that its loads and stores overlap: (0) first[j] = the
// first item with item j's offset; (1) each first item loads its target block; (2) in item
// order, each item's block is added into its first item's target block; (3) the first items
// store their blocks. Tiles follow each other, so a later tile sees the stores.
void IndexWriter::orderedAdd(Reg n, Reg base) {
  Reg offset = k_.li(s_.offsets), first = k_.li(s_.first), end = k_.reg();
  Reg all = k_.li(s_.offsets), temp = k_.li(s_.temp), mask = k_.li(s_.mask), v = k_.reg();
  k_.alu(ScalarOp::Mul, end, n, 8);
  k_.alu(ScalarOp::Add, end, end, offset);
  Label loop0 = k_.label();
  k_.bind(loop0);  // no DMA in flight: the vector operands' hazard checks stay cheap
  k_.sload(DType::I64, v, offset);
  k_.binaryScalar(BinaryOp::Sub, DType::I64, temp, all, v, n);
  k_.compareScalar(Cond::Eq, DType::I64, mask, temp, 0.0, n);
  k_.reduce(isa::ReduceOp::ArgMax, DType::U8, first, mask, n);  // the first 1
  k_.alu(ScalarOp::Add, offset, offset, 8);
  k_.alu(ScalarOp::Add, first, first, 8);
  k_.cmp(Cond::Lt, v, offset, end);
  k_.brnz(v, loop0);
  for (Reg r : {end, all, temp, mask}) k_.release(r);

  Reg target = k_.arg(a_.targetSlab), j = k_.li(0), token = k_.reg(), window = k_.arg(a_.window);
  k_.li(offset, s_.offsets);
  k_.li(first, s_.first);
  // Moves the block of each item that is the first occurrence of its target, between HBM and
  // the item's slab: loaded before the adds, stored back after them.
  auto moveFirstOccurrences = [&](bool load) {
    Label loop = k_.label(), skip = k_.label();
    k_.bind(loop);
    k_.sload(DType::I64, token, first);
    k_.cmp(Cond::Ne, token, token, j);
    k_.brnz(token, skip);
    k_.sload(DType::I64, v, offset);
    k_.alu(ScalarOp::Add, v, v, base);
    if (load) {
      k_.dmaLoad(token, target, v, blockDesc_);
    } else {
      k_.dmaStore(token, v, target, blockDesc_);
    }
    windowWait(token, window, v);
    k_.bind(skip);
    k_.alu(ScalarOp::Add, offset, offset, 8);
    k_.alu(ScalarOp::Add, first, first, 8);
    k_.alu(ScalarOp::Add, target, target, slabBytes_);
    k_.alu(ScalarOp::Add, j, j, 1);
    k_.cmp(Cond::Lt, token, j, n);
    k_.brnz(token, loop);
    k_.waitAll();  // stores: the next tile may load what these stored
  };
  moveFirstOccurrences(true);

  Reg slot = k_.li(s_.end), targets = k_.arg(a_.targetSlab);
  Reg alpha = key_.scaled ? k_.arg(a_.alphaSlab) : Reg{};
  k_.li(first, s_.first);
  k_.li(j, 0);
  Label loop2 = k_.label();
  k_.bind(loop2);
  k_.sload(DType::I64, v, first);
  k_.alu(ScalarOp::Mul, v, v, slabBytes_);
  k_.alu(ScalarOp::Add, v, v, targets);
  if (key_.scaled) {
    k_.fma(key_.dtype, v, slot, alpha, v, slabElems_);
  } else {
    k_.binary(BinaryOp::Add, key_.dtype, v, v, slot, slabElems_);
  }
  k_.alu(ScalarOp::Add, slot, slot, slabBytes_);
  k_.alu(ScalarOp::Add, first, first, 8);
  k_.alu(ScalarOp::Add, j, j, 1);
  k_.cmp(Cond::Lt, token, j, n);
  k_.brnz(token, loop2);
  k_.release(slot);
  if (key_.scaled) k_.release(alpha);

  k_.li(offset, s_.offsets);
  k_.li(first, s_.first);
  k_.mov(target, targets);
  k_.li(j, 0);
  moveFirstOccurrences(false);
  for (Reg r : {offset, first, target, j, v, token, window, targets}) k_.release(r);
}

// AtomicAdd needs dense HBM runs: the whole block when it is dense in the indexed tensor, else
// one run per block row (dim 0 dense) or per element.
void IndexWriter::atomics(Reg address, Reg slot) {
  const int first = key_.atomicPerElement ? 0 : 1;
  if (first >= b_) {
    k_.atomicAdd(key_.dtype, address, slot, slabElems_);
    return;
  }
  Reg sp = k_.reg(), runLength = k_.reg(), runBytes = k_.reg();
  k_.mov(sp, slot);
  if (first == 0) {
    k_.li(runLength, 1);
  } else {
    Reg size = k_.arg(a_.blockSize[0]);
    k_.mov(runLength, size);
    k_.release(size);
  }
  k_.alu(ScalarOp::Mul, runBytes, runLength, e_);
  runs(b_ - 1, first, address, sp, runLength, runBytes);
  for (Reg r : {sp, runLength, runBytes}) k_.release(r);
}

void IndexWriter::runs(int level, int first, Reg base, Reg sp, Reg runLength, Reg runBytes) {
  if (level < first) {
    k_.atomicAdd(key_.dtype, base, sp, runLength);
    k_.alu(ScalarOp::Add, sp, sp, runBytes);
    return;
  }
  Reg count = k_.reg(), at = k_.reg();
  if (level == b_ - 1) {
    k_.mov(count, nTop_);
  } else {
    Reg size = k_.arg(a_.blockSize[level]);
    k_.mov(count, size);
    k_.release(size);
  }
  k_.mov(at, base);
  Label loop = k_.label();
  k_.bind(loop);
  runs(level - 1, first, at, sp, runLength, runBytes);
  Reg stride = k_.arg(a_.indexedBlockStride[level]);
  k_.alu(ScalarOp::Add, at, at, stride);
  k_.release(stride);
  k_.alu(ScalarOp::Sub, count, count, 1);
  k_.brnz(count, loop);
  k_.release(count);
  k_.release(at);
}

}  // namespace mimic::ops::detail
