#include "torch_backend/ops/gemm_kernel.h"

#include <initializer_list>
#include <string>
#include <utility>

#include "sim/isa/builder.h"
#include "torch_backend/ops/elementwise_emit.h"
#include "torch_backend/ops/gemm_plan.h"

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
      : s_(s), x_(gemmExtraArgs(s)), k_(s.name(), static_cast<uint32_t>(x_.total)) {}
  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  // Sets tileM_ and tileN_ from the workgroup's place in the grouped visiting order.
  void tileIndices();
  // This workgroup's extent for tile number `index`: min(tile, size - start) for the tile
  // starting at start = index * tile; adds start * stride to each (base, strideArg). Hands
  // start over in `keepStart` if given.
  Reg tileExtent(Reg index, int sizeArg, int tileArg,
                 std::initializer_list<std::pair<Reg, int>> bases, Reg* keepStart = nullptr);
  // Adds this workgroup's batch offset to `base`: strides at `strideArg` and, with two batch
  // dims, at `inner2Arg`.
  void addBatch(Reg base, int strideArg, int inner2Arg);
  // Loads the A and B tiles at kLoad_ into buffer set p.
  void load(int p);
  // If a tile is left to load, loads it into buffer set p; advances kLoad_ either way.
  void loadIfAny(int p);
  // Sets `d` to a rows x cols tile of operand `which` (0 A, 1 B, 2 C) with the given HBM
  // strides, dense and row-major in the scratchpad.
  void tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                      int colStrideArg);
  void tileDescriptor(isa::Desc d, bool byColumn, Reg rows, int rowStrideArg, Reg cols,
                      int colStrideArg, DType type);
  // Issues the loads of the epilogue program's used inputs; returns their tokens.
  std::vector<Reg> loadInputs();
  // Runs the epilogue program over the tile; returns the scratchpad address of the result.
  int64_t runProgram(Reg count);
  void epilogue();

  const GemmShape& s_;
  const GemmExtraArgs x_;
  KernelBuilder k_;
  // Kept for the epilogue program's inputs: the batch indices and the tile's first row and column.
  Reg batch_{}, inner_{}, rowStart_{}, colStart_{};
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
                        std::initializer_list<std::pair<Reg, int>> bases, Reg* keepStart) {
  Reg extent = arg(sizeArg), start = k_.reg(), tile = arg(tileArg);
  k_.alu(ScalarOp::Mul, start, index, tile);
  k_.alu(ScalarOp::Sub, extent, extent, start);
  k_.alu(ScalarOp::Min, extent, extent, tile);
  for (const auto& [base, strideArg] : bases) k_.addScaledArg(base, start, strideArg);
  if (keepStart != nullptr) {
    *keepStart = start;
  } else {
    k_.release(start);
  }
  k_.release(tile);
  return extent;
}

void GemmGen::addBatch(Reg base, int strideArg, int inner2Arg) {
  k_.addScaledArg(base, batch_, strideArg);
  if (s_.batch2) k_.addScaledArg(base, inner_, inner2Arg);
}

void GemmGen::tileDescriptor(isa::Desc d, int which, Reg rows, int rowStrideArg, Reg cols,
                             int colStrideArg) {
  tileDescriptor(d, s_.columnWalk[which], rows, rowStrideArg, cols, colStrideArg, s_.type);
}

void GemmGen::tileDescriptor(isa::Desc d, bool byColumn, Reg rows, int rowStrideArg, Reg cols,
                             int colStrideArg, DType type) {
  const int64_t e = isa::dtypeSize(type);
  Reg element = k_.li(e), rowBytes = k_.reg();
  k_.alu(ScalarOp::Mul, rowBytes, cols, e);
  Reg colHbm = arg(colStrideArg), rowHbm = arg(rowStrideArg);
  if (byColumn) {
    k_.dmaDim(d, type, 0, rows, rowHbm, rowBytes);
    k_.dmaDim(d, type, 1, cols, colHbm, element);
  } else {
    k_.dmaDim(d, type, 0, cols, colHbm, element);
    k_.dmaDim(d, type, 1, rows, rowHbm, rowBytes);
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

std::vector<Reg> GemmGen::loadInputs() {
  std::vector<Reg> tokens;
  if (s_.program == nullptr) return tokens;
  const std::vector<int64_t> at = gemmEpilogueOffsets(s_.tileElements, isa::dtypeSize(s_.type),
                                                      s_.readC || s_.bias, epilogueBufferBytes(s_));
  size_t buffer = 0;
  for (size_t i = 0; i < s_.inputColumnWalk.size(); ++i) {
    if (!(s_.program->usedInputs >> (i + 1) & 1u)) continue;
    const int slot = x_.inputs + kGemmInputSlots * static_cast<int>(i);
    Reg base = arg(slot);
    addBatch(base, slot + 1, slot + 2);
    k_.addScaledArg(base, rowStart_, slot + 3);
    k_.addScaledArg(base, colStart_, slot + 4);
    tileDescriptor(bDesc_, s_.inputColumnWalk[i], tm_, slot + 3, tn_, slot + 4,
                   s_.program->inputs[i + 1]);
    Reg sp = k_.li(at[buffer++]);
    tokens.push_back(k_.dmaLoad(sp, base, bDesc_));
    k_.release(sp);
    k_.release(base);
  }
  return tokens;
}

int64_t GemmGen::runProgram(Reg count) {
  const std::vector<int64_t> at = gemmEpilogueOffsets(s_.tileElements, isa::dtypeSize(s_.type),
                                                      s_.readC || s_.bias, epilogueBufferBytes(s_));
  TileBuffers buffers;
  buffers.inputs[0] = 0;  // the accumulator (kGemmSpAcc)
  size_t buffer = 0;
  for (size_t i = 0; i < s_.inputColumnWalk.size(); ++i) {
    if (s_.program->usedInputs >> (i + 1) & 1u) buffers.inputs[i + 1] = at[buffer++];
  }
  // An f32 result overwrites the accumulator: only the program's last operation writes it,
  // element by element after reading it, so no tile-sized buffer is spent on it.
  buffers.out = s_.type == DType::F32 ? 0 : at[buffer++];
  buffers.temps = at[buffer];
  buffers.tempBytes = s_.temps > 0 ? at[buffer + 1] - at[buffer] : 0;
  return emitTile(k_, *s_.program, buffers, {count, count, x_.scalars, 0});
}

void GemmGen::epilogue() {
  Reg count = k_.reg(), acc = arg(kGemmSpAcc), scalar = arg(kGemmAlpha);
  k_.alu(ScalarOp::Mul, count, tm_, tn_);
  k_.binaryScalar(BinaryOp::Mul, DType::F32, acc, acc, scalar, count);
  isa::Desc cDesc = aDesc_;  // the loads are done
  tileDescriptor(cDesc, 2, tm_, kGemmCRow, tn_, kGemmCCol);
  // The program's inputs load while the bias (or C's old tile) is applied.
  const std::vector<Reg> inputTokens = loadInputs();
  if (s_.readC || s_.bias) {
    Reg old = arg(kGemmSpOld);
    Reg token{};
    if (s_.bias) {
      tileDescriptor(bDesc_, false, tm_, kGemmBiasRow, tn_, kGemmBiasCol, s_.type);
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
  if (s_.program != nullptr) {
    for (Reg t : inputTokens) {
      k_.wait(t);
      k_.release(t);
    }
    result = k_.li(runProgram(count));
  } else if (s_.type != DType::F32) {
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
  batch_ = k_.workgroupId(2);
  if (s_.batch2) {
    inner_ = k_.reg();
    Reg size = arg(x_.innerBatch);
    k_.alu(ScalarOp::Rem, inner_, batch_, size);
    k_.alu(ScalarOp::Div, batch_, batch_, size);
    k_.release(size);
  }
  addBatch(aBase_, kGemmABatch, x_.batch2Strides);
  addBatch(bBase_, kGemmBBatch, x_.batch2Strides + 1);
  addBatch(cBase_, kGemmCBatch, x_.batch2Strides + 2);
  if (s_.bias) {
    biasBase_ = arg(kGemmBias);
    addBatch(biasBase_, kGemmBiasBatch, x_.batch2Strides + 3);
  }
  const bool program = s_.program != nullptr;
  if (!program) {
    k_.release(batch_);
    if (s_.batch2) k_.release(inner_);
  }
  tileIndices();
  if (s_.bias) {
    tm_ = tileExtent(tileM_, kGemmM, kGemmTileM,
                     {{aBase_, kGemmARow}, {cBase_, kGemmCRow}, {biasBase_, kGemmBiasRow}},
                     program ? &rowStart_ : nullptr);
    tn_ = tileExtent(tileN_, kGemmN, kGemmTileN,
                     {{bBase_, kGemmBCol}, {cBase_, kGemmCCol}, {biasBase_, kGemmBiasCol}},
                     program ? &colStart_ : nullptr);
  } else {
    tm_ = tileExtent(tileM_, kGemmM, kGemmTileM, {{aBase_, kGemmARow}, {cBase_, kGemmCRow}},
                     program ? &rowStart_ : nullptr);
    tn_ = tileExtent(tileN_, kGemmN, kGemmTileN, {{bBase_, kGemmBCol}, {cBase_, kGemmCCol}},
                     program ? &colStart_ : nullptr);
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
  // The epilogue's registers (the program's inputs take a token each) come from the loop's.
  for (int p = 0; p < stages; ++p) {
    for (Reg r : {tk_[p], aToken_[p], bToken_[p]}) k_.release(r);
  }
  for (Reg r : {kLoad_, aBase_, bBase_}) k_.release(r);
  epilogue();
  return k_.finish();
}

}  // namespace

std::string GemmShape::name() const {
  std::string walks = ".";
  for (bool byColumn : columnWalk) walks += byColumn ? 'c' : 'r';
  return std::string("gemm.") + isa::dtypeName(type) + (readC ? ".beta" : ".nobeta") +
         (bias ? ".bias" : "") + walks + ".s" + std::to_string(stages) + (batch2 ? ".b2" : "") +
         (program != nullptr ? ".epilogue" : "");
}

std::string GemmShape::key() const {
  std::string key = name();
  if (program == nullptr) return key;
  key += "[" + program->text + "|";
  for (size_t i = 1; i < program->inputs.size(); ++i) {
    key += std::string(isa::dtypeName(program->inputs[i])) + (inputColumnWalk[i - 1] ? "c" : "r") +
           ",";
  }
  return key + "|t" + std::to_string(tileElements) + "|s" + std::to_string(numScalars) + "]";
}

std::vector<int> epilogueBufferBytes(const GemmShape& shape) {
  std::vector<int> bytes;
  const Program& p = *shape.program;
  for (size_t i = 1; i < p.inputs.size(); ++i) {
    if (p.usedInputs >> i & 1u) bytes.push_back(isa::dtypeSize(p.inputs[i]));
  }
  if (shape.type != DType::F32) bytes.push_back(isa::dtypeSize(shape.type));  // the result
  for (int t = 0; t < shape.temps; ++t) bytes.push_back(4);
  return bytes;
}

GemmExtraArgs gemmExtraArgs(const GemmShape& shape) {
  GemmExtraArgs x;
  int next = shape.bias ? kGemmBiasArgCount : kGemmArgCount;
  if (shape.batch2) {
    x.innerBatch = next++;
    x.batch2Strides = next;
    next += shape.bias ? 4 : 3;
  }
  if (shape.program != nullptr) {
    x.inputs = next;
    next += kGemmInputSlots * static_cast<int>(shape.inputColumnWalk.size());
    x.scalars = next;
    next += static_cast<int>(shape.numScalars);
  }
  x.total = next;
  return x;
}

isa::Function buildGemmKernel(const GemmShape& shape) {
  return GemmGen(shape).build();
}

}  // namespace mimic::ops::detail
