#include "torch_backend/ops/row_kernel.h"

#include <limits>
#include <string>

#include "sim/isa/builder.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::KernelBuilder;
using isa::ReduceOp;
using isa::Reg;
using isa::ScalarOp;
using isa::UnaryOp;

constexpr DType kF32 = DType::F32;

// Scratchpad slots (argument numbers) of the f32 tiles and statistics.
constexpr int kF0 = kRowSpF0, kF1 = kRowSpF1;
constexpr int kT0 = kRowSpT0, kT1 = kRowSpT0 + 1, kT2 = kRowSpT0 + 2;
constexpr int kS0 = kRowSpS0, kS1 = kRowSpS0 + 1, kS2 = kRowSpS0 + 2, kS3 = kRowSpS0 + 3,
              kS4 = kRowSpS0 + 4, kS5 = kRowSpS0 + 5;

const char* kindName(RowKind k) {
  static const char* const kNames[] = {"softmax",         "log_softmax", "softmax_bwd",
                                       "log_softmax_bwd", "layer_norm",  "layer_norm_bwd"};
  return kNames[static_cast<int>(k)];
}

class RowGen {
 public:
  explicit RowGen(const RowShape& s) : s_(s), k_(s.key(), kRowArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  // kcA_ and the workgroup's first row in every operand.
  void place();
  // Runs `body` for each chunk of the row (once, for whole rows) with c0_ and ncA_ set.
  template <typename Body>
  void forEachChunk(const Body& body);
  // Loads the chunk of the row inputs and columns asked for (whole rows: those not yet
  // loaded) and converts them to f32.
  void load(bool rows0, bool rows1, bool cols);
  void issueRows(int which);
  void issueCols(int which);
  void loadStats();
  // Stores the f32 tile src to out, or (sum) to the residual sum.
  void storeRows(int src, bool sum = false);
  void storeStats();
  void storePartial(int which, int acc);

  // f32 tiles [kcA][ncA] (arguments naming scratchpad slots).
  void dense(BinaryOp op, int dst, int a, int b);
  void unary(UnaryOp op, int dst, int src);
  void colOp(BinaryOp op, int dst, int a, int col);   // col: an f32 vector [ncA]
  void rowOp(BinaryOp op, int dst, int a, int stat);  // stat: an f32 vector [kcA]
  void rowReduce(ReduceOp op, int stat, int src);
  // stat (op)= the row reduction of src; whole rows: stat = the reduction.
  void accumulate(int stat, int src);
  void colSum(int acc, int src);  // acc[c] = the sum over rows of src[r][c]
  // f32 statistics [kcA].
  void statOp(BinaryOp op, int dst, int a, int b);
  void statUnary(UnaryOp op, int dst, int src);
  void statScalar(BinaryOp op, int dst, int a, int scalarArg);
  void statFill(int dst, double value);

  void softmax();
  void softmaxBackward();
  void layerNorm();
  void layerNormBackward();

  const RowShape& s_;
  KernelBuilder k_;
  isa::Desc desc_{0};
  Reg zero_{}, one_{}, four_{}, kcA_{}, ncA_{}, c0_{}, pitchF_{}, wg_{};
  Reg base_[5]{};        // in0, in1, out, sum, in2
  Reg statBase_[2]{};    // mean, rstd
  bool loaded_[5] = {};  // whole rows: in0, in1, col0, col1, in2 are in the scratchpad
};

void RowGen::place() {
  Reg x = k_.workgroupId(0), y = k_.workgroupId(1), kc = arg(kRowKc), start = k_.reg();
  k_.alu(ScalarOp::Mul, start, x, kc);
  kcA_ = arg(kRowC);
  k_.alu(ScalarOp::Sub, kcA_, kcA_, start);
  k_.alu(ScalarOp::Min, kcA_, kcA_, kc);
  const int operands[5] = {kRowIn0, kRowIn1, kRowOut, kRowSum, kRowIn2};
  const bool used[5] = {s_.rowInputs() >= 1, s_.rowInputs() >= 2, s_.writeOut, s_.residual,
                        s_.dropout};
  for (int i = 0; i < 5; ++i) {
    if (!used[i]) continue;
    base_[i] = arg(operands[i] + kOpAddr);
    k_.addScaledArg(base_[i], y, operands[i] + kOpG);
    k_.addScaledArg(base_[i], start, operands[i] + kOpC);
  }
  if (s_.readsStats() || s_.writesStats()) {
    for (int i = 0; i < 2; ++i) {
      const int stat = kRowStat0 + i * kStFields;
      statBase_[i] = arg(stat + kStAddr);
      k_.addScaledArg(statBase_[i], y, stat + kStG);
      k_.addScaledArg(statBase_[i], start, stat + kStC);
    }
  }
  if (s_.part0 || s_.part1) {
    wg_ = k_.gridDim(0);
    k_.alu(ScalarOp::Mul, wg_, wg_, y);
    k_.alu(ScalarOp::Add, wg_, wg_, x);
  }
  for (Reg r : {x, y, kc, start}) k_.release(r);
}

template <typename Body>
void RowGen::forEachChunk(const Body& body) {
  if (!s_.chunked) return body();
  isa::Label loop = k_.label(), done = k_.label();
  Reg t = k_.reg();
  k_.li(c0_, 0);
  k_.bind(loop);
  Reg n = arg(kRowN);
  k_.cmp(Cond::Ge, t, c0_, n);
  k_.brnz(t, done);
  Reg nc = arg(kRowNc);
  k_.alu(ScalarOp::Sub, ncA_, n, c0_);
  k_.alu(ScalarOp::Min, ncA_, ncA_, nc);
  k_.release(n);
  k_.release(nc);
  k_.release(t);
  body();
  nc = arg(kRowNc);
  k_.alu(ScalarOp::Add, c0_, c0_, nc);
  k_.release(nc);
  k_.br(loop);
  k_.bind(done);
}

void RowGen::issueRows(int which) {
  const int op = which == 0 ? kRowIn0 : which == 1 ? kRowIn1 : kRowIn2;
  const DType type = which == 0 ? s_.in0 : which == 1 ? s_.in1 : kF32;
  const int64_t e = isa::dtypeSize(type);
  Reg elem = k_.li(e), rowBytes = arg(kRowPitch), strideN = arg(op + kOpN),
      strideC = arg(op + kOpC);
  k_.alu(ScalarOp::Mul, rowBytes, rowBytes, e);
  k_.dmaDim(desc_, type, 0, ncA_, strideN, elem);
  k_.dmaDim(desc_, type, 1, kcA_, strideC, rowBytes);
  Reg address = k_.reg(), sp = arg(which < 2 ? kRowSpRaw0 + which : kRowSpRaw2);
  k_.mov(address, base_[which < 2 ? which : 4]);
  if (s_.chunked) {
    Reg t = k_.reg();
    k_.alu(ScalarOp::Mul, t, c0_, strideN);
    k_.alu(ScalarOp::Add, address, address, t);
    k_.release(t);
  }
  Reg token = k_.dmaLoad(sp, address, desc_);
  for (Reg r : {elem, rowBytes, strideN, strideC, address, sp, token}) k_.release(r);
}

void RowGen::issueCols(int which) {
  const int col = which == 0 ? kRowCol0 : kRowCol1;
  const DType type = which == 0 ? s_.col0 : s_.col1;
  Reg elem = k_.li(isa::dtypeSize(type)), stride = arg(col + kColN);
  k_.dmaDim(desc_, type, 0, ncA_, stride, elem);
  Reg address = arg(col + kColAddr), sp = arg(kRowSpColRaw0 + which);
  if (s_.chunked) {
    Reg t = k_.reg();
    k_.alu(ScalarOp::Mul, t, c0_, stride);
    k_.alu(ScalarOp::Add, address, address, t);
    k_.release(t);
  }
  Reg token = k_.dmaLoad(sp, address, desc_);
  for (Reg r : {elem, stride, address, sp, token}) k_.release(r);
}

void RowGen::load(bool rows0, bool rows1, bool cols) {
  // in2, the dropout mask, comes with in1 (f32: it needs no conversion).
  const bool want[5] = {rows0, rows1, cols && s_.hasCol0, cols && s_.hasCol1, rows1 && s_.dropout};
  bool issued[5] = {};
  for (int i = 0; i < 5; ++i) {
    if (!want[i] || loaded_[i]) continue;
    if (i < 2) {
      issueRows(i);
    } else if (i < 4) {
      issueCols(i - 2);
    } else {
      issueRows(2);
    }
    issued[i] = true;
    loaded_[i] = !s_.chunked;
  }
  k_.waitAll();
  const DType types[4] = {s_.in0, s_.in1, s_.col0, s_.col1};
  for (int i = 0; i < 4; ++i) {
    if (!issued[i] || types[i] == kF32) continue;
    if (i < 2) {
      Reg rowBytes = arg(kRowPitch);
      k_.alu(ScalarOp::Mul, rowBytes, rowBytes, isa::dtypeSize(types[i]));
      k_.vshape(kcA_, pitchF_, rowBytes, zero_);
      k_.release(rowBytes);
    } else {
      k_.vshape(one_, zero_, zero_, zero_);
    }
    Reg dst = arg(i < 2 ? kRowSpF0 + i : kRowSpColF0 + i - 2);
    Reg src = arg(i < 2 ? kRowSpRaw0 + i : kRowSpColRaw0 + i - 2);
    k_.cast(types[i], kF32, dst, src, ncA_);
    k_.release(dst);
    k_.release(src);
  }
}

void RowGen::loadStats() {
  const int64_t e = isa::dtypeSize(s_.stat);
  for (int i = 0; i < 2; ++i) {
    const int stat = kRowStat0 + i * kStFields;
    Reg elem = k_.li(e), stride = arg(stat + kStC);
    k_.dmaDim(desc_, s_.stat, 0, kcA_, stride, elem);
    Reg sp = arg(s_.stat == kF32 ? kRowSpS0 + i : kRowSpStatRaw);
    if (s_.stat != kF32 && i == 1) {
      Reg kc = arg(kRowKc);
      k_.alu(ScalarOp::Mul, kc, kc, 4);
      k_.alu(ScalarOp::Add, sp, sp, kc);
      k_.release(kc);
    }
    Reg token = k_.dmaLoad(sp, statBase_[i], desc_);
    for (Reg r : {elem, stride, sp, token}) k_.release(r);
  }
  k_.waitAll();
  if (s_.stat == kF32) return;
  k_.vshape(one_, zero_, zero_, zero_);
  for (int i = 0; i < 2; ++i) {
    Reg dst = arg(kRowSpS0 + i), src = arg(kRowSpStatRaw);
    if (i == 1) {
      Reg kc = arg(kRowKc);
      k_.alu(ScalarOp::Mul, kc, kc, 4);
      k_.alu(ScalarOp::Add, src, src, kc);
      k_.release(kc);
    }
    k_.cast(s_.stat, kF32, dst, src, kcA_);
    k_.release(dst);
    k_.release(src);
  }
}

void RowGen::storeRows(int src, bool sum) {
  const DType type = sum ? kF32 : s_.out;
  const int operand = sum ? kRowSum : kRowOut;
  const int64_t e = isa::dtypeSize(type);
  Reg from = arg(src), rowBytes = pitchF_;
  if (type != kF32) {
    Reg raw = arg(kRowSpRawOut);
    rowBytes = arg(kRowPitch);
    k_.alu(ScalarOp::Mul, rowBytes, rowBytes, e);
    k_.vshape(kcA_, rowBytes, pitchF_, zero_);
    k_.cast(kF32, s_.out, raw, from, ncA_);
    k_.release(from);
    from = raw;
  }
  Reg elem = k_.li(e), strideN = arg(operand + kOpN), strideC = arg(operand + kOpC);
  k_.dmaDim(desc_, type, 0, ncA_, strideN, elem);
  k_.dmaDim(desc_, type, 1, kcA_, strideC, rowBytes);
  Reg address = k_.reg();
  k_.mov(address, base_[sum ? 3 : 2]);
  if (s_.chunked) {
    k_.alu(ScalarOp::Mul, strideC, c0_, strideN);
    k_.alu(ScalarOp::Add, address, address, strideC);
  }
  Reg token = k_.dmaStore(address, from, desc_);
  for (Reg r : {from, elem, strideN, strideC, address, token}) k_.release(r);
  if (type != kF32) k_.release(rowBytes);
}

void RowGen::storeStats() {
  const int64_t e = isa::dtypeSize(s_.stat);
  for (int i = 0; i < 2; ++i) {
    const int stat = kRowStat0 + i * kStFields;
    Reg from = arg(kRowSpS0 + i);
    if (s_.stat != kF32) {
      Reg raw = arg(kRowSpStatRaw);
      if (i == 1) {
        Reg kc = arg(kRowKc);
        k_.alu(ScalarOp::Mul, kc, kc, 4);
        k_.alu(ScalarOp::Add, raw, raw, kc);
        k_.release(kc);
      }
      k_.vshape(one_, zero_, zero_, zero_);
      k_.cast(kF32, s_.stat, raw, from, kcA_);
      k_.release(from);
      from = raw;
    }
    Reg elem = k_.li(e), stride = arg(stat + kStC);
    k_.dmaDim(desc_, s_.stat, 0, kcA_, stride, elem);
    Reg token = k_.dmaStore(statBase_[i], from, desc_);
    for (Reg r : {from, elem, stride, token}) k_.release(r);
  }
}

void RowGen::storePartial(int which, int acc) {
  // Workgroup wg's partial sums start at part + wg * N * 4.
  Reg address = arg(kRowPart0 + which), t = arg(kRowN);
  k_.alu(ScalarOp::Mul, t, t, wg_);
  k_.alu(ScalarOp::Add, t, t, c0_);
  k_.alu(ScalarOp::Mul, t, t, 4);
  k_.alu(ScalarOp::Add, address, address, t);
  k_.dmaDim(desc_, kF32, 0, ncA_, four_, four_);
  Reg from = arg(acc);
  Reg token = k_.dmaStore(address, from, desc_);
  for (Reg r : {address, t, from, token}) k_.release(r);
}

void RowGen::dense(BinaryOp op, int dst, int a, int b) {
  Reg d = arg(dst), x = arg(a), y = arg(b);
  k_.vshape(kcA_, pitchF_, pitchF_, pitchF_);
  k_.binary(op, kF32, d, x, y, ncA_);
  for (Reg r : {d, x, y}) k_.release(r);
}

void RowGen::unary(UnaryOp op, int dst, int src) {
  Reg d = arg(dst), x = arg(src);
  k_.vshape(kcA_, pitchF_, pitchF_, zero_);
  k_.unary(op, kF32, d, x, ncA_);
  k_.release(d);
  k_.release(x);
}

void RowGen::colOp(BinaryOp op, int dst, int a, int col) {
  Reg d = arg(dst), x = arg(a), c = arg(col);
  k_.vshape(kcA_, pitchF_, pitchF_, zero_);
  k_.binary(op, kF32, d, x, c, ncA_);
  for (Reg r : {d, x, c}) k_.release(r);
}

void RowGen::rowOp(BinaryOp op, int dst, int a, int stat) {
  Reg d = arg(dst), x = arg(a), st = arg(stat), i = k_.li(0), t = k_.reg();
  isa::Label byColumns = k_.label(), rows = k_.label(), done = k_.label();
  if (!s_.chunked) {
    k_.cmp(Cond::Gt, t, kcA_, ncA_);
    k_.brnz(t, byColumns);
  }
  // Row by row, the row's statistic (its f32 bits) as the scalar operand.
  k_.vshape(one_, zero_, zero_, zero_);
  k_.bind(rows);
  k_.cmp(Cond::Lt, t, i, kcA_);
  k_.brz(t, done);
  k_.sload(DType::I32, t, st);
  k_.binaryScalar(op, kF32, d, x, t, ncA_);
  k_.alu(ScalarOp::Add, d, d, pitchF_);
  k_.alu(ScalarOp::Add, x, x, pitchF_);
  k_.alu(ScalarOp::Add, st, st, 4);
  k_.alu(ScalarOp::Add, i, i, 1);
  k_.br(rows);
  if (!s_.chunked) {
    // Column by column: kcA rows of one element, the statistics one per row.
    isa::Label columns = k_.label();
    k_.bind(byColumns);
    k_.vshape(kcA_, pitchF_, pitchF_, four_);
    k_.bind(columns);
    k_.cmp(Cond::Lt, t, i, ncA_);
    k_.brz(t, done);
    k_.binary(op, kF32, d, x, st, one_);
    k_.alu(ScalarOp::Add, d, d, 4);
    k_.alu(ScalarOp::Add, x, x, 4);
    k_.alu(ScalarOp::Add, i, i, 1);
    k_.br(columns);
  }
  k_.bind(done);
  for (Reg r : {d, x, st, i, t}) k_.release(r);
}

void RowGen::rowReduce(ReduceOp op, int stat, int src) {
  Reg d = arg(stat), x = arg(src);
  k_.vshape(kcA_, four_, pitchF_, zero_);
  k_.reduce(op, kF32, d, x, ncA_);
  k_.release(d);
  k_.release(x);
}

void RowGen::accumulate(int stat, int src) {
  if (!s_.chunked) return rowReduce(ReduceOp::Sum, stat, src);
  rowReduce(ReduceOp::Sum, kS5, src);
  statOp(BinaryOp::Add, stat, stat, kS5);
}

void RowGen::colSum(int acc, int src) {
  Reg d = arg(acc), x = arg(src);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.fill(kF32, d, 0.0, ncA_);
  k_.vshape(kcA_, zero_, zero_, pitchF_);
  k_.binary(BinaryOp::Add, kF32, d, d, x, ncA_);
  k_.release(d);
  k_.release(x);
}

void RowGen::statOp(BinaryOp op, int dst, int a, int b) {
  Reg d = arg(dst), x = arg(a), y = arg(b);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.binary(op, kF32, d, x, y, kcA_);
  for (Reg r : {d, x, y}) k_.release(r);
}

void RowGen::statUnary(UnaryOp op, int dst, int src) {
  Reg d = arg(dst), x = arg(src);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.unary(op, kF32, d, x, kcA_);
  k_.release(d);
  k_.release(x);
}

void RowGen::statScalar(BinaryOp op, int dst, int a, int scalarArg) {
  Reg d = arg(dst), x = arg(a), bits = arg(scalarArg);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.binaryScalar(op, kF32, d, x, bits, kcA_);
  for (Reg r : {d, x, bits}) k_.release(r);
}

void RowGen::statFill(int dst, double value) {
  Reg d = arg(dst);
  k_.vshape(one_, zero_, zero_, zero_);
  k_.fill(kF32, d, value, kcA_);
  k_.release(d);
}

void RowGen::softmax() {
  // Whole rows work on x's tile F0 in place: softmax needs 4 bytes an element (and the raw
  // tiles of other types), so that rows of a vocabulary's logits fit.
  const bool log = s_.kind == RowKind::LogSoftmax;
  if (!s_.chunked) {
    load(true, false, false);
    rowReduce(ReduceOp::Max, kS0, kF0);
    rowOp(BinaryOp::Sub, kF0, kF0, kS0);
    if (log) {
      unary(UnaryOp::Exp, kT0, kF0);
      rowReduce(ReduceOp::Sum, kS1, kT0);
      statUnary(UnaryOp::Log, kS1, kS1);
      rowOp(BinaryOp::Sub, kF0, kF0, kS1);
    } else {
      unary(UnaryOp::Exp, kF0, kF0);
      rowReduce(ReduceOp::Sum, kS1, kF0);
      statUnary(UnaryOp::Recip, kS1, kS1);
      rowOp(BinaryOp::Mul, kF0, kF0, kS1);
    }
    return storeRows(kF0);
  }
  // Pass 1, the online softmax: S0 = the running max m, S1 = sum(exp(x - m)). The shift S4 is
  // the new max, or 0 while every element so far is -inf (-inf - -inf would be NaN).
  statFill(kS0, -std::numeric_limits<double>::infinity());
  statFill(kS1, 0.0);
  statFill(kS5, 0.0);
  forEachChunk([&] {
    load(true, false, false);
    rowReduce(ReduceOp::Max, kS2, kF0);
    statOp(BinaryOp::Max, kS3, kS0, kS2);
    {
      Reg mask = arg(kRowSpStatRaw), d = arg(kS4), m = arg(kS3), zero = arg(kS5);
      k_.compareScalar(Cond::Eq, kF32, mask, m, -std::numeric_limits<double>::infinity(), kcA_);
      k_.select(kF32, d, mask, zero, m, kcA_);
      for (Reg r : {mask, d, m, zero}) k_.release(r);
    }
    statOp(BinaryOp::Sub, kS2, kS0, kS4);
    statUnary(UnaryOp::Exp, kS2, kS2);
    statOp(BinaryOp::Mul, kS1, kS1, kS2);
    rowOp(BinaryOp::Sub, kF0, kF0, kS4);
    unary(UnaryOp::Exp, kF0, kF0);
    rowReduce(ReduceOp::Sum, kS2, kF0);
    statOp(BinaryOp::Add, kS1, kS1, kS2);
    statOp(BinaryOp::Max, kS0, kS3, kS3);
  });
  // Pass 2: log: x - (m + log s); softmax: exp(x - m) / s.
  if (log) {
    statUnary(UnaryOp::Log, kS1, kS1);
    statOp(BinaryOp::Add, kS1, kS1, kS0);
  } else {
    statUnary(UnaryOp::Recip, kS1, kS1);
  }
  // The outputs go through T0: the next chunk loads into F0 while this one is stored.
  forEachChunk([&] {
    load(true, false, false);
    if (log) {
      rowOp(BinaryOp::Sub, kT0, kF0, kS1);
    } else {
      rowOp(BinaryOp::Sub, kT0, kF0, kS0);
      unary(UnaryOp::Exp, kT0, kT0);
      rowOp(BinaryOp::Mul, kT0, kT0, kS1);
    }
    storeRows(kT0);
  });
}

void RowGen::softmaxBackward() {
  // in0 = dy, in1 = y.
  const bool log = s_.kind == RowKind::LogSoftmaxBackward;
  if (s_.chunked) statFill(kS0, 0.0);
  forEachChunk([&] {
    load(true, !log, false);
    if (log) {
      accumulate(kS0, kF0);
    } else {
      dense(BinaryOp::Mul, kT0, kF0, kF1);
      accumulate(kS0, kT0);
    }
  });
  forEachChunk([&] {
    load(true, true, false);
    if (log) {
      unary(UnaryOp::Exp, kT0, kF1);
      rowOp(BinaryOp::Mul, kT0, kT0, kS0);
      dense(BinaryOp::Sub, kT0, kF0, kT0);
    } else {
      rowOp(BinaryOp::Sub, kT0, kF0, kS0);
      dense(BinaryOp::Mul, kT0, kT0, kF1);
    }
    storeRows(kT0);
  });
}

void RowGen::layerNorm() {
  // in0 = x, or x = in0 + in1 (residual; whole rows: summed once into F0, chunks: in every
  // pass, stored in the first); S0 = mean, S1 = rstd; T0 = x - mean (whole rows: kept from
  // pass 2 to pass 3).
  if (s_.chunked) {
    statFill(kS0, 0.0);
    statFill(kS1, 0.0);
  }
  // F1 = in1 * (in2 / scale), in place (the dropped-out residual), then dst = F0 + F1.
  auto sum = [&](int dst) {
    if (s_.dropout) {
      Reg mask = arg(kRowSpRaw2), scale = arg(kRowScale);
      k_.vshape(kcA_, pitchF_, pitchF_, zero_);
      k_.binaryScalar(BinaryOp::Div, kF32, mask, mask, scale, ncA_);
      k_.release(mask);
      k_.release(scale);
      dense(BinaryOp::Mul, kF1, kF1, kRowSpRaw2);
    }
    dense(BinaryOp::Add, dst, kF0, kF1);
  };
  auto resummed = [&] {
    if (s_.residual && s_.chunked) sum(kF0);
  };
  forEachChunk([&] {
    load(true, s_.residual, false);
    int x = kF0;
    if (s_.residual) {
      // A chunk's sum is stored from T1: the next chunk loads into F0 while it is stored.
      x = s_.chunked ? kT1 : kF0;
      sum(x);
      storeRows(x, true);
    }
    accumulate(kS0, x);
  });
  statScalar(BinaryOp::Mul, kS0, kS0, kRowInvN);
  forEachChunk([&] {
    load(true, s_.residual, false);
    resummed();
    rowOp(BinaryOp::Sub, kT0, kF0, kS0);
    dense(BinaryOp::Mul, kT1, kT0, kT0);
    accumulate(kS1, kT1);
  });
  statScalar(BinaryOp::Mul, kS1, kS1, kRowInvN);
  statScalar(BinaryOp::Add, kS1, kS1, kRowEps);
  statUnary(UnaryOp::Rsqrt, kS1, kS1);
  forEachChunk([&] {
    load(true, s_.residual, true);
    resummed();
    if (s_.chunked) rowOp(BinaryOp::Sub, kT0, kF0, kS0);
    rowOp(BinaryOp::Mul, kT0, kT0, kS1);
    if (s_.hasCol0) colOp(BinaryOp::Mul, kT0, kT0, kRowSpColF0);
    if (s_.hasCol1) colOp(BinaryOp::Add, kT0, kT0, kRowSpColF0 + 1);
    storeRows(kT0);
  });
  storeStats();
}

void RowGen::layerNormBackward() {
  // in0 = dy, in1 = x; S0 = mean, S1 = rstd (loaded); T0 = xhat, g = dy * weight (T1) or dy;
  // S2 = mean(g), S3 = mean(g xhat).
  const int g = s_.hasCol0 ? kT1 : kF0;
  loadStats();
  auto xhatAndG = [&] {
    rowOp(BinaryOp::Sub, kT0, kF1, kS0);
    rowOp(BinaryOp::Mul, kT0, kT0, kS1);
    if (s_.hasCol0) colOp(BinaryOp::Mul, kT1, kF0, kRowSpColF0);
  };
  if (s_.writeOut) {
    if (s_.chunked) {
      statFill(kS2, 0.0);
      statFill(kS3, 0.0);
    }
    forEachChunk([&] {
      load(true, true, true);
      xhatAndG();
      accumulate(kS2, g);
      dense(BinaryOp::Mul, kT2, g, kT0);
      accumulate(kS3, kT2);
    });
    statScalar(BinaryOp::Mul, kS2, kS2, kRowInvN);
    statScalar(BinaryOp::Mul, kS3, kS3, kRowInvN);
  }
  forEachChunk([&] {
    load(true, true, true);
    if (s_.chunked || !s_.writeOut) xhatAndG();
    if (s_.part0) {
      dense(BinaryOp::Mul, kT2, kF0, kT0);
      colSum(kRowSpAcc0, kT2);
      storePartial(0, kRowSpAcc0);
    }
    if (s_.part1) {
      colSum(kRowSpAcc1, kF0);
      storePartial(1, kRowSpAcc1);
    }
    if (s_.writeOut) {
      rowOp(BinaryOp::Mul, kT2, kT0, kS3);
      dense(BinaryOp::Sub, kT2, g, kT2);
      rowOp(BinaryOp::Sub, kT2, kT2, kS2);
      rowOp(BinaryOp::Mul, kT2, kT2, kS1);
      storeRows(kT2);
    }
  });
}

isa::Function RowGen::build() {
  desc_ = k_.desc();
  zero_ = k_.li(0);
  one_ = k_.li(1);
  four_ = k_.li(4);
  place();
  pitchF_ = arg(kRowPitch);
  k_.alu(ScalarOp::Mul, pitchF_, pitchF_, 4);
  c0_ = k_.li(0);
  ncA_ = s_.chunked ? k_.reg() : arg(kRowN);
  switch (s_.kind) {
    case RowKind::Softmax:
    case RowKind::LogSoftmax:
      softmax();
      break;
    case RowKind::SoftmaxBackward:
    case RowKind::LogSoftmaxBackward:
      softmaxBackward();
      break;
    case RowKind::LayerNorm:
      layerNorm();
      break;
    case RowKind::LayerNormBackward:
      layerNormBackward();
      break;
  }
  k_.waitAll();
  return k_.finish();
}

}  // namespace

int RowShape::rowInputs() const {
  switch (kind) {
    case RowKind::Softmax:
    case RowKind::LogSoftmax:
      return 1;
    case RowKind::LayerNorm:
      return residual ? 2 : 1;
    default:
      return 2;
  }
}

int RowShape::temps() const {
  switch (kind) {
    case RowKind::Softmax:
      return chunked ? 1 : 0;
    case RowKind::LogSoftmax:
    case RowKind::SoftmaxBackward:
    case RowKind::LogSoftmaxBackward:
      return 1;
    case RowKind::LayerNormBackward:
      return 3;
    default:
      return 2;
  }
}

std::string RowShape::key() const {
  std::string k = std::string("row.") + kindName(kind) + (chunked ? ".chunked" : "") + "." +
                  isa::dtypeName(in0);
  if (rowInputs() > 1) k += std::string(".") + isa::dtypeName(in1);
  if (writeOut) k += std::string(".out_") + isa::dtypeName(out);
  if (readsStats() || writesStats()) k += std::string(".stat_") + isa::dtypeName(stat);
  if (hasCol0) k += std::string(".w_") + isa::dtypeName(col0);
  if (hasCol1) k += std::string(".b_") + isa::dtypeName(col1);
  if (part0) k += ".dw";
  if (part1) k += ".db";
  if (residual) k += dropout ? ".residual_dropout" : ".residual";
  return k;
}

isa::Function buildRowKernel(const RowShape& shape) {
  return RowGen(shape).build();
}

}  // namespace mimic::ops::detail
