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
  explicit GemmGen(const GemmShape& s)
      : s_(s), k_(s.key(), s.bias ? kGemmBiasArgCount : kGemmArgCount) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  // Sets tileM_ and tileN_ from the workgroup's place in the grouped visiting order.
  void tileIndices();
  // This workgroup's extent for tile number `index`: min(tile, size - start) for the tile
  // starting at start = index * tile; adds start * stride to each (base, strideArg).
  Reg tileExtent(Reg index, int sizeArg, int tileArg,
                 std::initializer_list<std::pair<Reg, int>> bases);
  // Loads the A and B tiles at kLoad_ into buffer set p.
  void load(int p);
  // If a tile is left to load, loads it into buffer set p; advances kLoad_ either way.
  void loadIfAny(int p);
  // Sets `d` to a rows x cols tile of operand `which` (0 A, 1 B, 2 C) with the given HBM
  // strides, dense and row-major in the scratchpad.
  void tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                      int colStrideArg);
  void tileDescriptor(isa::Desc d, bool byColumn, Reg rows, int rowStrideArg, Reg cols,
                      int colStrideArg);
  void epilogue();

  const GemmShape& s_;
  KernelBuilder k_;
  Reg tileM_{}, tileN_{}, tm_{}, tn_{}, kLoad_{}, aBase_{}, bBase_{}, cBase_{}, biasBase_{};
  Reg tk_[kGemmMaxStages]{}, aToken_[kGemmMaxStages]{}, bToken_[kGemmMaxStages]{};
  isa::Desc aDesc_{}, bDesc_{};
};

void GemmGen::tileIndices() {
  // index = group * (groupM x tilesN) + within; the group's rows start at group x groupM.
  Reg index = k_.workgroupId(0), group = arg(kGemmGroupM), perGroup = arg(kGemmTilesN);
  k_.alu(ScalarOp::Mul, perGroup, perGroup, group);
  Reg first = k_.reg();
  k_.alu(ScalarOp::Div, first, index, perGroup);
  Reg within = k_.reg();
  k_.alu(ScalarOp::Rem, within, index, perGroup);
  k_.alu(ScalarOp::Mul, first, first, group);
  Reg rows = arg(kGemmTilesM);
  k_.alu(ScalarOp::Sub, rows, rows, first);
  k_.alu(ScalarOp::Min, rows, rows, group);
  tileM_ = k_.reg();
  k_.alu(ScalarOp::Rem, tileM_, within, rows);
  k_.alu(ScalarOp::Add, tileM_, tileM_, first);
  tileN_ = k_.reg();
  k_.alu(ScalarOp::Div, tileN_, within, rows);
  for (Reg r : {index, group, perGroup, first, within, rows}) k_.release(r);
}

Reg GemmGen::tileExtent(Reg index, int sizeArg, int tileArg,
                        std::initializer_list<std::pair<Reg, int>> bases) {
  Reg extent = arg(sizeArg), start = k_.reg(), tile = arg(tileArg);
  k_.alu(ScalarOp::Mul, start, index, tile);
  k_.alu(ScalarOp::Sub, extent, extent, start);
  k_.alu(ScalarOp::Min, extent, extent, tile);
  for (const auto& [base, strideArg] : bases) k_.addScaledArg(base, start, strideArg);
  k_.release(start);
  k_.release(tile);
  return extent;
}

void GemmGen::tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                             int colStrideArg) {
  tileDescriptor(d, s_.columnWalk[which], rows, rowStrideArg, cols, colStrideArg);
}

void GemmGen::tileDescriptor(isa::Desc d, bool byColumn, Reg rows, int rowStrideArg, Reg cols,
                             int colStrideArg) {
  const int64_t e = isa::dtypeSize(s_.type);
  Reg element = k_.li(e), rowBytes = k_.reg();
  k_.alu(ScalarOp::Mul, rowBytes, cols, e);
  Reg colHbm = arg(colStrideArg), rowHbm = arg(rowStrideArg);
  if (byColumn) {
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
  k_.alu(ScalarOp::Sub, tk_[p], t, kLoad_);
  k_.alu(ScalarOp::Min, tk_[p], tk_[p], tile);
  k_.release(tile);
  tileDescriptor(aDesc_, 0, tm_, kGemmARow, tk_[p], kGemmACol);
  tileDescriptor(bDesc_, 1, tk_[p], kGemmBRow, tn_, kGemmBCol);
  Reg address = k_.reg(), sp = arg(kGemmSpA0 + p);
  k_.mov(address, aBase_);
  k_.addScaledArg(address, kLoad_, kGemmACol);
  k_.dmaLoad(aToken_[p], sp, address, aDesc_);
  k_.release(sp);
  sp = arg(kGemmSpB0 + p);
  k_.mov(address, bBase_);
  k_.addScaledArg(address, kLoad_, kGemmBRow);
  k_.dmaLoad(bToken_[p], sp, address, bDesc_);
  for (Reg r : {t, address, sp}) k_.release(r);
}

void GemmGen::loadIfAny(int p) {
  isa::Label none = k_.label();
  Reg t = k_.reg(), k = arg(kGemmK);
  k_.cmp(Cond::Lt, t, kLoad_, k);
  k_.release(k);
  k_.brz(t, none);
  load(p);
  k_.bind(none);
  Reg step = arg(kGemmTileK);
  k_.alu(ScalarOp::Add, kLoad_, kLoad_, step);
  k_.release(step);
  k_.release(t);
}

void GemmGen::epilogue() {
  Reg count = k_.reg(), acc = arg(kGemmSpAcc), scalar = arg(kGemmAlpha);
  k_.alu(ScalarOp::Mul, count, tm_, tn_);
  k_.binaryScalar(BinaryOp::Mul, DType::F32, acc, acc, scalar, count);
  isa::Desc cDesc = aDesc_;  // the loads are done
  tileDescriptor(cDesc, 2, tm_, kGemmCRow, tn_, kGemmCCol);
  if (s_.readC || s_.bias) {
    Reg old = arg(kGemmSpOld);
    Reg token{};
    if (s_.bias) {
      tileDescriptor(bDesc_, false, tm_, kGemmBiasRow, tn_, kGemmBiasCol);
      token = k_.dmaLoad(old, biasBase_, bDesc_);
    } else {
      token = k_.dmaLoad(old, cBase_, cDesc);
    }
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
    k_.addScaledArg(aBase_, batch, kGemmABatch);
    k_.addScaledArg(bBase_, batch, kGemmBBatch);
    k_.addScaledArg(cBase_, batch, kGemmCBatch);
    if (s_.bias) {
      biasBase_ = arg(kGemmBias);
      k_.addScaledArg(biasBase_, batch, kGemmBiasBatch);
    }
    k_.release(batch);
  }
  tileIndices();
  if (s_.bias) {
    tm_ = tileExtent(tileM_, kGemmM, kGemmTileM,
                     {{aBase_, kGemmARow}, {cBase_, kGemmCRow}, {biasBase_, kGemmBiasRow}});
    tn_ = tileExtent(tileN_, kGemmN, kGemmTileN,
                     {{bBase_, kGemmBCol}, {cBase_, kGemmCCol}, {biasBase_, kGemmBiasCol}});
  } else {
    tm_ = tileExtent(tileM_, kGemmM, kGemmTileM, {{aBase_, kGemmARow}, {cBase_, kGemmCRow}});
    tn_ = tileExtent(tileN_, kGemmN, kGemmTileN, {{bBase_, kGemmBCol}, {cBase_, kGemmCCol}});
  }
  k_.release(tileM_);
  k_.release(tileN_);
  {
    Reg count = k_.reg(), acc = arg(kGemmSpAcc);
    k_.alu(ScalarOp::Mul, count, tm_, tn_);
    k_.fill(DType::F32, acc, 0.0, count);
    k_.release(count);
    k_.release(acc);
  }
  aDesc_ = k_.desc();
  bDesc_ = k_.desc();
  const int stages = s_.stages;
  kLoad_ = k_.li(0);
  Reg kCompute = k_.li(0);
  for (int p = 0; p < stages; ++p) {
    tk_[p] = k_.reg();
    aToken_[p] = k_.reg();
    bToken_[p] = k_.reg();
  }
  isa::Label loop = k_.label(), done = k_.label();
  Reg t = arg(kGemmK);
  k_.brz(t, done);
  for (int p = 0; p + 1 < stages; ++p) loadIfAny(p);
  // Tile i computes from buffer set i % stages while the next stages - 1 tiles load.
  k_.bind(loop);
  for (int p = 0; p < stages; ++p) {
    loadIfAny((p + stages - 1) % stages);
    k_.wait(aToken_[p]);
    k_.wait(bToken_[p]);
    k_.mshape(tm_, tn_, tk_[p]);
    Reg acc = arg(kGemmSpAcc), a = arg(kGemmSpA0 + p), b = arg(kGemmSpB0 + p);
    k_.mma(s_.type, acc, a, b);
    for (Reg r : {acc, a, b}) k_.release(r);
    Reg step = arg(kGemmTileK), k = arg(kGemmK);
    k_.alu(ScalarOp::Add, kCompute, kCompute, step);
    k_.cmp(Cond::Ge, t, kCompute, k);
    k_.release(step);
    k_.release(k);
    k_.brnz(t, done);
  }
  k_.br(loop);
  k_.bind(done);
  k_.release(t);
  k_.release(kCompute);
  epilogue();
  return k_.finish();
}

}  // namespace

std::string GemmShape::key() const {
  std::string walks = ".";
  for (bool byColumn : columnWalk) walks += byColumn ? 'c' : 'r';
  return std::string("gemm.") + isa::dtypeName(type) + (readC ? ".beta" : ".nobeta") +
         (bias ? ".bias" : "") + walks + ".s" + std::to_string(stages);
}

isa::Function buildGemmKernel(const GemmShape& shape) {
  return GemmGen(shape).build();
}

}  // namespace mimic::ops::detail
