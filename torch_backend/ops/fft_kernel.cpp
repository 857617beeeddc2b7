#include "torch_backend/ops/fft_kernel.h"

#include <initializer_list>
#include <string>

#include "sim/isa/builder.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;

constexpr isa::DType kF32 = isa::DType::F32;
constexpr int64_t kAlign = 64;  // every scratchpad buffer starts 64-byte aligned

int64_t alignUp(int64_t bytes) {
  return (bytes + kAlign - 1) / kAlign * kAlign;
}

// Byte offsets of the scratchpad buffers.
struct Layout {
  int64_t re[2] = {}, im[2] = {};  // the ping-pong buffers [n][kb]
  int64_t t1 = 0, t2 = 0;          // [n/2][kb]: the twiddled odd half, real and imaginary
  int64_t twiddles = 0;            // [3][n - 1][kb]
  int64_t bytes = 0;
};

Layout layoutOf(const FftShape& s) {
  Layout l;
  auto place = [&](int64_t bytes) {
    const int64_t at = l.bytes;
    l.bytes += alignUp(bytes);
    return at;
  };
  const int64_t plane = s.n * s.kb * 4, half = (s.n / 2) * s.kb * 4;
  for (int b = 0; b < 2; ++b) {
    l.re[b] = place(plane);
    l.im[b] = place(plane);
  }
  l.t1 = place(half);
  l.t2 = place(half);
  l.twiddles = place(3 * (s.n - 1) * s.kb * 4);
  return l;
}

int log2Of(int64_t n) {
  int s = 0;
  while ((int64_t{1} << s) < n) ++s;
  return s;
}

const char* inputName(FftInput input) {
  static const char* const kNames[] = {"c", "r", "h"};
  return kNames[static_cast<int>(input)];
}

class FftGen {
 public:
  explicit FftGen(const FftShape& s) : s_(s), l_(layoutOf(s)), k_(s.key(), kFftArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  Reg sp(int64_t offset) { return k_.li(offset); }
  void release(std::initializer_list<Reg> regs) {
    for (Reg r : regs) k_.release(r);
  }
  void place();
  void loadTwiddles();
  void load();
  // One DMA of `rows` rows of the operand at `operand` into scratchpad `spOffset`: the rows
  // `hbmRow`, `hbmRow` + step, ... (step -1 mirrors).
  void loadRows(int operand, int64_t spOffset, int64_t rows, int64_t hbmRow, int step);
  void stage(int s);
  void scaleAndStore(int final);

  const FftShape& s_;
  Layout l_;
  KernelBuilder k_;
  isa::Desc desc_{0};
  Reg kcA_{}, zero_{};
  Reg base_[4]{};  // in re, in im, out re, out im
};

constexpr int kOperands[4] = {kFftInRe, kFftInIm, kFftOutRe, kFftOutIm};

void FftGen::place() {
  Reg x = k_.workgroupId(0), y = k_.workgroupId(1), start = k_.reg();
  k_.alu(ScalarOp::Mul, start, x, s_.kb);
  kcA_ = arg(kFftC);
  k_.alu(ScalarOp::Sub, kcA_, kcA_, start);
  k_.alu(ScalarOp::Min, kcA_, kcA_, s_.kb);
  for (int i = 0; i < 4; ++i) {
    if (i == 1 && s_.input == FftInput::Real) continue;
    if (i == 3 && s_.realOut) continue;
    base_[i] = arg(kOperands[i] + kFtAddr);
    k_.addScaledArg(base_[i], y, kOperands[i] + kFtG);
    k_.addScaledArg(base_[i], start, kOperands[i] + kFtC);
  }
  release({x, y, start});
}

// The table [3][n - 1] into [3][n - 1][kb]: each factor repeated for the kb lanes.
void FftGen::loadTwiddles() {
  if (s_.n < 2) return;
  Reg lanes = k_.li(s_.kb), four = k_.li(4), rows = k_.li(3 * (s_.n - 1)), spRow = k_.li(s_.kb * 4),
      to = sp(l_.twiddles), from = arg(kFftTwiddles);
  k_.dmaDim(desc_, kF32, 0, lanes, zero_, four);
  k_.dmaDim(desc_, kF32, 1, rows, four, spRow);
  Reg token = k_.dmaLoad(to, from, desc_);
  release({lanes, four, rows, spRow, to, from, token});
}

void FftGen::loadRows(int operand, int64_t spOffset, int64_t rows, int64_t hbmRow, int step) {
  const int slot = kOperands[operand];
  Reg strideC = arg(slot + kFtC), strideN = arg(slot + kFtN), four = k_.li(4), count = k_.li(rows),
      spRow = k_.li(s_.kb * 4), address = k_.reg(), to = sp(spOffset);
  k_.alu(ScalarOp::Mul, address, strideN, hbmRow);
  k_.alu(ScalarOp::Add, address, address, base_[operand]);
  if (step < 0) k_.alu(ScalarOp::Sub, strideN, zero_, strideN);
  k_.dmaDim(desc_, kF32, 0, kcA_, strideC, four);
  k_.dmaDim(desc_, kF32, 1, count, strideN, spRow);
  Reg token = k_.dmaLoad(to, address, desc_);
  release({strideC, strideN, four, count, spRow, address, to, token});
}

// The lanes' rows into buffer 0. Zeros first: the lanes past C (never stored) and a real
// input's imaginary parts.
void FftGen::load() {
  const int64_t n = s_.n;
  Reg all = k_.li(n * s_.kb), one = k_.li(1);
  k_.vshape(one, zero_, zero_, zero_);
  for (int64_t at : {l_.re[0], l_.im[0]}) {
    Reg to = sp(at);
    k_.fill(kF32, to, 0.0, all);
    k_.release(to);
  }
  release({all, one});
  const bool complexIn = s_.input != FftInput::Real;
  const int64_t direct = s_.input == FftInput::Hermitian ? n / 2 + 1 : n;
  loadRows(0, l_.re[0], direct, 0, 1);
  if (complexIn) loadRows(1, l_.im[0], direct, 0, 1);
  const int64_t mirrored = n - direct;  // rows n/2 + 1 .. n - 1 from rows n/2 - 1 .. 1
  if (mirrored > 0) {
    const int64_t at = (n / 2 + 1) * s_.kb * 4;
    loadRows(0, l_.re[0] + at, mirrored, n / 2 - 1, -1);
    loadRows(1, l_.im[0] + at, mirrored, n / 2 - 1, -1);
  }
  k_.waitAll();
  if (mirrored > 0) {
    Reg im = sp(l_.im[0] + (n / 2 + 1) * s_.kb * 4), count = k_.li(mirrored * s_.kb);
    k_.unary(isa::UnaryOp::Neg, kF32, im, im, count);
    release({im, count});
  }
}

void FftGen::stage(int s) {
  const int64_t L = int64_t{1} << s, rows = s_.n / L / 2, len = L * s_.kb,
                halfBytes = s_.n / 2 * s_.kb * 4;
  const int from = s % 2, to = 1 - from;
  Reg count = k_.li(len), nrows = k_.li(rows), rowBytes = k_.li(len * 4);
  Reg eRe = sp(l_.re[from]), eIm = sp(l_.im[from]), oRe = sp(l_.re[from] + halfBytes),
      oIm = sp(l_.im[from] + halfBytes);
  Reg tRe = oRe, tIm = oIm;  // w = 1 when L = 1
  if (L > 1) {
    const int64_t tw = l_.twiddles + (L - 1) * s_.kb * 4, plane = (s_.n - 1) * s_.kb * 4;
    Reg wr = sp(tw), wi = sp(tw + plane), wni = sp(tw + 2 * plane);
    tRe = sp(l_.t1);
    tIm = sp(l_.t2);
    k_.vshape(nrows, rowBytes, zero_, rowBytes);
    k_.binary(BinaryOp::Mul, kF32, tRe, wr, oRe, count);
    k_.fma(kF32, tRe, wni, oIm, tRe, count);
    k_.binary(BinaryOp::Mul, kF32, tIm, wr, oIm, count);
    k_.fma(kF32, tIm, wi, oRe, tIm, count);
    release({wr, wi, wni});
  }
  Reg dstRow = k_.li(2 * len * 4);
  k_.vshape(nrows, dstRow, rowBytes, rowBytes);
  Reg qRe = sp(l_.re[to]), qIm = sp(l_.im[to]), qRe2 = sp(l_.re[to] + len * 4),
      qIm2 = sp(l_.im[to] + len * 4);
  k_.binary(BinaryOp::Add, kF32, qRe, eRe, tRe, count);
  k_.binary(BinaryOp::Sub, kF32, qRe2, eRe, tRe, count);
  k_.binary(BinaryOp::Add, kF32, qIm, eIm, tIm, count);
  k_.binary(BinaryOp::Sub, kF32, qIm2, eIm, tIm, count);
  release({count, nrows, rowBytes, eRe, eIm, oRe, oIm, dstRow, qRe, qIm, qRe2, qIm2});
  if (L > 1) release({tRe, tIm});
}

void FftGen::scaleAndStore(int final) {
  Reg rows = arg(kFftOutRows), count = k_.reg(), scale = arg(kFftScale), one = k_.li(1);
  k_.alu(ScalarOp::Mul, count, rows, s_.kb);
  k_.vshape(one, zero_, zero_, zero_);
  for (int part = 0; part < (s_.realOut ? 1 : 2); ++part) {
    Reg from = sp(part == 0 ? l_.re[final] : l_.im[final]);
    k_.binaryScalar(BinaryOp::Mul, kF32, from, from, scale, count);
    const int slot = kOperands[2 + part];
    Reg strideC = arg(slot + kFtC), strideN = arg(slot + kFtN), four = k_.li(4),
        spRow = k_.li(s_.kb * 4);
    k_.dmaDim(desc_, kF32, 0, kcA_, strideC, four);
    k_.dmaDim(desc_, kF32, 1, rows, strideN, spRow);
    Reg token = k_.dmaStore(base_[2 + part], from, desc_);
    release({from, strideC, strideN, four, spRow, token});
  }
  release({rows, count, scale, one});
}

isa::Function FftGen::build() {
  desc_ = k_.desc();
  zero_ = k_.li(0);
  place();
  loadTwiddles();
  load();
  const int stages = log2Of(s_.n);
  for (int s = 0; s < stages; ++s) stage(s);
  scaleAndStore(stages % 2);
  return k_.finish();
}

}  // namespace

std::string FftShape::key() const {
  return "fft_" + std::to_string(n) + "_" + std::to_string(kb) + "_" + inputName(input) +
         (realOut ? "r" : "c");
}

int64_t FftShape::scratchpadBytes() const {
  return layoutOf(*this).bytes;
}

isa::Function buildFftKernel(const FftShape& shape) {
  return FftGen(shape).build();
}

}  // namespace mimic::ops::detail
