#include "torch_backend/ops/sort_kernel.h"

#include <cstdint>
#include <limits>

#include "sim/isa/builder.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;
using isa::UnaryOp;

constexpr double kMagnitudeBits = 2147483647.0;  // 0x7fffffff: flips a negative float's order

const char* passName(SortPass p) {
  static const char* const kNames[] = {"", ".chunk", ".step", ".merge"};
  return kNames[static_cast<int>(p)];
}

class SortGen {
 public:
  explicit SortGen(const SortShape& s) : s_(s), k_(s.key(), kSortArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // The operand's address of this workgroup's first element: row_, then start_ along N.
  Reg base(int operand);
  // The workspace's address of element `offset` (a register, in elements) of this row.
  Reg work(int which, Reg offset);
  void load();
  void makeKeys();
  void network();
  void merge(Reg size);      // the steps size/2 .. 1 over the local buffers
  void flip(Reg blockSize);  // negates the odd blocks of blockSize (descending this stage)
  void negate(Reg count, Reg keys, Reg idx);
  void step(Reg j);
  void packedStep(Reg j);
  // Packed keys: key * 2^32 + index from keys and the indices, and back (indices to idx_[0]).
  void pack(Reg keys, Reg idx, Reg count);
  void unpack(Reg count);
  void swapBuffers();
  void store();
  // Moves `count` i64 between the scratchpad and the workspace at `offset` of this row.
  void workDma(bool toWork, int which, Reg offset, Reg sp, Reg count);
  // f32 bits <-> ordered i32, in place over n elements at `bits`; `temp` takes n i32.
  void orderBits(Reg bits, Reg temp);
  void storeRow(int operand, DType type, Reg from);
  void chunk();
  void globalStep();
  void mergePass();
  // Runs `body` when `flag` (a register) is nonzero.
  template <typename Body>
  void when(Reg flag, const Body& body);

  const SortShape& s_;
  KernelBuilder k_;
  isa::Desc desc_{0};
  Reg zero_{}, one_{}, n_{}, p_{}, row_{}, start_{};
  Reg keys_[2]{}, idx_[2]{};  // [0]: the current buffers, [1]: the next step's
};

template <typename Body>
void SortGen::when(Reg flag, const Body& body) {
  isa::Label skip = k_.label();
  k_.brz(flag, skip);
  body();
  k_.bind(skip);
}

Reg SortGen::base(int operand) {
  Reg b = arg(operand + kSortAddr);
  k_.addScaledArg(b, row_, operand + kSortRow);
  k_.addScaledArg(b, start_, operand + kSortN);
  return b;
}

Reg SortGen::work(int which, Reg offset) {
  Reg address = arg(which), t = k_.reg();
  k_.addScaledArg(address, row_, kSortWorkRow);
  k_.alu(ScalarOp::Mul, t, offset, 8);
  k_.alu(ScalarOp::Add, address, address, t);
  k_.release(t);
  return address;
}

void SortGen::workDma(bool toWork, int which, Reg offset, Reg sp, Reg count) {
  if (s_.packed() && which == kSortWorkIdx) return;
  Reg address = work(which, offset), eight = k_.li(8);
  k_.dmaDim(desc_, DType::I64, 0, count, eight, eight);
  Reg token = toWork ? k_.dmaStore(address, sp, desc_) : k_.dmaLoad(sp, address, desc_);
  for (Reg r : {address, eight, token}) k_.release(r);
}

void SortGen::load() {
  // An i64 row is its own key: it goes straight to the key buffer.
  when(n_, [&] {
    Reg dst = arg(s_.in == DType::I64 ? kSortSpKeys0 : kSortSpKeys1), from = base(kSortIn);
    Reg elem = k_.li(isa::dtypeSize(s_.in)), stride = arg(kSortIn + kSortN);
    k_.dmaDim(desc_, s_.in, 0, n_, stride, elem);
    Reg token = k_.dmaLoad(dst, from, desc_);
    k_.waitAll();
    for (Reg r : {dst, from, elem, stride, token}) k_.release(r);
  });
}

void SortGen::orderBits(Reg bits, Reg temp) {
  Reg mask = arg(kSortSpMask0);
  k_.compareScalar(Cond::Lt, DType::I32, mask, bits, 0.0, n_);
  k_.binaryScalar(BinaryOp::Xor, DType::I32, temp, bits, kMagnitudeBits, n_);
  k_.select(DType::I32, bits, mask, temp, bits, n_);
  k_.release(mask);
}

void SortGen::makeKeys() {
  k_.vshape(one_, zero_, zero_, zero_);
  Reg keys = arg(kSortSpKeys0), raw = arg(kSortSpKeys1);
  when(n_, [&] {
    if (isa::isFloat(s_.in)) {
      Reg f = raw, nan = arg(kSortSpIdx0), mask = arg(kSortSpMask0);
      if (s_.in != DType::F32) {
        f = arg(kSortSpIdx1);
        k_.cast(s_.in, DType::F32, f, raw, n_);
      }
      k_.binaryScalar(BinaryOp::Add, DType::F32, f, f, 0.0, n_);  // -0 + 0 = +0
      k_.fill(DType::F32, nan, std::numeric_limits<double>::quiet_NaN(), n_);
      k_.compare(Cond::Ne, DType::F32, mask, f, f, n_);
      k_.select(DType::F32, f, mask, nan, f, n_);
      orderBits(f, nan);
      k_.cast(DType::I32, DType::I64, keys, f, n_);
      for (Reg r : {nan, mask}) k_.release(r);
      if (f.index != raw.index) k_.release(f);
    } else if (s_.in != DType::I64) {
      k_.cast(s_.in, DType::I64, keys, raw, n_);
    }
    if (s_.descending) k_.unary(UnaryOp::Not, DType::I64, keys, keys, n_);
  });
  // Padding: (INT64_MAX, N..P-1).
  Reg pad = k_.reg(), count = k_.reg(), t = k_.reg();
  k_.alu(ScalarOp::Sub, count, p_, n_);
  when(count, [&] {
    k_.alu(ScalarOp::Mul, t, n_, 8);
    k_.alu(ScalarOp::Add, pad, keys, t);
    k_.li(t, std::numeric_limits<int64_t>::max());
    k_.fill(DType::I64, pad, 0.0, count);
    k_.binaryScalar(BinaryOp::Or, DType::I64, pad, pad, t, count);
  });
  Reg idx = arg(kSortSpIdx0);
  k_.iota(DType::I64, idx, p_);
  if (s_.pass == SortPass::Chunk) k_.binaryScalar(BinaryOp::Add, DType::I64, idx, idx, start_, p_);
  if (s_.packed()) pack(keys, idx, n_);
  for (Reg r : {keys, raw, pad, count, t, idx}) k_.release(r);
}

void SortGen::pack(Reg keys, Reg idx, Reg count) {
  when(count, [&] {
    Reg shift = k_.li(int64_t{1} << 32);
    k_.vshape(one_, zero_, zero_, zero_);
    k_.binaryScalar(BinaryOp::Mul, DType::I64, keys, keys, shift, count);
    k_.binary(BinaryOp::Add, DType::I64, keys, keys, idx, count);
    k_.release(shift);
  });
}

void SortGen::unpack(Reg count) {
  Reg low = k_.li(0xffffffffLL), shift = k_.li(int64_t{1} << 32);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.binaryScalar(BinaryOp::And, DType::I64, idx_[0], keys_[0], low, count);
  k_.binary(BinaryOp::Sub, DType::I64, keys_[0], keys_[0], idx_[0], count);
  k_.binaryScalar(BinaryOp::Div, DType::I64, keys_[0], keys_[0], shift, count);
  k_.release(low);
  k_.release(shift);
}

void SortGen::negate(Reg count, Reg keys, Reg idx) {
  k_.vshape(one_, zero_, zero_, zero_);
  k_.unary(UnaryOp::Not, DType::I64, keys, keys, count);
  if (!s_.packed()) k_.unary(UnaryOp::Not, DType::I64, idx, idx, count);
}

void SortGen::flip(Reg blockSize) {
  isa::Label done = k_.label();
  Reg rows = k_.reg(), stride = k_.reg(), a = k_.reg();
  k_.cmp(Cond::Ge, rows, blockSize, p_);
  k_.brnz(rows, done);
  k_.alu(ScalarOp::Mul, stride, blockSize, 2);
  k_.alu(ScalarOp::Div, rows, p_, stride);
  k_.alu(ScalarOp::Mul, stride, stride, 8);
  k_.vshape(rows, stride, stride, zero_);
  for (Reg buffer : {keys_[0], idx_[0]}) {
    if (s_.packed() && buffer.index == idx_[0].index) break;
    k_.alu(ScalarOp::Mul, a, blockSize, 8);
    k_.alu(ScalarOp::Add, a, a, buffer);
    k_.unary(UnaryOp::Not, DType::I64, a, a, blockSize);
  }
  k_.bind(done);
  for (Reg r : {rows, stride, a}) k_.release(r);
}

void SortGen::step(Reg j) {
  if (s_.packed()) return packedStep(j);
  Reg rows = k_.reg(), stride = k_.reg(), offset = k_.reg(), keyHi = k_.reg(), idxHi = k_.reg(),
      half = k_.reg();
  Reg m0 = arg(kSortSpMask0), m1 = arg(kSortSpMask1), m2 = arg(kSortSpMask2);
  k_.alu(ScalarOp::Shr, half, p_, 1);
  k_.alu(ScalarOp::Div, rows, half, j);
  k_.alu(ScalarOp::Mul, stride, j, 16);
  k_.alu(ScalarOp::Mul, offset, j, 8);
  k_.alu(ScalarOp::Add, keyHi, keys_[0], offset);
  k_.alu(ScalarOp::Add, idxHi, idx_[0], offset);
  // swap = hi < lo, lexicographically on (key, index); masks are [rows][j], dense.
  k_.vshape(rows, j, stride, stride);
  k_.compare(Cond::Lt, DType::I64, m0, keyHi, keys_[0], j);
  k_.compare(Cond::Eq, DType::I64, m1, keyHi, keys_[0], j);
  k_.compare(Cond::Lt, DType::I64, m2, idxHi, idx_[0], j);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.binary(BinaryOp::And, DType::U8, m1, m1, m2, half);
  k_.binary(BinaryOp::Or, DType::U8, m0, m0, m1, half);
  k_.vshape(rows, stride, j, stride);
  Reg hi = m1;  // the next buffers' upper halves
  k_.select(DType::I64, keys_[1], m0, keyHi, keys_[0], j);
  k_.alu(ScalarOp::Add, hi, keys_[1], offset);
  k_.select(DType::I64, hi, m0, keys_[0], keyHi, j);
  k_.select(DType::I64, idx_[1], m0, idxHi, idx_[0], j);
  k_.alu(ScalarOp::Add, hi, idx_[1], offset);
  k_.select(DType::I64, hi, m0, idx_[0], idxHi, j);
  for (Reg r : {rows, stride, offset, keyHi, idxHi, half, m0, m1, m2}) k_.release(r);
}

void SortGen::packedStep(Reg j) {
  Reg rows = k_.reg(), stride = k_.reg(), offset = k_.reg(), hi = k_.reg(), out = k_.reg();
  k_.alu(ScalarOp::Shr, rows, p_, 1);
  k_.alu(ScalarOp::Div, rows, rows, j);
  k_.alu(ScalarOp::Mul, stride, j, 16);
  k_.alu(ScalarOp::Mul, offset, j, 8);
  k_.alu(ScalarOp::Add, hi, keys_[0], offset);
  k_.alu(ScalarOp::Add, out, keys_[1], offset);
  k_.vshape(rows, stride, stride, stride);
  k_.binary(BinaryOp::Min, DType::I64, keys_[1], keys_[0], hi, j);
  k_.binary(BinaryOp::Max, DType::I64, out, keys_[0], hi, j);
  for (Reg r : {rows, stride, offset, hi, out}) k_.release(r);
}

// The buffers' roles swap at run time: the registers exchange their addresses.
void SortGen::swapBuffers() {
  Reg t = k_.reg();
  for (Reg* pair : {keys_, idx_}) {
    k_.mov(t, pair[0]);
    k_.mov(pair[0], pair[1]);
    k_.mov(pair[1], t);
  }
  k_.release(t);
}

void SortGen::merge(Reg size) {
  Reg j = k_.reg();
  isa::Label steps = k_.label(), done = k_.label();
  k_.alu(ScalarOp::Shr, j, size, 1);
  k_.bind(steps);
  k_.brz(j, done);
  step(j);
  swapBuffers();
  k_.alu(ScalarOp::Shr, j, j, 1);
  k_.br(steps);
  k_.bind(done);
  k_.release(j);
}

void SortGen::network() {
  Reg size = k_.li(2), t = k_.reg();
  isa::Label stages = k_.label(), done = k_.label();
  k_.bind(stages);
  k_.cmp(Cond::Gt, t, size, p_);
  k_.brnz(t, done);
  flip(size);
  merge(size);
  flip(size);
  k_.alu(ScalarOp::Shl, size, size, 1);
  k_.br(stages);
  k_.bind(done);
  k_.release(size);
  k_.release(t);
}

void SortGen::storeRow(int operand, DType type, Reg from) {
  Reg to = base(operand), elem = k_.li(isa::dtypeSize(type)), stride = arg(operand + kSortN);
  k_.dmaDim(desc_, type, 0, n_, stride, elem);
  Reg token = k_.dmaStore(to, from, desc_);
  for (Reg r : {to, elem, stride, token}) k_.release(r);
}

void SortGen::store() {
  when(n_, [&] {
    if (s_.packed()) unpack(n_);
    k_.vshape(one_, zero_, zero_, zero_);
    if (s_.writeIndices) storeRow(kSortIndices, DType::I64, idx_[0]);
    if (!s_.writeValues) return;
    // The key buffer is free once read: the next buffers take the rebuilt values.
    Reg keys = keys_[0], out = keys;
    if (s_.descending) k_.unary(UnaryOp::Not, DType::I64, keys, keys, n_);
    if (isa::isFloat(s_.in)) {
      out = keys_[1];
      k_.cast(DType::I64, DType::I32, out, keys, n_);
      orderBits(out, idx_[1]);
      if (s_.in != DType::F32) {
        k_.cast(DType::F32, s_.in, idx_[1], out, n_);
        out = idx_[1];
      }
    } else if (s_.in != DType::I64) {
      out = keys_[1];
      k_.cast(DType::I64, s_.in, out, keys, n_);
    }
    storeRow(kSortValues, s_.in, out);
  });
}

void SortGen::chunk() {
  load();
  makeKeys();
  Reg odd = k_.workgroupId(0);
  k_.alu(ScalarOp::And, odd, odd, 1);
  when(odd, [&] { negate(p_, keys_[0], idx_[0]); });
  network();
  when(odd, [&] { negate(p_, keys_[0], idx_[0]); });
  workDma(true, kSortWorkKeys, start_, keys_[0], p_);
  workDma(true, kSortWorkIdx, start_, idx_[0], p_);
  k_.release(odd);
}

void SortGen::globalStep() {
  // Workgroup w takes pairs q = w L/2 .. (w + 1) L/2 - 1: the low elements from
  // lo = (q / j) 2j + q mod j on, the high ones j further, as one piece [lo run | hi run].
  Reg half = k_.reg(), lo = k_.reg(), hi = k_.reg(), j = arg(kSortStep), t = k_.workgroupId(0);
  k_.alu(ScalarOp::Shr, half, p_, 1);
  k_.alu(ScalarOp::Mul, t, t, half);
  k_.alu(ScalarOp::Div, lo, t, j);
  k_.alu(ScalarOp::Mul, lo, lo, j);
  k_.alu(ScalarOp::Mul, lo, lo, 2);
  k_.alu(ScalarOp::Rem, t, t, j);
  k_.alu(ScalarOp::Add, lo, lo, t);
  k_.alu(ScalarOp::Add, hi, lo, j);
  Reg spHi = k_.reg();
  for (int which : {0, 1}) {
    const int area = which == 0 ? kSortWorkKeys : kSortWorkIdx;
    Reg sp = which == 0 ? keys_[0] : idx_[0];
    workDma(false, area, lo, sp, half);
    k_.alu(ScalarOp::Mul, spHi, half, 8);
    k_.alu(ScalarOp::Add, spHi, spHi, sp);
    workDma(false, area, hi, spHi, half);
  }
  k_.waitAll();
  Reg descending = k_.reg(), stage = arg(kSortStage);
  k_.alu(ScalarOp::And, descending, lo, stage);
  when(descending, [&] { negate(p_, keys_[0], idx_[0]); });
  step(half);
  swapBuffers();
  when(descending, [&] { negate(p_, keys_[0], idx_[0]); });
  for (int which : {0, 1}) {
    const int area = which == 0 ? kSortWorkKeys : kSortWorkIdx;
    Reg sp = which == 0 ? keys_[0] : idx_[0];
    workDma(true, area, lo, sp, half);
    k_.alu(ScalarOp::Mul, spHi, half, 8);
    k_.alu(ScalarOp::Add, spHi, spHi, sp);
    workDma(true, area, hi, spHi, half);
  }
  for (Reg r : {half, lo, hi, j, t, spHi, descending, stage}) k_.release(r);
}

void SortGen::mergePass() {
  workDma(false, kSortWorkKeys, start_, keys_[0], p_);
  workDma(false, kSortWorkIdx, start_, idx_[0], p_);
  k_.waitAll();
  Reg descending = k_.reg();
  if (!s_.last) {
    Reg stage = arg(kSortStage);
    k_.alu(ScalarOp::And, descending, start_, stage);
    k_.release(stage);
    when(descending, [&] { negate(p_, keys_[0], idx_[0]); });
  }
  merge(p_);
  if (!s_.last) {
    when(descending, [&] { negate(p_, keys_[0], idx_[0]); });
    workDma(true, kSortWorkKeys, start_, keys_[0], p_);
    workDma(true, kSortWorkIdx, start_, idx_[0], p_);
  } else {
    store();
  }
  k_.release(descending);
}

isa::Function SortGen::build() {
  desc_ = k_.desc();
  zero_ = k_.li(0);
  one_ = k_.li(1);
  p_ = arg(kSortP);
  n_ = arg(kSortN_);
  keys_[0] = arg(kSortSpKeys0);
  keys_[1] = arg(kSortSpKeys1);
  idx_[0] = arg(kSortSpIdx0);
  idx_[1] = arg(kSortSpIdx1);
  if (s_.pass == SortPass::Whole) {
    row_ = k_.workgroupId(0);
    start_ = k_.li(0);
    load();
    makeKeys();
    network();
    store();
  } else {
    // Piece x of row y starts at element x L; n_ becomes the piece's elements of the row.
    row_ = k_.workgroupId(1);
    start_ = k_.workgroupId(0);
    k_.alu(ScalarOp::Mul, start_, start_, p_);
    k_.alu(ScalarOp::Sub, n_, n_, start_);
    k_.alu(ScalarOp::Max, n_, n_, zero_);
    k_.alu(ScalarOp::Min, n_, n_, p_);
    if (s_.pass == SortPass::Chunk) {
      chunk();
    } else if (s_.pass == SortPass::Step) {
      globalStep();
    } else {
      mergePass();
    }
  }
  k_.waitAll();
  return k_.finish();
}

}  // namespace

std::string SortShape::key() const {
  return std::string("sort.") + isa::dtypeName(in) + (descending ? ".desc" : "") +
         (writeValues ? ".values" : "") + (writeIndices ? ".indices" : "") + passName(pass) +
         (last ? ".last" : "");
}

isa::Function buildSortKernel(const SortShape& shape) {
  return SortGen(shape).build();
}

}  // namespace mimic::ops::detail
