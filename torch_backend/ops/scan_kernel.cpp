#include "torch_backend/ops/scan_kernel.h"

#include <limits>
#include <string>

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

constexpr DType kF32 = DType::F32, kI64 = DType::I64, kU8 = DType::U8;

const char* kindName(ScanKind k) {
  static const char* const kNames[] = {"sum", "prod", "logsumexp", "max", "min"};
  return kNames[static_cast<int>(k)];
}

class ScanGen {
 public:
  explicit ScanGen(const ScanShape& s) : s_(s), cs_(s.compute()), k_(s.key(), kScanArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  void place();
  void load();
  void store();
  void steps();
  // One step over the kcA lanes: cur = op(prev, cur); for Max and Min also icur and the step.
  void step(Reg prev, Reg cur, Reg iprev, Reg icur);
  void oneRow() { k_.vshape(one_, zero_, zero_, zero_); }

  const ScanShape& s_;
  DType cs_;
  KernelBuilder k_;
  isa::Desc desc_{0};
  Reg zero_{}, one_{}, kcA_{}, ncA_{}, c0_{}, rowBytes_{};
  Reg base_[3]{};  // in, out, indices
};

void ScanGen::place() {
  Reg x = k_.workgroupId(0), y = k_.workgroupId(1), kc = arg(kScanKc), start = k_.reg();
  k_.alu(ScalarOp::Mul, start, x, kc);
  kcA_ = arg(kScanC);
  k_.alu(ScalarOp::Sub, kcA_, kcA_, start);
  k_.alu(ScalarOp::Min, kcA_, kcA_, kc);
  const int operands[3] = {kScanIn, kScanOut, kScanIdx};
  for (int i = 0; i < (s_.withIndex() ? 3 : 2); ++i) {
    base_[i] = arg(operands[i] + kScAddr);
    k_.addScaledArg(base_[i], y, operands[i] + kScG);
    k_.addScaledArg(base_[i], start, operands[i] + kScC);
  }
  for (Reg r : {x, y, kc, start}) k_.release(r);
}

// The chunk of in, [ncA steps][kcA lanes], into tile rows 1..ncA in the compute type.
void ScanGen::load() {
  const bool raw = s_.in != cs_;
  const int64_t e = isa::dtypeSize(s_.in);
  Reg elem = k_.li(e), spRow = arg(kScanPitch), strideC = arg(kScanIn + kScC),
      strideN = arg(kScanIn + kScN);
  k_.alu(ScalarOp::Mul, spRow, spRow, e);
  k_.dmaDim(desc_, s_.in, 0, kcA_, strideC, elem);
  k_.dmaDim(desc_, s_.in, 1, ncA_, strideN, spRow);
  Reg address = k_.reg(), sp = arg(raw ? kScanSpRawIn : kScanSpTile);
  k_.alu(ScalarOp::Mul, address, c0_, strideN);
  k_.alu(ScalarOp::Add, address, address, base_[0]);
  if (!raw) k_.alu(ScalarOp::Add, sp, sp, rowBytes_);
  Reg token = k_.dmaLoad(sp, address, desc_);
  k_.waitAll();
  if (raw) {
    Reg tile = arg(kScanSpTile);
    k_.alu(ScalarOp::Add, tile, tile, rowBytes_);
    k_.vshape(ncA_, rowBytes_, spRow, zero_);
    k_.cast(s_.in, cs_, tile, sp, kcA_);
    k_.release(tile);
  }
  for (Reg r : {elem, spRow, strideC, strideN, address, sp, token}) k_.release(r);
}

// Tile rows 1..ncA (converted to out's dtype) and index rows 1..ncA to their chunk of HBM.
void ScanGen::store() {
  struct Target {
    int operand, tile;
    DType type;
  };
  const Target targets[2] = {{kScanOut, kScanSpTile, s_.out}, {kScanIdx, kScanSpIdx, kI64}};
  for (int i = 0; i < (s_.withIndex() ? 2 : 1); ++i) {
    const Target& t = targets[i];
    const int64_t e = isa::dtypeSize(t.type);
    const int64_t computeBytes = i == 0 ? isa::dtypeSize(cs_) : 8;
    Reg from = arg(t.tile), tileRow = arg(kScanPitch), spRow = arg(kScanPitch);
    k_.alu(ScalarOp::Mul, tileRow, tileRow, computeBytes);
    k_.alu(ScalarOp::Mul, spRow, spRow, e);
    k_.alu(ScalarOp::Add, from, from, tileRow);
    if (i == 0 && t.type != cs_) {
      Reg raw = arg(kScanSpRawOut);
      k_.vshape(ncA_, spRow, tileRow, zero_);
      k_.cast(cs_, t.type, raw, from, kcA_);
      k_.mov(from, raw);
      k_.release(raw);
    }
    Reg elem = k_.li(e), strideC = arg(t.operand + kScC), strideN = arg(t.operand + kScN);
    k_.dmaDim(desc_, t.type, 0, kcA_, strideC, elem);
    k_.dmaDim(desc_, t.type, 1, ncA_, strideN, spRow);
    Reg address = k_.reg();
    k_.alu(ScalarOp::Mul, address, c0_, strideN);
    k_.alu(ScalarOp::Add, address, address, base_[i + 1]);
    Reg token = k_.dmaStore(address, from, desc_);
    for (Reg r : {from, tileRow, spRow, elem, strideC, strideN, address, token}) k_.release(r);
  }
}

void ScanGen::step(Reg prev, Reg cur, Reg iprev, Reg icur) {
  switch (s_.kind) {
    case ScanKind::Sum:
      k_.binary(BinaryOp::Add, cs_, cur, prev, cur, kcA_);
      return;
    case ScanKind::Prod:
      k_.binary(BinaryOp::Mul, cs_, cur, prev, cur, kcA_);
      return;
    case ScanKind::LogSumExp: {
      // The carry is prev + low (low: the f32 vector kScanSpLow). With hi, lo the larger and
      // smaller of prev and x, d = lo - hi corrected by low (subtracted when the carry is the
      // larger operand, added when it is the smaller), then t = log(1 + exp(d)) (d = 0 for
      // equal infinities, whose difference is NaN) and the new carry hi + (t + low when the
      // carry was larger) as a two-sum: its rounded value is the output, its error the new
      // low part (0 where the sum is infinite or NaN).
      Reg hi = arg(kScanSpT0), d = arg(kScanSpT1), zeros = arg(kScanSpT2), low = arg(kScanSpLow),
          a = arg(kScanSpT4), b = arg(kScanSpT5), carryLarger = arg(kScanSpMask0),
          nan = arg(kScanSpMask1);
      k_.binary(BinaryOp::Max, kF32, hi, prev, cur, kcA_);
      k_.binary(BinaryOp::Min, kF32, d, prev, cur, kcA_);
      k_.compare(Cond::Ge, kF32, carryLarger, prev, cur, kcA_);
      k_.binary(BinaryOp::Sub, kF32, d, d, hi, kcA_);
      k_.unary(UnaryOp::Neg, kF32, a, low, kcA_);
      k_.select(kF32, a, carryLarger, a, low, kcA_);
      k_.binary(BinaryOp::Add, kF32, d, d, a, kcA_);
      k_.compare(Cond::Ne, kF32, nan, d, d, kcA_);
      k_.select(kF32, d, nan, zeros, d, kcA_);
      k_.unary(UnaryOp::Exp, kF32, d, d, kcA_);
      k_.binaryScalar(BinaryOp::Add, kF32, d, d, 1.0, kcA_);
      k_.unary(UnaryOp::Log, kF32, d, d, kcA_);
      k_.select(kF32, a, carryLarger, low, zeros, kcA_);
      k_.binary(BinaryOp::Add, kF32, d, d, a, kcA_);  // the addend
      k_.binary(BinaryOp::Add, kF32, cur, hi, d, kcA_);
      // Two-sum of hi + d = cur: low = (hi - (cur - v)) + (d - v), v = cur - hi.
      k_.binary(BinaryOp::Sub, kF32, a, cur, hi, kcA_);
      k_.binary(BinaryOp::Sub, kF32, b, cur, a, kcA_);
      k_.binary(BinaryOp::Sub, kF32, b, hi, b, kcA_);
      k_.binary(BinaryOp::Sub, kF32, a, d, a, kcA_);
      k_.binary(BinaryOp::Add, kF32, low, b, a, kcA_);
      k_.compare(Cond::Ne, kF32, nan, low, low, kcA_);
      k_.select(kF32, low, nan, zeros, low, kcA_);
      for (Reg r : {hi, d, zeros, low, a, b, carryLarger, nan}) k_.release(r);
      return;
    }
    case ScanKind::Max:
    case ScanKind::Min: {
      // PyTorch's CPU rule: take the element when it is NaN or >= (<=) the running extreme.
      Reg take = arg(kScanSpMask0), steps = arg(kScanSpStep);
      k_.compare(s_.kind == ScanKind::Max ? Cond::Ge : Cond::Le, cs_, take, cur, prev, kcA_);
      if (cs_ == kF32) {
        Reg nan = arg(kScanSpMask1);
        k_.compare(Cond::Ne, kF32, nan, cur, cur, kcA_);
        k_.binary(BinaryOp::Or, kU8, take, take, nan, kcA_);
        k_.release(nan);
      }
      k_.select(cs_, cur, take, cur, prev, kcA_);
      k_.select(kI64, icur, take, steps, iprev, kcA_);
      k_.binaryScalar(BinaryOp::Add, kI64, steps, steps, 1.0, kcA_);
      k_.release(take);
      k_.release(steps);
      return;
    }
  }
}

// Steps 0..ncA-1 of the chunk, then its last row becomes the carry (row 0).
void ScanGen::steps() {
  const bool index = s_.withIndex();
  Reg prev = arg(kScanSpTile), cur = k_.reg(), j = k_.li(0), t = k_.reg();
  Reg iprev{}, icur{}, idxRow{};
  k_.alu(ScalarOp::Add, cur, prev, rowBytes_);
  if (index) {
    iprev = arg(kScanSpIdx);
    icur = k_.reg();
    idxRow = arg(kScanPitch);
    k_.alu(ScalarOp::Mul, idxRow, idxRow, 8);
    k_.alu(ScalarOp::Add, icur, iprev, idxRow);
  }
  oneRow();
  isa::Label loop = k_.label(), done = k_.label();
  k_.bind(loop);
  k_.cmp(Cond::Ge, t, j, ncA_);
  k_.brnz(t, done);
  step(prev, cur, iprev, icur);
  k_.mov(prev, cur);
  k_.alu(ScalarOp::Add, cur, cur, rowBytes_);
  if (index) {
    k_.mov(iprev, icur);
    k_.alu(ScalarOp::Add, icur, icur, idxRow);
  }
  k_.alu(ScalarOp::Add, j, j, 1);
  k_.br(loop);
  k_.bind(done);
  // Row 0 is outside the rows being stored, so the carry may be written while they are.
  Reg carry = arg(kScanSpTile);
  k_.binaryScalar(BinaryOp::Mul, cs_, carry, prev, 1.0, kcA_);
  if (index) {
    k_.release(carry);
    carry = arg(kScanSpIdx);
    k_.binaryScalar(BinaryOp::Mul, kI64, carry, iprev, 1.0, kcA_);
    for (Reg r : {iprev, icur, idxRow}) k_.release(r);
  }
  for (Reg r : {prev, cur, j, t, carry}) k_.release(r);
}

isa::Function ScanGen::build() {
  desc_ = k_.desc();
  zero_ = k_.li(0);
  one_ = k_.li(1);
  place();
  ncA_ = k_.reg();
  c0_ = k_.li(0);
  rowBytes_ = arg(kScanPitch);
  k_.alu(ScalarOp::Mul, rowBytes_, rowBytes_, isa::dtypeSize(cs_));
  oneRow();
  if (s_.withIndex()) {
    Reg steps = arg(kScanSpStep);
    k_.fill(kI64, steps, 0.0, kcA_);
    k_.release(steps);
  } else {
    Reg carry = arg(kScanSpTile);
    const double identity = s_.kind == ScanKind::Sum    ? 0.0
                            : s_.kind == ScanKind::Prod ? 1.0
                                                        : -std::numeric_limits<double>::infinity();
    k_.fill(cs_, carry, identity, kcA_);
    k_.release(carry);
    if (s_.kind == ScanKind::LogSumExp) {
      for (int slot : {kScanSpT2, kScanSpLow}) {
        Reg zeros = arg(slot);
        k_.fill(kF32, zeros, 0.0, kcA_);
        k_.release(zeros);
      }
    }
  }
  isa::Label chunk = k_.label(), done = k_.label();
  Reg t = k_.reg();
  k_.bind(chunk);
  Reg n = arg(kScanN);
  k_.cmp(Cond::Ge, t, c0_, n);
  k_.brnz(t, done);
  Reg nc = arg(kScanNc);
  k_.alu(ScalarOp::Sub, ncA_, n, c0_);
  k_.alu(ScalarOp::Min, ncA_, ncA_, nc);
  k_.release(n);
  k_.release(nc);
  k_.waitAll();  // the previous chunk's stores read the tile
  load();
  if (s_.withIndex()) {
    // The first chunk's carry is its first element (index 0), which step 0 then takes.
    isa::Label later = k_.label();
    k_.brnz(c0_, later);
    Reg carry = arg(kScanSpTile), first = k_.reg();
    k_.alu(ScalarOp::Add, first, carry, rowBytes_);
    oneRow();
    k_.binaryScalar(BinaryOp::Mul, cs_, carry, first, 1.0, kcA_);
    k_.release(carry);
    carry = arg(kScanSpIdx);
    k_.fill(kI64, carry, 0.0, kcA_);
    k_.release(carry);
    k_.release(first);
    k_.bind(later);
  }
  steps();
  store();
  nc = arg(kScanNc);
  k_.alu(ScalarOp::Add, c0_, c0_, nc);
  k_.release(nc);
  k_.br(chunk);
  k_.bind(done);
  k_.release(t);
  return k_.finish();
}

}  // namespace

std::string ScanShape::key() const {
  return std::string("scan_") + kindName(kind) + "_" + isa::dtypeName(in) + "_" +
         isa::dtypeName(out);
}

isa::Function buildScanKernel(const ScanShape& shape) {
  return ScanGen(shape).build();
}

}  // namespace mimic::ops::detail
