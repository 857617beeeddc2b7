#include "torch_backend/ops/reduce_kernel.h"

#include <string>
#include <vector>

#include "sim/isa/builder.h"
#include "torch_backend/ops/reduce_tile.h"

namespace mimic::ops::detail {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::KernelBuilder;
using isa::Reg;
using isa::ScalarOp;

constexpr int kSets = 2;  // tile buffer sets: one loads while the other is folded

bool isArg(ReduceKind k) {
  return k == ReduceKind::ArgMax || k == ReduceKind::ArgMin;
}

const char* kindName(ReduceKind k) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "argmax", "argmin"};
  return kNames[static_cast<int>(k)];
}

const char* mapName(ReduceMap m) {
  static const char* const kNames[] = {"", ".abs", ".square", ".mul", ".sqdiff", ".nonzero"};
  return kNames[static_cast<int>(m)];
}

class ReduceGen {
 public:
  explicit ReduceGen(const ReduceShape& s)
      : s_(s), k_(s.key(), static_cast<uint32_t>(argCount(s))), fold_(k_, s_) {}

  isa::Function build();

 private:
  Reg arg(int i) { return k_.arg(i); }
  // d += idx * (argument `strideArg`).
  // in_, other_ and out_ at the workgroup's first kept element; kcA_ and keptBlock_.
  void place();
  // [start_, end_): this workgroup's part of the tile sequence; out_ at its partials.
  void tileRange();
  // Tile t's index over the loop reduced dims (j), its first element (c) and its element count
  // (rcA) along the outermost descriptor reduced dim.
  void coords(Reg t, Reg j, Reg c, Reg rcA);
  void load(Reg t, int set);
  void compute(Reg t, int set);
  // Sets desc_ for a load of `in` or of the second operand.
  void loadDescriptor(bool other, Reg rcA);
  // Sets desc_ for the store of out, or of the extremes (values, laid out as out in in's type).
  void storeDescriptor(bool values);
  void finish();

  const ReduceShape& s_;
  KernelBuilder k_;
  TileFold fold_;
  isa::Desc desc_{0};
  Reg in_{0}, other_{0}, out_{0}, kcA_{0}, keptBlock_{0}, start_{0}, end_{0};
  Reg tokens_[kSets][2] = {};  // [set][in, other]
};

void ReduceGen::place() {
  in_ = arg(kArgIn);
  out_ = arg(kArgOut);
  if (s_.hasOther()) other_ = arg(kArgOther);
  if (s_.gridKept > 0) {
    Reg y = k_.workgroupId(1), idx = k_.reg();
    for (int i = 0; i < s_.gridKept; ++i) {
      const int record = gridArg(s_, i);
      Reg sz = arg(record + kGridSize);
      k_.alu(ScalarOp::Rem, idx, y, sz);
      k_.alu(ScalarOp::Div, y, y, sz);
      k_.release(sz);
      k_.addScaledArg(in_, idx, record + kGridIn);
      k_.addScaledArg(out_, idx, record + kGridOut);
      if (s_.hasOther()) k_.addScaledArg(other_, idx, record + kGridOther);
    }
    k_.release(y);
    k_.release(idx);
  }
  // This workgroup's chunk of the outermost descriptor kept dim.
  const int keptOuter = keptDescArg(s_, s_.descKept - 1);
  kcA_ = arg(keptOuter + kKeptSize);
  Reg kStart = k_.workgroupId(0), kc = arg(kArgKeptChunk);
  k_.alu(ScalarOp::Mul, kStart, kStart, kc);
  k_.alu(ScalarOp::Sub, kcA_, kcA_, kStart);
  k_.alu(ScalarOp::Min, kcA_, kcA_, kc);
  k_.release(kc);
  k_.addScaledArg(in_, kStart, keptOuter + kKeptIn);
  k_.addScaledArg(out_, kStart, keptOuter + kKeptOut);
  if (s_.hasOther()) k_.addScaledArg(other_, kStart, keptOuter + kKeptOther);
  k_.release(kStart);
  keptBlock_ = arg(kArgInnerKept);
  k_.alu(ScalarOp::Mul, keptBlock_, keptBlock_, kcA_);
}

void ReduceGen::tileRange() {
  Reg z = k_.workgroupId(2), parts = k_.gridDim(2), tiles = arg(kArgTiles);
  start_ = k_.reg();
  end_ = k_.reg();
  k_.alu(ScalarOp::Mul, start_, z, tiles);
  k_.alu(ScalarOp::Div, start_, start_, parts);
  k_.addScaledArg(out_, z, kArgSplitStride);
  k_.alu(ScalarOp::Add, z, z, 1);
  k_.alu(ScalarOp::Mul, end_, z, tiles);
  k_.alu(ScalarOp::Div, end_, end_, parts);
  for (Reg r : {z, parts, tiles}) k_.release(r);
}

void ReduceGen::coords(Reg t, Reg j, Reg c, Reg rcA) {
  Reg chunks = arg(kArgRedChunks), rc = arg(kArgRedChunk);
  Reg size = arg(redDescArg(s_, s_.descRed - 1) + kRedSize);
  k_.alu(ScalarOp::Div, j, t, chunks);
  k_.alu(ScalarOp::Rem, c, t, chunks);
  k_.alu(ScalarOp::Mul, c, c, rc);
  k_.alu(ScalarOp::Sub, rcA, size, c);
  k_.alu(ScalarOp::Min, rcA, rcA, rc);
  for (Reg r : {chunks, rc, size}) k_.release(r);
}

void ReduceGen::loadDescriptor(bool other, Reg rcA) {
  // The descriptor's innermost dims are the tile's columns: reduced ones in the rows layout.
  struct Entry {
    int record, hbm, sp;
    Reg chunkCount;
    bool chunked;
  };
  std::vector<Entry> kept, red, entries;
  for (int i = 0; i < s_.descKept; ++i) {
    kept.push_back({keptDescArg(s_, i), other ? kKeptOther : kKeptIn,
                    other ? kKeptOtherTile : kKeptTile, kcA_, i == s_.descKept - 1});
  }
  for (int i = 0; i < s_.descRed; ++i) {
    red.push_back({redDescArg(s_, i), other ? kRedOther : kRedIn, other ? kRedOtherTile : kRedTile,
                   rcA, i == s_.descRed - 1});
  }
  entries = s_.columns ? kept : red;
  for (const Entry& e : s_.columns ? red : kept) entries.push_back(e);
  const DType type = other ? s_.otherType() : s_.in;
  for (size_t dim = 0; dim < entries.size(); ++dim) {
    const Entry& e = entries[dim];
    Reg count = e.chunked ? e.chunkCount : arg(e.record);  // size is each record's first field
    Reg hbm = arg(e.record + e.hbm), sp = arg(e.record + e.sp);
    k_.dmaDim(desc_, type, static_cast<int>(dim), count, hbm, sp);
    if (!e.chunked) k_.release(count);
    k_.release(hbm);
    k_.release(sp);
  }
}

void ReduceGen::load(Reg t, int set) {
  Reg j = k_.reg(), c = k_.reg(), rcA = k_.reg();
  coords(t, j, c, rcA);
  const int redOuter = redDescArg(s_, s_.descRed - 1);
  Reg address = k_.reg(), otherAddress = k_.reg();
  k_.mov(address, in_);
  k_.addScaledArg(address, c, redOuter + kRedIn);
  if (s_.hasOther()) {
    k_.mov(otherAddress, other_);
    k_.addScaledArg(otherAddress, c, redOuter + kRedOther);
  }
  if (s_.loopRed > 0) {
    Reg idx = k_.reg();
    for (int i = 0; i < s_.loopRed; ++i) {
      const int record = loopArg(s_, i);
      Reg size = arg(record + kLoopSize);
      k_.alu(ScalarOp::Rem, idx, j, size);
      k_.alu(ScalarOp::Div, j, j, size);
      k_.release(size);
      k_.addScaledArg(address, idx, record + kLoopIn);
      if (s_.hasOther()) k_.addScaledArg(otherAddress, idx, record + kLoopOther);
    }
    k_.release(idx);
  }
  loadDescriptor(false, rcA);
  Reg sp = arg(kArgTileSp0 + set);
  k_.dmaLoad(tokens_[set][0], sp, address, desc_);
  if (s_.hasOther()) {
    loadDescriptor(true, rcA);
    k_.release(sp);
    sp = arg(kArgOtherSp0 + set);
    k_.dmaLoad(tokens_[set][1], sp, otherAddress, desc_);
  }
  for (Reg r : {j, c, rcA, address, otherAddress, sp}) k_.release(r);
}

void ReduceGen::compute(Reg t, int set) {
  Reg j = k_.reg(), c = k_.reg(), rcA = k_.reg(), first = k_.reg();
  coords(t, j, c, rcA);
  Reg redBlock = arg(kArgInnerRed);
  k_.alu(ScalarOp::Mul, redBlock, redBlock, rcA);
  k_.release(rcA);
  k_.cmp(Cond::Eq, first, t, start_);
  fold_.fold(set, keptBlock_, redBlock, first, j, c);
  for (Reg r : {j, c, redBlock, first}) k_.release(r);
}

void ReduceGen::storeDescriptor(bool values) {
  const int e = isa::dtypeSize(s_.in);
  for (int i = 0; i < s_.descKept; ++i) {
    const int record = keptDescArg(s_, i);
    const bool chunked = i == s_.descKept - 1;
    Reg count = chunked ? kcA_ : arg(record + kKeptSize);
    Reg hbm = arg(record + kKeptOut), sp = arg(record + kKeptOutSp);
    if (values) {  // index strides (8 bytes an element) to strides of in's elements
      for (Reg r : {hbm, sp}) {
        k_.alu(ScalarOp::Div, r, r, 8);
        k_.alu(ScalarOp::Mul, r, r, e);
      }
    }
    k_.dmaDim(desc_, values ? s_.in : s_.out, i, count, hbm, sp);
    if (!chunked) k_.release(count);
    k_.release(hbm);
    k_.release(sp);
  }
}

void ReduceGen::finish() {
  if (s_.divide || s_.sqrt) {
    Reg acc = arg(kArgAccSp);
    if (s_.divide) {
      Reg divisor = arg(kArgDivisor);
      k_.binaryScalar(BinaryOp::Div, s_.acc, acc, acc, divisor, keptBlock_);
      k_.release(divisor);
    }
    if (s_.sqrt) k_.unary(isa::UnaryOp::Sqrt, s_.acc, acc, acc, keptBlock_);
    k_.release(acc);
  }
  // The result, converted to the output type where that differs, to out.
  int resultArg = isArg(s_.kind) ? kArgIndexSp : kArgAccSp;
  if (!isArg(s_.kind) && s_.out != s_.acc) {
    Reg dst = arg(kArgOutSp), src = arg(kArgAccSp);
    k_.cast(s_.acc, s_.out, dst, src, keptBlock_);
    k_.release(dst);
    k_.release(src);
    resultArg = kArgOutSp;
  }
  storeDescriptor(false);
  Reg result = arg(resultArg);
  Reg token = k_.dmaStore(out_, result, desc_);
  k_.release(token);
  k_.release(result);
  if (s_.storeValues) {
    // The extremes sit where the indices do, scaled from 8-byte indices to in's elements.
    Reg address = arg(kArgOut), base = arg(kArgValuesOut);
    k_.alu(ScalarOp::Sub, address, out_, address);
    k_.alu(ScalarOp::Div, address, address, 8);
    k_.alu(ScalarOp::Mul, address, address, isa::dtypeSize(s_.in));
    k_.alu(ScalarOp::Add, address, address, base);
    storeDescriptor(true);
    Reg values = arg(kArgAccSp);
    Reg t = k_.dmaStore(address, values, desc_);
    for (Reg r : {address, base, values, t}) k_.release(r);
  }
  k_.waitAll();
}

isa::Function ReduceGen::build() {
  desc_ = k_.desc();
  place();
  tileRange();
  if (s_.kind == ReduceKind::Sum || s_.kind == ReduceKind::Prod) {
    // -0 is the identity of float addition.
    const double identity = s_.kind == ReduceKind::Prod ? 1.0 : isa::isFloat(s_.acc) ? -0.0 : 0.0;
    Reg acc = arg(kArgAccSp);
    k_.fill(s_.acc, acc, identity, keptBlock_);
    k_.release(acc);
  }
  for (auto& set : tokens_) {
    for (int i = 0; i < (s_.hasOther() ? 2 : 1); ++i) set[i] = k_.li(0);  // never issued: free
  }
  Reg t = k_.reg(), test = k_.reg();
  isa::Label loop = k_.label(), done = k_.label();
  k_.mov(t, start_);
  k_.cmp(Cond::Ge, test, t, end_);
  k_.brnz(test, done);
  load(t, 0);
  k_.bind(loop);
  for (int set = 0; set < kSets; ++set) {
    k_.cmp(Cond::Ge, test, t, end_);
    k_.brnz(test, done);
    isa::Label current = k_.label();
    k_.alu(ScalarOp::Add, test, t, 1);
    k_.cmp(Cond::Lt, test, test, end_);
    k_.brz(test, current);
    k_.alu(ScalarOp::Add, test, t, 1);
    load(test, (set + 1) % kSets);
    k_.bind(current);
    for (int i = 0; i < (s_.hasOther() ? 2 : 1); ++i) k_.wait(tokens_[set][i]);
    compute(t, set);
    k_.alu(ScalarOp::Add, t, t, 1);
  }
  k_.br(loop);
  k_.bind(done);
  k_.release(t);
  k_.release(test);
  finish();
  return k_.finish();
}

}  // namespace

std::string ReduceShape::key() const {
  return std::string("reduce.") + kindName(kind) + mapName(map) + (gather ? ".gather" : "") +
         (storeValues ? ".values" : "") + (divide ? ".div" : "") + (sqrt ? ".sqrt" : "") + "." +
         isa::dtypeName(in) + "." + isa::dtypeName(acc) + "." + isa::dtypeName(out) +
         (columns ? ".cols" : ".rows") + ".k" + std::to_string(descKept) + "r" +
         std::to_string(descRed) + "g" + std::to_string(gridKept) + "l" + std::to_string(loopRed);
}

isa::Function buildReduceKernel(const ReduceShape& shape) {
  return ReduceGen(shape).build();
}

}  // namespace mimic::ops::detail
