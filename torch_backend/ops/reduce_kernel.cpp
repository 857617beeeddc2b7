#include "torch_backend/ops/reduce_kernel.h"

#include <string>
#include <vector>

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

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}
bool isMaxLike(ReduceKind k) {
  return k == ReduceKind::Max || k == ReduceKind::ArgMax;
}

const char* kindName(ReduceKind k) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  return kNames[static_cast<int>(k)];
}

class ReduceGen {
 public:
  explicit ReduceGen(const ReduceShape& s)
      : s_(s), k_(s.key(), static_cast<uint32_t>(argCount(s))) {}

  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  void addScaled(Reg d, Reg idx, int strideArg);
  void oneRow();
  void vshape(Reg rows, int64_t dstStride, Reg srcStride, int64_t otherStride);
  // Sets descriptor `d` for the tile (load) or for the output (store).
  void loadDescriptor(isa::Desc d, Reg kcA, Reg rcA);
  void storeDescriptor(isa::Desc d, Reg kcA);
  // Converts the tile to the accumulation type when they differ.
  void castTile(Reg rows, Reg n);
  void rowsTile(Reg keptBlock, Reg redBlock, Reg j, Reg c);
  void rowsProd(Reg keptBlock, Reg redBlock);
  void rowsArg(Reg keptBlock, Reg redBlock, Reg j, Reg c);
  void columnsTile(Reg keptBlock, Reg redBlock, Reg j, Reg c);
  // Branches to `skip` unless j and c are both 0 (the first tile of the workgroup).
  void unlessFirst(Reg j, Reg c, isa::Label skip);
  void copy(DType t, int dstArg, int srcArg, Reg n);

  const ReduceShape& s_;
  KernelBuilder k_;
};

void ReduceGen::addScaled(Reg d, Reg idx, int strideArg) {
  Reg t = arg(strideArg);
  k_.alu(ScalarOp::Mul, t, idx, t);
  k_.alu(ScalarOp::Add, d, d, t);
  k_.release(t);
}

void ReduceGen::oneRow() {
  Reg one = k_.li(1), zero = k_.li(0);
  k_.vshape(one, zero, zero, zero);
  k_.release(one);
  k_.release(zero);
}

void ReduceGen::vshape(Reg rows, int64_t dstStride, Reg srcStride, int64_t otherStride) {
  Reg dst = k_.li(dstStride), other = k_.li(otherStride);
  k_.vshape(rows, dst, srcStride, other);
  k_.release(dst);
  k_.release(other);
}

void ReduceGen::loadDescriptor(isa::Desc d, Reg kcA, Reg rcA) {
  // The descriptor's innermost dims are the tile's columns: reduced ones in the rows layout.
  struct Entry {
    int record;
    bool kept;
    int index;
  };
  std::vector<Entry> entries;
  auto addKept = [&] {
    for (int i = 0; i < s_.descKept; ++i) entries.push_back({keptDescArg(s_, i), true, i});
  };
  auto addRed = [&] {
    for (int i = 0; i < s_.descRed; ++i) entries.push_back({redDescArg(s_, i), false, i});
  };
  if (s_.columns) {
    addKept();
    addRed();
  } else {
    addRed();
    addKept();
  }
  for (size_t dim = 0; dim < entries.size(); ++dim) {
    const Entry& e = entries[dim];
    const bool chunked = e.index == (e.kept ? s_.descKept : s_.descRed) - 1;
    Reg count = chunked ? (e.kept ? kcA : rcA) : arg(e.record);
    Reg hbm = arg(e.record + 1), sp = arg(e.record + 2);
    k_.dmaDim(d, s_.in, static_cast<int>(dim), count, hbm, sp);
    if (!chunked) k_.release(count);
    k_.release(hbm);
    k_.release(sp);
  }
}

void ReduceGen::storeDescriptor(isa::Desc d, Reg kcA) {
  for (int i = 0; i < s_.descKept; ++i) {
    const int record = keptDescArg(s_, i);
    const bool chunked = i == s_.descKept - 1;
    Reg count = chunked ? kcA : arg(record);
    Reg hbm = arg(record + 3), sp = arg(record + 4);
    k_.dmaDim(d, s_.out, i, count, hbm, sp);
    if (!chunked) k_.release(count);
    k_.release(hbm);
    k_.release(sp);
  }
}

void ReduceGen::castTile(Reg rows, Reg n) {
  if (s_.acc == s_.in) return;
  Reg dstStride = arg(kArgAccRowBytes), srcStride = arg(kArgTileRowBytes), zero = k_.li(0);
  k_.vshape(rows, dstStride, srcStride, zero);
  Reg dst = arg(kArgTileAccSp), src = arg(kArgTileSp);
  k_.cast(s_.in, s_.acc, dst, src, n);
  for (Reg r : {dstStride, srcStride, zero, dst, src}) k_.release(r);
  oneRow();
}

void ReduceGen::unlessFirst(Reg j, Reg c, isa::Label skip) {
  Reg t = k_.reg();
  k_.alu(ScalarOp::Or, t, j, c);
  k_.brnz(t, skip);
  k_.release(t);
}

void ReduceGen::copy(DType t, int dstArg, int srcArg, Reg n) {
  Reg dst = arg(dstArg), src = arg(srcArg);
  k_.cast(t, t, dst, src, n);  // a same-type cast copies the bits
  k_.release(dst);
  k_.release(src);
}

void ReduceGen::rowsTile(Reg keptBlock, Reg redBlock, Reg j, Reg c) {
  if (isArg(s_.kind)) return rowsArg(keptBlock, redBlock, j, c);
  castTile(keptBlock, redBlock);
  if (s_.kind == ReduceKind::Prod) return rowsProd(keptBlock, redBlock);
  // One value per row into the partials, then folded into the accumulator.
  const bool sum = s_.kind == ReduceKind::Sum;
  const ReduceOp op = sum ? ReduceOp::Sum : isMaxLike(s_.kind) ? ReduceOp::Max : ReduceOp::Min;
  Reg rowBytes = arg(kArgAccRowBytes);
  vshape(keptBlock, isa::dtypeSize(s_.acc), rowBytes, 0);
  k_.release(rowBytes);
  Reg partial = arg(kArgPartialSp), src = arg(kArgTileAccSp);
  k_.reduce(op, s_.acc, partial, src, redBlock);
  k_.release(src);
  oneRow();
  if (!sum) {
    isa::Label fold = k_.label();
    unlessFirst(j, c, fold);
    copy(s_.acc, kArgAccSp, kArgPartialSp, keptBlock);
    k_.bind(fold);
  }
  Reg acc = arg(kArgAccSp);
  const BinaryOp fold = sum ? BinaryOp::Add : isMaxLike(s_.kind) ? BinaryOp::Max : BinaryOp::Min;
  k_.binary(fold, s_.acc, acc, acc, partial, keptBlock);
  k_.release(acc);
  k_.release(partial);
}

// There is no product reduce: halve every row (x[i] *= x[m - h + i]) until one column is left.
void ReduceGen::rowsProd(Reg keptBlock, Reg redBlock) {
  const int64_t e = isa::dtypeSize(s_.acc);
  Reg rowBytes = arg(kArgAccRowBytes), src = arg(kArgTileAccSp);
  Reg m = k_.reg(), h = k_.reg(), t = k_.reg();
  k_.mov(m, redBlock);
  k_.vshape(keptBlock, rowBytes, rowBytes, rowBytes);
  isa::Label loop = k_.label(), done = k_.label();
  k_.bind(loop);
  k_.cmp(Cond::Gt, t, m, 1);
  k_.brz(t, done);
  k_.alu(ScalarOp::Shr, h, m, 1);
  k_.alu(ScalarOp::Sub, t, m, h);
  k_.alu(ScalarOp::Mul, t, t, e);
  k_.alu(ScalarOp::Add, t, t, src);
  k_.binary(BinaryOp::Mul, s_.acc, src, src, t, h);
  k_.alu(ScalarOp::Sub, m, m, h);
  k_.br(loop);
  k_.bind(done);
  // acc[r] *= column 0 of row r.
  Reg acc = arg(kArgAccSp), one = k_.li(1);
  k_.li(t, e);
  k_.vshape(keptBlock, t, rowBytes, t);
  k_.binary(BinaryOp::Mul, s_.acc, acc, src, acc, one);
  for (Reg r : {rowBytes, src, m, h, t, acc, one}) k_.release(r);
  oneRow();
}

// Per row: the extreme and its first index in the tile; a tile's candidate replaces the
// accumulated one when strictly better, or when it is NaN and the accumulated one is not
// (so the first NaN, or the first of equal extremes, wins as in torch).
void ReduceGen::rowsArg(Reg keptBlock, Reg redBlock, Reg j, Reg c) {
  const bool isMax = s_.kind == ReduceKind::ArgMax;
  Reg rowBytes = arg(kArgTileRowBytes), tile = arg(kArgTileSp);
  Reg pv = arg(kArgPartialSp), pi = arg(kArgPartialIndexSp);
  vshape(keptBlock, isa::dtypeSize(s_.in), rowBytes, 0);
  k_.reduce(isMax ? ReduceOp::Max : ReduceOp::Min, s_.in, pv, tile, redBlock);
  vshape(keptBlock, 8, rowBytes, 0);
  k_.reduce(isMax ? ReduceOp::ArgMax : ReduceOp::ArgMin, s_.in, pi, tile, redBlock);
  k_.release(rowBytes);
  k_.release(tile);
  oneRow();
  // Tile indices to indices within the reduced dims: + j * redDescTotal + c * innerRed.
  Reg offset = arg(kArgRedDescTotal), t = arg(kArgInnerRed);
  k_.alu(ScalarOp::Mul, offset, offset, j);
  k_.alu(ScalarOp::Mul, t, t, c);
  k_.alu(ScalarOp::Add, offset, offset, t);
  k_.release(t);
  k_.binaryScalar(BinaryOp::Add, DType::I64, pi, pi, offset, keptBlock);
  k_.release(offset);
  isa::Label fold = k_.label();
  unlessFirst(j, c, fold);
  copy(s_.in, kArgAccSp, kArgPartialSp, keptBlock);
  copy(DType::I64, kArgIndexSp, kArgPartialIndexSp, keptBlock);
  k_.bind(fold);
  Reg av = arg(kArgAccSp), ai = arg(kArgIndexSp), better = arg(kArgMaskSp);
  k_.compare(isMax ? Cond::Gt : Cond::Lt, s_.in, better, pv, av, keptBlock);
  if (isa::isFloat(s_.in)) {
    Reg nan = k_.reg(), known = k_.reg();
    k_.alu(ScalarOp::Add, nan, better, keptBlock);
    k_.alu(ScalarOp::Add, known, nan, keptBlock);
    k_.compare(Cond::Ne, s_.in, nan, pv, pv, keptBlock);
    k_.compare(Cond::Eq, s_.in, known, av, av, keptBlock);
    k_.binary(BinaryOp::And, DType::U8, nan, nan, known, keptBlock);
    k_.binary(BinaryOp::Or, DType::U8, better, better, nan, keptBlock);
    k_.release(nan);
    k_.release(known);
  }
  k_.select(s_.in, av, better, pv, av, keptBlock);
  k_.select(DType::I64, ai, better, pi, ai, keptBlock);
  for (Reg r : {pv, pi, av, ai, better}) k_.release(r);
}

// Folds every reduced row of the tile into the accumulator with one instruction.
void ReduceGen::columnsTile(Reg keptBlock, Reg redBlock, Reg j, Reg c) {
  castTile(redBlock, keptBlock);
  const bool extreme = s_.kind == ReduceKind::Max || s_.kind == ReduceKind::Min;
  if (extreme) {
    isa::Label fold = k_.label();
    unlessFirst(j, c, fold);
    copy(s_.acc, kArgAccSp, kArgTileSp, keptBlock);  // row 0; folding it again changes nothing
    k_.bind(fold);
  }
  const BinaryOp op = s_.kind == ReduceKind::Sum    ? BinaryOp::Add
                      : s_.kind == ReduceKind::Prod ? BinaryOp::Mul
                      : s_.kind == ReduceKind::Max  ? BinaryOp::Max
                                                    : BinaryOp::Min;
  Reg rowBytes = arg(kArgAccRowBytes), zero = k_.li(0);
  k_.vshape(redBlock, zero, zero, rowBytes);
  Reg acc = arg(kArgAccSp), src = arg(kArgTileAccSp);
  k_.binary(op, s_.acc, acc, acc, src, keptBlock);
  for (Reg r : {rowBytes, zero, acc, src}) k_.release(r);
  oneRow();
}

isa::Function ReduceGen::build() {
  Reg in = arg(kArgIn), out = arg(kArgOut);
  if (s_.gridKept > 0) {
    Reg y = k_.workgroupId(1), idx = k_.reg();
    for (int i = 0; i < s_.gridKept; ++i) {
      const int record = gridArg(s_, i);
      Reg sz = arg(record);
      k_.alu(ScalarOp::Rem, idx, y, sz);
      k_.alu(ScalarOp::Div, y, y, sz);
      k_.release(sz);
      addScaled(in, idx, record + 1);
      addScaled(out, idx, record + 2);
    }
    k_.release(y);
    k_.release(idx);
  }
  // This workgroup's chunk of the outermost descriptor kept dim.
  const int keptOuter = keptDescArg(s_, s_.descKept - 1);
  Reg kcA = arg(keptOuter), kStart = k_.workgroupId(0);
  {
    Reg kc = arg(kArgKeptChunk);
    k_.alu(ScalarOp::Mul, kStart, kStart, kc);
    k_.alu(ScalarOp::Sub, kcA, kcA, kStart);
    k_.alu(ScalarOp::Min, kcA, kcA, kc);
    k_.release(kc);
  }
  addScaled(in, kStart, keptOuter + 1);
  addScaled(out, kStart, keptOuter + 3);
  k_.release(kStart);
  Reg keptBlock = arg(kArgInnerKept);
  k_.alu(ScalarOp::Mul, keptBlock, keptBlock, kcA);
  if (s_.kind == ReduceKind::Sum || s_.kind == ReduceKind::Prod) {
    // -0 is the identity of float addition.
    const double identity = s_.kind == ReduceKind::Prod ? 1.0 : isa::isFloat(s_.acc) ? -0.0 : 0.0;
    Reg acc = arg(kArgAccSp);
    k_.fill(s_.acc, acc, identity, keptBlock);
    k_.release(acc);
  }

  isa::Desc desc = k_.desc();
  Reg j = k_.li(0), c = k_.reg(), base = k_.reg(), rcA = k_.reg(), t = k_.reg();
  isa::Label loopJ = k_.label(), nextJ = k_.label(), loopC = k_.label(), done = k_.label();
  const int redOuter = redDescArg(s_, s_.descRed - 1);
  k_.bind(loopJ);
  {
    Reg total = arg(kArgLoopTotal);
    k_.cmp(Cond::Lt, t, j, total);
    k_.release(total);
  }
  k_.brz(t, done);
  k_.mov(base, in);
  if (s_.loopRed > 0) {
    Reg rest = k_.reg(), idx = k_.reg();
    k_.mov(rest, j);
    for (int i = 0; i < s_.loopRed; ++i) {
      Reg size = arg(loopArg(s_, i));
      k_.alu(ScalarOp::Rem, idx, rest, size);
      k_.alu(ScalarOp::Div, rest, rest, size);
      k_.release(size);
      addScaled(base, idx, loopArg(s_, i) + 1);
    }
    k_.release(rest);
    k_.release(idx);
  }
  k_.li(c, 0);
  k_.bind(loopC);
  {
    Reg size = arg(redOuter), rc = arg(kArgRedChunk);
    k_.cmp(Cond::Lt, t, c, size);
    k_.alu(ScalarOp::Sub, rcA, size, c);
    k_.alu(ScalarOp::Min, rcA, rcA, rc);
    k_.release(size);
    k_.release(rc);
  }
  k_.brz(t, nextJ);
  loadDescriptor(desc, kcA, rcA);
  {
    Reg address = k_.reg();
    k_.mov(address, base);
    addScaled(address, c, redOuter + 1);
    Reg tile = arg(kArgTileSp);
    Reg token = k_.dmaLoad(tile, address, desc);
    k_.wait(token);
    for (Reg r : {address, tile, token}) k_.release(r);
  }
  Reg redBlock = arg(kArgInnerRed);
  k_.alu(ScalarOp::Mul, redBlock, redBlock, rcA);
  if (s_.columns) {
    columnsTile(keptBlock, redBlock, j, c);
  } else {
    rowsTile(keptBlock, redBlock, j, c);
  }
  k_.release(redBlock);
  {
    Reg rc = arg(kArgRedChunk);
    k_.alu(ScalarOp::Add, c, c, rc);
    k_.release(rc);
  }
  k_.br(loopC);
  k_.bind(nextJ);
  k_.alu(ScalarOp::Add, j, j, 1);
  k_.br(loopJ);
  k_.bind(done);

  // The result, converted to the output type where that differs, to out.
  int resultArg = isArg(s_.kind) ? kArgIndexSp : kArgAccSp;
  if (!isArg(s_.kind) && s_.out != s_.acc) {
    Reg dst = arg(kArgOutSp), src = arg(kArgAccSp);
    k_.cast(s_.acc, s_.out, dst, src, keptBlock);
    k_.release(dst);
    k_.release(src);
    resultArg = kArgOutSp;
  }
  storeDescriptor(desc, kcA);
  Reg result = arg(resultArg);
  Reg token = k_.dmaStore(out, result, desc);
  k_.wait(token);
  return k_.finish();
}

}  // namespace

std::string ReduceShape::key() const {
  return std::string("reduce.") + kindName(kind) + "." + isa::dtypeName(in) + "." +
         isa::dtypeName(acc) + "." + isa::dtypeName(out) + (columns ? ".cols" : ".rows") + ".k" +
         std::to_string(descKept) + "r" + std::to_string(descRed) + "g" + std::to_string(gridKept) +
         "l" + std::to_string(loopRed);
}

isa::Function buildReduceKernel(const ReduceShape& shape) {
  return ReduceGen(shape).build();
}

}  // namespace mimic::ops::detail
