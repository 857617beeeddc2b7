#include "torch_backend/ops/reduce_tile.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::ReduceOp;
using isa::Reg;
using isa::ScalarOp;

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}
bool isMaxLike(ReduceKind k) {
  return k == ReduceKind::Max || k == ReduceKind::ArgMax;
}

}  // namespace

void TileFold::fold(int set, Reg keptBlock, Reg redBlock, Reg first, Reg j, Reg c) {
  if (s_.columns) return columnsTile(set, keptBlock, redBlock, first);
  rowsTile(set, keptBlock, redBlock, first, j, c);
}

void TileFold::oneRow() {
  Reg one = k_.li(1), zero = k_.li(0);
  k_.vshape(one, zero, zero, zero);
  k_.release(one);
  k_.release(zero);
}

void TileFold::vshape(Reg rows, int64_t dstStride, Reg srcStride, int64_t otherStride) {
  Reg dst = k_.li(dstStride), other = k_.li(otherStride);
  k_.vshape(rows, dst, srcStride, other);
  k_.release(dst);
  k_.release(other);
}

void TileFold::copy(DType t, int dstArg, int srcArg, Reg n) {
  Reg dst = arg(dstArg), src = arg(srcArg);
  k_.cast(t, t, dst, src, n);  // a same-type cast copies the bits
  k_.release(dst);
  k_.release(src);
}

void TileFold::prepare(int set, Reg rows, Reg n) {
  if (s_.acc == s_.in && s_.map == ReduceMap::Identity) return;
  Reg accRow = arg(kArgAccRowBytes), zero = k_.li(0);
  auto convert = [&](int rowBytesArg, int srcArg, int dstArg) {
    Reg srcRow = arg(rowBytesArg), dst = arg(dstArg), src = arg(srcArg);
    k_.vshape(rows, accRow, srcRow, zero);
    k_.cast(s_.in, s_.acc, dst, src, n);
    for (Reg r : {srcRow, dst, src}) k_.release(r);
  };
  if (s_.acc != s_.in) {
    convert(kArgTileRowBytes, tileArg(set), kArgTileAccSp);
    if (s_.pairs()) convert(kArgOtherRowBytes, otherArg(set), kArgOtherAccSp);
  }
  if (s_.map != ReduceMap::Identity) {
    // Every operand is a tile in the accumulation type, all with the same row stride.
    k_.vshape(rows, accRow, accRow, accRow);
    Reg x = arg(tileAccArg(set));
    if (s_.map == ReduceMap::Abs) {
      k_.unary(isa::UnaryOp::Abs, s_.acc, x, x, n);
    } else if (s_.map == ReduceMap::Square) {
      k_.binary(BinaryOp::Mul, s_.acc, x, x, x, n);
    } else if (s_.map == ReduceMap::NonZero) {
      k_.binaryScalar(BinaryOp::Min, s_.acc, x, x, 1.0, n);  // bytes are never negative
    } else if (s_.map == ReduceMap::Mul) {
      Reg y = arg(otherAccArg(set));
      k_.binary(BinaryOp::Mul, s_.acc, x, x, y, n);
      k_.release(y);
    } else {
      Reg y = arg(otherAccArg(set));
      k_.binary(BinaryOp::Sub, s_.acc, x, x, y, n);
      k_.binary(BinaryOp::Mul, s_.acc, x, x, x, n);
      k_.release(y);
    }
    k_.release(x);
  }
  k_.release(accRow);
  k_.release(zero);
  oneRow();
}

void TileFold::rowsTile(int set, Reg keptBlock, Reg redBlock, Reg first, Reg j, Reg c) {
  if (isArg(s_.kind)) return rowsArg(set, keptBlock, redBlock, first, j, c);
  prepare(set, keptBlock, redBlock);
  if (s_.kind == ReduceKind::Prod) return rowsProd(set, keptBlock, redBlock);
  // One value per row into the partials, then folded into the accumulator.
  const bool sum = s_.kind == ReduceKind::Sum;
  const ReduceOp op = sum ? ReduceOp::Sum : isMaxLike(s_.kind) ? ReduceOp::Max : ReduceOp::Min;
  Reg rowBytes = arg(kArgAccRowBytes);
  vshape(keptBlock, isa::dtypeSize(s_.acc), rowBytes, 0);
  k_.release(rowBytes);
  Reg partial = arg(kArgPartialSp), src = arg(tileAccArg(set));
  k_.reduce(op, s_.acc, partial, src, redBlock);
  k_.release(src);
  oneRow();
  if (!sum) {
    isa::Label fold = k_.label();
    unlessFirst(first, fold);
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
void TileFold::rowsProd(int set, Reg keptBlock, Reg redBlock) {
  const int64_t e = isa::dtypeSize(s_.acc);
  Reg rowBytes = arg(kArgAccRowBytes), src = arg(tileAccArg(set));
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
void TileFold::rowsArg(int set, Reg keptBlock, Reg redBlock, Reg first, Reg j, Reg c) {
  const bool isMax = s_.kind == ReduceKind::ArgMax;
  Reg rowBytes = arg(kArgTileRowBytes), tile = arg(tileArg(set));
  Reg pv = arg(kArgPartialSp), pi = arg(kArgPartialIndexSp);
  vshape(keptBlock, isa::dtypeSize(s_.in), rowBytes, 0);
  k_.reduce(isMax ? ReduceOp::Max : ReduceOp::Min, s_.in, pv, tile, redBlock);
  vshape(keptBlock, 8, rowBytes, 0);
  k_.reduce(isMax ? ReduceOp::ArgMax : ReduceOp::ArgMin, s_.in, pi, tile, redBlock);
  k_.release(rowBytes);
  k_.release(tile);
  oneRow();
  if (s_.gather) {
    gatherIndices(set, keptBlock);
  } else {
    // Tile indices to indices within the reduced dims: + j * redDescTotal + c * innerRed.
    Reg offset = arg(kArgRedDescTotal), t = arg(kArgInnerRed);
    k_.alu(ScalarOp::Mul, offset, offset, j);
    k_.alu(ScalarOp::Mul, t, t, c);
    k_.alu(ScalarOp::Add, offset, offset, t);
    k_.release(t);
    k_.binaryScalar(BinaryOp::Add, DType::I64, pi, pi, offset, keptBlock);
    k_.release(offset);
  }
  isa::Label fold = k_.label();
  unlessFirst(first, fold);
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

void TileFold::gatherIndices(int set, Reg keptBlock) {
  Reg row = k_.li(0), t = k_.reg(), one = k_.li(1);
  Reg index = arg(kArgPartialIndexSp), src = arg(otherArg(set)), rowBytes = arg(kArgOtherRowBytes);
  isa::Label loop = k_.label(), done = k_.label();
  k_.bind(loop);
  k_.cmp(Cond::Lt, t, row, keptBlock);
  k_.brz(t, done);
  k_.sload(DType::I64, t, index);
  k_.alu(ScalarOp::Mul, t, t, 8);
  k_.alu(ScalarOp::Add, t, t, src);
  k_.cast(DType::I64, DType::I64, index, t, one);
  k_.alu(ScalarOp::Add, index, index, 8);
  k_.alu(ScalarOp::Add, src, src, rowBytes);
  k_.alu(ScalarOp::Add, row, row, 1);
  k_.br(loop);
  k_.bind(done);
  for (Reg r : {row, t, one, index, src, rowBytes}) k_.release(r);
}

// Folds every reduced row of the tile into the accumulator with one instruction.
void TileFold::columnsTile(int set, Reg keptBlock, Reg redBlock, Reg first) {
  prepare(set, redBlock, keptBlock);
  const bool extreme = s_.kind == ReduceKind::Max || s_.kind == ReduceKind::Min;
  if (extreme) {
    isa::Label fold = k_.label();
    unlessFirst(first, fold);
    copy(s_.acc, kArgAccSp, tileAccArg(set), keptBlock);  // row 0; folding it again is harmless
    k_.bind(fold);
  }
  const BinaryOp op = s_.kind == ReduceKind::Sum    ? BinaryOp::Add
                      : s_.kind == ReduceKind::Prod ? BinaryOp::Mul
                      : s_.kind == ReduceKind::Max  ? BinaryOp::Max
                                                    : BinaryOp::Min;
  Reg rowBytes = arg(kArgAccRowBytes), zero = k_.li(0);
  k_.vshape(redBlock, zero, zero, rowBytes);
  Reg acc = arg(kArgAccSp), src = arg(tileAccArg(set));
  k_.binary(op, s_.acc, acc, acc, src, keptBlock);
  for (Reg r : {rowBytes, zero, acc, src}) k_.release(r);
  oneRow();
}

}  // namespace mimic::ops::detail
