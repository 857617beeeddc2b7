#include "torch_backend/ops/elementwise_kernel.h"

#include <stdexcept>
#include <vector>

#include "sim/isa/builder.h"

namespace mimic::ops {
namespace {

using isa::Cond;
using isa::DType;
using isa::Reg;
using isa::ScalarOp;

constexpr int64_t kCapacityQuantum = 64;  // keeps every buffer 64-byte aligned

// What the tile loop needs to know of its programs together.
struct Summary {
  const std::vector<DType>* inputs = nullptr;  // every program's input dtypes
  unsigned usedInputs = 0;                     // by any program
  int numRand = 0;                             // of all programs
  bool counter = false;                        // some program uses rand or idx
  bool direct = false;   // some output is stored straight from a loaded input's buffer
  bool uniform = false;  // a single program computed once per workgroup
};

Summary summarize(const KernelPrograms& programs) {
  Summary s;
  s.inputs = &programs.front()->inputs;
  const unsigned real = (1u << s.inputs->size()) - 1;  // the others are earlier outputs
  for (const Program* p : programs) {
    s.usedInputs |= p->usedInputs & real;
    s.numRand += p->numRand;
    s.counter = s.counter || p->usesCounter();
    s.direct = s.direct || (p->direct && (p->usedInputs & real));
  }
  s.uniform = programs.size() == 1 && programs.front()->uniform;
  return s;
}

bool loaded(const Summary& s, unsigned uniformInputs, int input) {
  return (s.usedInputs >> input & 1u) && !(uniformInputs >> input & 1u);
}

class KernelGen {
 public:
  KernelGen(const KernelPrograms& programs, const IterationClass& it, const KernelLayout& layout,
            size_t numScalars)
      : programs_(programs),
        p_(summarize(programs)),
        it_(it),
        layout_(layout),
        args_(elementwiseArgs(programs, it, numScalars)),
        k_("elementwise", static_cast<uint32_t>(args_.total)) {
    const int outputs = static_cast<int>(programs.size());
    for (int i = 0, op = outputs; i < static_cast<int>(p_.inputs->size()); ++i) {
      if (p_.usedInputs >> i & 1u) operand_[i] = op++;
      if (loaded(p_, it.uniformInputs, i)) loaded_.push_back(i);
    }
  }

  isa::Function build() {
    desc_ = k_.desc();
    tileRange();
    for (int s = 0; s < layout_.depth; ++s) {
      loadTokens_.emplace_back();
      for (size_t j = 0; j < loaded_.size(); ++j) loadTokens_.back().push_back(k_.li(0));
      storeTokens_.emplace_back();  // token 0 is never issued: waiting on it is free
      for (size_t j = 0; j < programs_.size(); ++j) storeTokens_.back().push_back(k_.li(0));
    }
    loadUniformInputs();
    if (p_.counter) {
      Reg capacity = arg(ElementwiseArgs::kCapacity), iota = k_.li(layout_.rand.iota);
      k_.iota(DType::I32, iota, capacity);
      k_.release(iota);
      k_.release(capacity);
    }
    int64_t uniformResult = 0;
    if (p_.uniform) {
      Reg capacity = arg(ElementwiseArgs::kCapacity);
      uniformResult =
          emitTile(k_, *programs_.front(), buffers(0, 0), {capacity, capacity, args_.scalars});
      k_.release(capacity);
    }
    if (it_.segments == 1) {
      if (!p_.uniform && !loaded_.empty()) loadTile(i_, 0);
      tileLoop(uniformResult);
    }
    // A list kernel walks its segments in turn, each tile loop draining its DMAs before the
    // next segment reuses the buffers.
    for (segment_ = 0; it_.segments > 1 && segment_ < it_.segments; ++segment_) {
      segmentRange();
      if (!p_.uniform && !loaded_.empty()) {
        isa::Label empty = k_.label();
        Reg t = k_.reg();
        k_.cmp(Cond::Ge, t, i_, end_);
        k_.brnz(t, empty);
        k_.release(t);
        loadTile(i_, 0);
        k_.bind(empty);
      }
      tileLoop(uniformResult);
      if (segment_ + 1 < it_.segments) k_.waitAll();
    }
    k_.waitAll();
    return k_.finish();
  }

 private:
  struct Geometry {
    Reg chunkStart, count, outer;  // of dim split; the tile's index over the outer dims
  };

  TileBuffers buffers(int set, int output) const {
    return layout_.buffers(set, programs_, it_.uniformInputs, output);
  }

  // Tiles [i_, end_) with double buffering; the first tile's inputs are already loading.
  void tileLoop(int64_t uniformResult) {
    isa::Label loop = k_.label(), done = k_.label();
    k_.bind(loop);
    for (int s = 0; s < layout_.depth; ++s) {
      Reg t = k_.reg();
      k_.cmp(Cond::Ge, t, i_, end_);
      k_.brnz(t, done);
      if (!loaded_.empty()) prefetch(t, (s + 1) % layout_.depth);
      k_.release(t);
      for (Reg token : loadTokens_[s]) k_.wait(token);
      if (!p_.direct && !p_.uniform) waitStores(s);  // they read this set's outputs
      computeAndStore(s, uniformResult);
      k_.alu(ScalarOp::Add, i_, i_, 1);
    }
    k_.br(loop);
    k_.bind(done);
  }

  // [i_, end_) = [w*T/G, (w+1)*T/G). A list kernel keeps that range of all its segments' tiles
  // in first_ and last_, and segmentRange() cuts the current segment's part out of it.
  void tileRange() {
    const bool list = it_.segments > 1;
    Reg w = k_.workgroupId(0), g = k_.gridDim(0);
    Reg tiles = list ? k_.arg(args_.totalTiles) : arg(ElementwiseArgs::kTiles);
    i_ = k_.reg();
    end_ = k_.reg();
    Reg first = list ? k_.reg() : i_, last = list ? k_.reg() : end_;
    k_.alu(ScalarOp::Mul, first, w, tiles);
    k_.alu(ScalarOp::Div, first, first, g);
    k_.alu(ScalarOp::Add, w, w, 1);
    k_.alu(ScalarOp::Mul, last, w, tiles);
    k_.alu(ScalarOp::Div, last, last, g);
    for (Reg r : {w, g, tiles}) k_.release(r);
    if (list) {
      first_ = first;
      last_ = last;
    }
  }

  // The current segment's tiles in [first_, last_), numbered from the segment's first tile.
  void segmentRange() {
    Reg start = k_.arg(args_.tileStarts + segment_), tiles = arg(ElementwiseArgs::kTiles);
    k_.alu(ScalarOp::Sub, i_, first_, start);
    k_.alu(ScalarOp::Max, i_, i_, 0);
    k_.alu(ScalarOp::Sub, end_, last_, start);
    k_.alu(ScalarOp::Min, end_, end_, tiles);
    k_.release(start);
    k_.release(tiles);
  }

  Geometry geometry(Reg tile) {
    Geometry g{k_.reg(), k_.reg(), k_.reg()};
    Reg t = arg(ElementwiseArgs::kChunks);
    k_.alu(ScalarOp::Div, g.outer, tile, t);
    k_.alu(ScalarOp::Rem, g.chunkStart, tile, t);
    k_.release(t);
    Reg extent = arg(ElementwiseArgs::kTileExtent);
    k_.alu(ScalarOp::Mul, g.chunkStart, g.chunkStart, extent);
    Reg size = arg(ElementwiseArgs::kSplitSize);
    k_.alu(ScalarOp::Sub, g.count, size, g.chunkStart);
    k_.alu(ScalarOp::Min, g.count, g.count, extent);
    k_.release(size);
    k_.release(extent);
    return g;
  }

  void release(const Geometry& g) {
    for (Reg r : {g.chunkStart, g.count, g.outer}) k_.release(r);
  }

  int operandArg(int op) const { return args_.operands + op * (it_.rank + 1); }

  // Argument `index` of the current segment's block (the whole argument list of a one-segment
  // kernel; see ElementwiseArgs::segmentBlock).
  Reg arg(int index) { return k_.arg(segment_ * args_.segmentBlock + index); }

  // The HBM address of operand `op`'s part of the tile.
  Reg address(int op, const Geometry& g) {
    const int base = operandArg(op);
    Reg addr = arg(base), t = arg(base + 1 + it_.split);
    k_.alu(ScalarOp::Mul, t, t, g.chunkStart);
    k_.alu(ScalarOp::Add, addr, addr, t);
    if (it_.rank > it_.split + 1) {
      Reg q = k_.reg();
      k_.mov(q, g.outer);
      for (int d = it_.split + 1; d < it_.rank; ++d) {
        if (d + 1 < it_.rank) {
          Reg size = arg(ElementwiseArgs::kSizes + d);
          k_.alu(ScalarOp::Rem, t, q, size);
          k_.alu(ScalarOp::Div, q, q, size);
          k_.release(size);
        } else {
          k_.mov(t, q);
        }
        Reg stride = arg(base + 1 + d);
        k_.alu(ScalarOp::Mul, t, t, stride);
        k_.alu(ScalarOp::Add, addr, addr, t);
        k_.release(stride);
      }
      k_.release(q);
    }
    k_.release(t);
    return addr;
  }

  // Sets the descriptor for operand `op`'s tile: dense in scratchpad, strided in HBM.
  void describe(int op, DType type, Reg splitCount) {
    for (int d = 0; d <= it_.split; ++d) {
      Reg count = d < it_.split ? arg(ElementwiseArgs::kSizes + d) : splitCount;
      Reg hbm = arg(operandArg(op) + 1 + d), sp = arg(args_.spElements + d);
      k_.alu(ScalarOp::Mul, sp, sp, isa::dtypeSize(type));
      k_.dmaDim(desc_, type, d, count, hbm, sp);
      if (d < it_.split) k_.release(count);
      k_.release(hbm);
      k_.release(sp);
    }
  }

  void loadTile(Reg tile, int set) {
    Geometry g = geometry(tile);
    const TileBuffers b = buffers(set, 0);
    for (size_t j = 0; j < loaded_.size(); ++j) {
      const int input = loaded_[j];
      Reg addr = address(operand_[input], g);
      describe(operand_[input], (*p_.inputs)[input], g.count);
      Reg sp = k_.li(b.inputs[input]);
      k_.dmaLoad(loadTokens_[set][j], sp, addr, desc_);
      k_.release(sp);
      k_.release(addr);
    }
    release(g);
  }

  // Loads tile i_ + 1 into `set` if this workgroup has it.
  void prefetch(Reg t, int set) {
    isa::Label skip = k_.label();
    Reg next = k_.reg();
    k_.alu(ScalarOp::Add, next, i_, 1);
    k_.cmp(Cond::Lt, t, next, end_);
    k_.brz(t, skip);
    if (p_.direct) waitStores(set);  // a store reads the input buffers
    loadTile(next, set);
    k_.bind(skip);
    k_.release(next);
  }

  void waitStores(int set) {
    for (Reg token : storeTokens_[set]) k_.wait(token);
  }

  // The programs' registers are those the loop does not hold: the tile's geometry is
  // recomputed for the stores rather than kept. Every program computes before any store, so
  // an output written over an input (in place) is read by all of them first.
  void computeAndStore(int set, int64_t uniformResult) {
    std::vector<int64_t> results(programs_.size(), uniformResult);
    if (!p_.uniform) {
      Geometry g = geometry(i_);
      Reg n = arg(ElementwiseArgs::kInner);
      k_.alu(ScalarOp::Mul, n, n, g.count);
      Reg start = p_.counter ? randStart(g) : n;
      release(g);
      int randKeys = args_.randKeys;
      const size_t inputs = p_.inputs->size();
      for (size_t j = 0; j < programs_.size(); ++j) {
        TileBuffers b = buffers(set, static_cast<int>(j));
        // Earlier outputs stay in their buffers until the stores: later programs read them.
        for (size_t i = 0; i < j && inputs + i < programs_[j]->inputs.size(); ++i) {
          b.inputs[inputs + i] = results[i];
        }
        results[j] = emitTile(k_, *programs_[j], b, {n, start, args_.scalars, randKeys});
        randKeys += programs_[j]->numRand;
      }
      if (p_.counter) k_.release(start);
      k_.release(n);
    }
    Geometry g = geometry(i_);
    for (size_t j = 0; j < programs_.size(); ++j) {
      const int op = static_cast<int>(j);
      Reg addr = address(op, g);
      describe(op, programs_[j]->out, g.count);
      Reg sp = k_.li(results[j]);
      k_.dmaStore(storeTokens_[set][j], addr, sp, desc_);
      k_.release(sp);
      k_.release(addr);
    }
    release(g);
  }

  // random.offset + the row-major index of the tile's first element.
  Reg randStart(const Geometry& g) {
    Reg start = arg(ElementwiseArgs::kSplitSize), t = arg(ElementwiseArgs::kInner);
    k_.alu(ScalarOp::Mul, start, start, g.outer);
    k_.alu(ScalarOp::Add, start, start, g.chunkStart);
    k_.alu(ScalarOp::Mul, start, start, t);
    k_.release(t);
    t = arg(ElementwiseArgs::kRandOffset);
    k_.alu(ScalarOp::Add, start, start, t);
    k_.release(t);
    return start;
  }

  // Inputs broadcast over the whole op: one element, repeated over the tile capacity once.
  void loadUniformInputs() {
    for (int i = 0; i < static_cast<int>(p_.inputs->size()); ++i) {
      if (!(it_.uniformInputs >> i & 1u)) continue;
      const DType type = (*p_.inputs)[i];
      Reg count = arg(ElementwiseArgs::kCapacity), zero = k_.li(0);
      Reg size = k_.li(isa::dtypeSize(type));
      k_.dmaDim(desc_, type, 0, count, zero, size);
      Reg addr = arg(operandArg(operand_[i])), sp = k_.li(layout_.input[i]);
      Reg token = k_.dmaLoad(sp, addr, desc_);
      k_.wait(token);
      for (Reg r : {count, zero, size, addr, sp, token}) k_.release(r);
    }
  }

  const KernelPrograms& programs_;
  const Summary p_;
  const IterationClass& it_;
  const KernelLayout& layout_;
  const ElementwiseArgs args_;
  isa::KernelBuilder k_;
  int operand_[kMaxElementwiseInputs] = {};
  std::vector<int> loaded_;  // inputs loaded per tile
  isa::Desc desc_{0};
  Reg i_{0}, end_{0};
  Reg first_{0}, last_{0};  // a list kernel's tiles, over all segments
  int segment_ = 0;
  std::vector<std::vector<Reg>> loadTokens_;   // [set][loaded input]
  std::vector<std::vector<Reg>> storeTokens_;  // [set][output]
};

}  // namespace

TileBuffers KernelLayout::buffers(int set, const KernelPrograms& programs, unsigned uniformInputs,
                                  int output) const {
  TileBuffers b;
  const int64_t base = set * setBytes;
  const std::vector<DType>& inputs = programs.front()->inputs;
  for (size_t i = 0; i < inputs.size(); ++i) {
    b.inputs[i] = (uniformInputs >> i & 1u) ? input[i] : base + input[i];
  }
  b.out = programs.size() == 1 && programs.front()->uniform ? out[0] : base + out[output];
  b.temps = temps;
  b.tempBytes = tempBytes;
  b.rand = rand;
  return b;
}

KernelLayout planLayout(const KernelPrograms& programs, int temps, unsigned uniformInputs,
                        size_t scratchpadBytes) {
  const Summary p = summarize(programs);
  const DType compute = programs.front()->compute;
  KernelLayout layout;
  layout.depth = p.direct ? 3 : p.uniform ? 1 : 2;
  int64_t perSet = 0, fixed = 0;
  for (size_t i = 0; i < p.inputs->size(); ++i) {
    if (!(p.usedInputs >> i & 1u)) continue;
    (loaded(p, uniformInputs, static_cast<int>(i)) ? perSet : fixed) +=
        isa::dtypeSize((*p.inputs)[i]);
  }
  for (const Program* program : programs) {
    if (!program->direct) (p.uniform ? fixed : perSet) += isa::dtypeSize(program->out);
  }
  fixed += temps * isa::dtypeSize(compute) + (p.counter ? 4 * 4 : 0);  // RandBuffers
  const int64_t perElement = layout.depth * perSet + fixed;
  layout.capacity =
      static_cast<int64_t>(scratchpadBytes) / perElement / kCapacityQuantum * kCapacityQuantum;
  if (layout.capacity == 0) {
    std::string texts;
    for (const Program* program : programs)
      texts += (texts.empty() ? "'" : ", '") + program->text + "'";
    throw std::invalid_argument("elementwise: program " + texts + " needs " +
                                std::to_string(perElement * kCapacityQuantum) +
                                " bytes of scratchpad, more than the " +
                                std::to_string(scratchpadBytes) + " a compute unit has");
  }
  const int64_t c = layout.capacity;
  int64_t next = 0;  // offsets in a set, then absolute after the sets
  for (size_t i = 0; i < p.inputs->size(); ++i) {
    if (!loaded(p, uniformInputs, static_cast<int>(i))) continue;
    layout.input[i] = next;
    next += c * isa::dtypeSize((*p.inputs)[i]);
  }
  if (!p.uniform) {
    for (size_t j = 0; j < programs.size(); ++j) {
      layout.out[j] = next;
      if (!programs[j]->direct) next += c * isa::dtypeSize(programs[j]->out);
    }
  }
  layout.setBytes = next;
  next *= layout.depth;
  for (size_t i = 0; i < p.inputs->size(); ++i) {
    if (!(p.usedInputs >> i & 1u) || loaded(p, uniformInputs, static_cast<int>(i))) continue;
    layout.input[i] = next;
    next += c * isa::dtypeSize((*p.inputs)[i]);
  }
  if (p.uniform) {
    layout.out[0] = next;
    next += c * isa::dtypeSize(programs.front()->out);
  }
  layout.temps = next;
  layout.tempBytes = c * isa::dtypeSize(compute);
  next += temps * layout.tempBytes;
  layout.rand = {next, next + 4 * c, next + 8 * c, next + 12 * c};
  return layout;
}

ElementwiseArgs elementwiseArgs(const KernelPrograms& programs, const IterationClass& it,
                                size_t numScalars) {
  const Summary p = summarize(programs);
  ElementwiseArgs a;
  a.spElements = ElementwiseArgs::kSizes + it.rank;
  a.operands = a.spElements + it.split + 1;
  int operands = static_cast<int>(programs.size());
  for (size_t i = 0; i < p.inputs->size(); ++i) operands += p.usedInputs >> i & 1u;
  a.segmentBlock = a.operands + operands * (it.rank + 1);
  a.scalars = it.segments * a.segmentBlock;
  a.randKeys = a.scalars + static_cast<int>(numScalars);
  a.total = a.randKeys + p.numRand;
  if (it.segments > 1) {
    a.totalTiles = a.total;
    a.tileStarts = a.total + 1;
    a.total += 1 + it.segments;
  }
  return a;
}

isa::Function buildElementwiseKernel(const KernelPrograms& programs,
                                     const IterationClass& iteration, const KernelLayout& layout,
                                     size_t numScalars) {
  return KernelGen(programs, iteration, layout, numScalars).build();
}

}  // namespace mimic::ops
