#include "torch_backend/ops/gemm_kernel.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "sim/isa/builder.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;

class GemmGen {
 public:
  explicit GemmGen(const GemmShape& s) : s_(s), k_(s.key(), kGemmArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  void addScaled(Reg d, Reg idx, int strideArg);
  // This workgroup's extent along grid dim `dim`: min(tile, size - start) for the tile
  // starting at start = wgid(dim) * tile; adds start * stride to each (base, strideArg).
  Reg tileExtent(int dim, int sizeArg, int tileArg,
                 std::initializer_list<std::pair<Reg, int>> bases);
  // Loads the A and B tiles at k0 into buffer set p.
  void load(int p);
  // Sets `d` to a rows x cols tile of operand `which` (0 A, 1 B, 2 C) with the given HBM
  // strides, dense and row-major in the scratchpad.
  void tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                      int colStrideArg);
  void epilogue();

  const GemmShape& s_;
  KernelBuilder k_;
  Reg tm_{}, tn_{}, k0_{}, aBase_{}, bBase_{}, cBase_{};
  Reg tk_[2]{}, aToken_[2]{}, bToken_[2]{};
  isa::Desc aDesc_{}, bDesc_{};
};

void GemmGen::addScaled(Reg d, Reg idx, int strideArg) {
  Reg t = arg(strideArg);
  k_.alu(ScalarOp::Mul, t, idx, t);
  k_.alu(ScalarOp::Add, d, d, t);
  k_.release(t);
}

Reg GemmGen::tileExtent(int dim, int sizeArg, int tileArg,
                        std::initializer_list<std::pair<Reg, int>> bases) {
  Reg extent = arg(sizeArg), start = k_.workgroupId(dim), tile = arg(tileArg);
  k_.alu(ScalarOp::Mul, start, start, tile);
  k_.alu(ScalarOp::Sub, extent, extent, start);
  k_.alu(ScalarOp::Min, extent, extent, tile);
  for (const auto& [base, strideArg] : bases) addScaled(base, start, strideArg);
  k_.release(start);
  k_.release(tile);
  return extent;
}

void GemmGen::tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                             int colStrideArg) {
  const int64_t e = isa::dtypeSize(s_.type);
  Reg element = k_.li(e), rowBytes = k_.reg();
  k_.alu(ScalarOp::Mul, rowBytes, cols, e);
  Reg colHbm = arg(colStrideArg), rowHbm = arg(rowStrideArg);
  if (s_.columnWalk[which]) {
    k_.dmaDim(d, s_.type, 0, rows, rowHbm, rowBytes);
    k_.dmaDim(d, s_.type, 1, cols, colHbm, element);
  } else {
    k_.dmaDim(d, s_.type, 0, cols, colHbm, element);
    k_.dmaDim(d, s_.type, 1, rows, rowHbm, rowBytes);
  }
  for (Reg r : {element, rowBytes, colHbm, rowHbm}) k_.release(r);
}

void GemmGen::load(int p) {
  Reg t = arg(kGemmK), tile = arg(kGemmTileK);
  k_.alu(ScalarOp::Sub, tk_[p], t, k0_);
  k_.alu(ScalarOp::Min, tk_[p], tk_[p], tile);
  k_.release(tile);
  tileDescriptor(aDesc_, 0, tm_, kGemmARow, tk_[p], kGemmACol);
  tileDescriptor(bDesc_, 1, tk_[p], kGemmBRow, tn_, kGemmBCol);
  Reg address = k_.reg(), sp = arg(p == 0 ? kGemmSpA0 : kGemmSpA1);
  k_.mov(address, aBase_);
  addScaled(address, k0_, kGemmACol);
  k_.dmaLoad(aToken_[p], sp, address, aDesc_);
  k_.release(sp);
  sp = arg(p == 0 ? kGemmSpB0 : kGemmSpB1);
  k_.mov(address, bBase_);
  addScaled(address, k0_, kGemmBRow);
  k_.dmaLoad(bToken_[p], sp, address, bDesc_);
  for (Reg r : {t, address, sp}) k_.release(r);
}

void GemmGen::epilogue() {
  Reg count = k_.reg(), acc = arg(kGemmSpAcc), scalar = arg(kGemmAlpha);
  k_.alu(ScalarOp::Mul, count, tm_, tn_);
  k_.binaryScalar(BinaryOp::Mul, DType::F32, acc, acc, scalar, count);
  isa::Desc cDesc = aDesc_;  // the loads are done
  tileDescriptor(cDesc, 2, tm_, kGemmCRow, tn_, kGemmCCol);
  if (s_.readC) {
    Reg old = arg(kGemmSpOld);
    Reg token = k_.dmaLoad(old, cBase_, cDesc);
    k_.wait(token);
    k_.release(token);
    if (s_.type != DType::F32) {
      Reg wide = arg(kGemmSpOldF32);
      k_.cast(s_.type, DType::F32, wide, old, count);
      k_.release(old);
      old = wide;
    }
    k_.release(scalar);
    scalar = arg(kGemmBeta);
    k_.binaryScalar(BinaryOp::Mul, DType::F32, old, old, scalar, count);
    k_.binary(BinaryOp::Add, DType::F32, acc, acc, old, count);
    k_.release(old);
  }
  Reg result = acc;
  if (s_.type != DType::F32) {
    result = arg(kGemmSpOut);
    k_.cast(DType::F32, s_.type, result, acc, count);
  }
  Reg token = k_.dmaStore(cBase_, result, cDesc);
  k_.wait(token);
}

isa::Function GemmGen::build() {
  aBase_ = arg(kGemmA);
  bBase_ = arg(kGemmB);
  cBase_ = arg(kGemmC);
  {
    Reg batch = k_.workgroupId(2);
    addScaled(aBase_, batch, kGemmABatch);
    addScaled(bBase_, batch, kGemmBBatch);
    addScaled(cBase_, batch, kGemmCBatch);
    k_.release(batch);
  }
  tm_ = tileExtent(1, kGemmM, kGemmTileM, {{aBase_, kGemmARow}, {cBase_, kGemmCRow}});
  tn_ = tileExtent(0, kGemmN, kGemmTileN, {{bBase_, kGemmBCol}, {cBase_, kGemmCCol}});
  {
    Reg count = k_.reg(), acc = arg(kGemmSpAcc);
    k_.alu(ScalarOp::Mul, count, tm_, tn_);
    k_.fill(DType::F32, acc, 0.0, count);
    k_.release(count);
    k_.release(acc);
  }
  aDesc_ = k_.desc();
  bDesc_ = k_.desc();
  k0_ = k_.li(0);
  for (int p = 0; p < 2; ++p) {
    tk_[p] = k_.reg();
    aToken_[p] = k_.reg();
    bToken_[p] = k_.reg();
  }
  isa::Label loop = k_.label(), done = k_.label();
  Reg t = arg(kGemmK);
  k_.brz(t, done);
  load(0);
  // Tile i computes from buffer set i % 2 while tile i + 1 loads into the other.
  k_.bind(loop);
  for (int p = 0; p < 2; ++p) {
    isa::Label compute = k_.label();
    Reg step = arg(kGemmTileK);
    k_.alu(ScalarOp::Add, k0_, k0_, step);
    k_.release(step);
    Reg k = arg(kGemmK);
    k_.cmp(Cond::Lt, t, k0_, k);
    k_.release(k);
    k_.brz(t, compute);
    load(1 - p);
    k_.bind(compute);
    k_.wait(aToken_[p]);
    k_.wait(bToken_[p]);
    k_.mshape(tm_, tn_, tk_[p]);
    Reg acc = arg(kGemmSpAcc), a = arg(p == 0 ? kGemmSpA0 : kGemmSpA1);
    Reg b = arg(p == 0 ? kGemmSpB0 : kGemmSpB1);
    k_.mma(s_.type, acc, a, b);
    for (Reg r : {acc, a, b}) k_.release(r);
    k = arg(kGemmK);
    k_.cmp(Cond::Ge, t, k0_, k);
    k_.release(k);
    k_.brnz(t, done);
  }
  k_.br(loop);
  k_.bind(done);
  k_.release(t);
  epilogue();
  return k_.finish();
}

}  // namespace

std::string GemmShape::key() const {
  std::string walks = ".";
  for (bool byColumn : columnWalk) walks += byColumn ? 'c' : 'r';
  return std::string("gemm.") + isa::dtypeName(type) + (readC ? ".beta" : ".nobeta") + walks;
}

isa::Function buildGemmKernel(const GemmShape& shape) {
  return GemmGen(shape).build();
}

}  // namespace mimic::ops::detail
