#include "sim/exec/executor.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "sim/device_memory.h"
#include "sim/exec/dma_walk.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/disassembler.h"

namespace mimic::exec {
namespace {

using isa::DType;
using isa::Instr;
using isa::Opcode;
using isa::Pipe;

// Thrown inside a workgroup to stop it; run() turns it into the result's Fault.
struct FaultRaised {
  FaultKind kind;
  std::string what;
};

struct Range {
  int64_t low, high;  // scratchpad byte offsets, [low, high)
  bool overlaps(const Range& o) const { return low < o.high && o.low < high; }
};

struct InFlightDma {
  uint32_t token;
  Range range;
  bool load;  // a load writes the range; a store reads it
};

class Workgroup {
 public:
  Workgroup(const CostModel& costs, uint64_t scratchpadBytes, sim::DeviceMemory& memory,
            const isa::Function& fn, const uint8_t* args, Dim3 grid, Dim3 id, uint8_t* scratchpad,
            WorkgroupResult& out)
      : costs_(costs),
        spBytes_(static_cast<int64_t>(scratchpadBytes)),
        memory_(memory),
        fn_(fn),
        args_(args),
        grid_(grid),
        id_(id),
        sp_(scratchpad),
        out_(out) {}

  void run();

 private:
  int64_t& s(uint8_t r) { return regs_[r]; }
  void step(const Instr& in);
  void scalarAlu(const Instr& in);
  bool scalarCompare(int64_t a, int64_t b, isa::Cond c) const;
  void vector(const Instr& in);
  void matrix(const Instr& in);
  void dma(const Instr& in);
  void atomicAdd(const Instr& in);
  void waitFor(uint32_t token);

  // Checks an operand range of the scratchpad; `write` for destinations.
  uint8_t* operand(int64_t address, int64_t rowStride, int64_t rows, int64_t bytesPerRow,
                   int elementBytes, bool write, const char* role);
  uint8_t* hbm(int64_t address, int64_t low, int64_t high, int elementBytes, const char* role);
  [[noreturn]] void fault(FaultKind kind, const std::string& what) const {
    throw FaultRaised{kind, what};
  }
  uint64_t scalarBits(const Instr& in) { return in.flags & isa::kImmOperand ? in.imm : s(in.rb); }

  void issue(uint64_t cycles) { pendingIssue_ += cycles; }
  void flushIssue();
  void emit(TraceOp::Kind kind, Pipe pipe, uint32_t token, uint64_t amount);
  void compute(Pipe pipe, uint64_t cycles, uint64_t flops);

  const CostModel& costs_;
  const int64_t spBytes_;
  sim::DeviceMemory& memory_;
  const isa::Function& fn_;
  const uint8_t* args_;
  Dim3 grid_, id_;
  uint8_t* sp_;
  WorkgroupResult& out_;

  int64_t regs_[isa::kNumScalarRegs] = {};
  DmaDescriptor descriptors_[isa::kNumDescriptors];
  int64_t rows_ = 1, dstRowStride_ = 0, srcRowStride_ = 0, otherRowStride_ = 0;
  int64_t mmaM_ = 0, mmaN_ = 0, mmaK_ = 0;
  std::vector<InFlightDma> inFlight_;
  uint32_t nextToken_ = 1;
  uint64_t pendingIssue_ = 0;
  size_t pc_ = 0;
};

void Workgroup::run() {
  uint64_t executed = 0;
  const std::vector<Instr>& code = fn_.code;
  try {
    while (pc_ < code.size()) {
      const Instr& in = code[pc_];
      if (++executed > costs_.watchdogInstructions) {
        fault(FaultKind::WatchdogTimeout, "the watchdog stopped it after " +
                                              std::to_string(costs_.watchdogInstructions) +
                                              " instructions");
      }
      if (in.op == Opcode::Exit) break;
      ++out_.counters.instructions[static_cast<int>(isa::pipeOf(in.op))];
      size_t next = pc_ + 1;
      switch (in.op) {
        case Opcode::Br:
          next = static_cast<size_t>(in.imm);
          break;
        case Opcode::Brz:
          if (s(in.ra) == 0) next = static_cast<size_t>(in.imm);
          break;
        case Opcode::Brnz:
          if (s(in.ra) != 0) next = static_cast<size_t>(in.imm);
          break;
        default:
          step(in);
      }
      if (isa::pipeOf(in.op) == Pipe::Scalar) issue(costs_.scalarCycles);
      pc_ = next;
    }
    // The workgroup ends when all its pipes have drained.
    flushIssue();
    emit(TraceOp::Kind::Barrier, Pipe::Scalar, 0, 0);
  } catch (const FaultRaised& f) {
    std::ostringstream where;
    where << "kernel '" << fn_.name << "', workgroup (" << id_.x << "," << id_.y << "," << id_.z
          << "), instruction " << pc_;
    if (pc_ < code.size()) where << " `" << isa::disassemble(code[pc_]) << "`";
    out_.fault = {f.kind, where.str() + ": " + f.what};
  }
}

void Workgroup::step(const Instr& in) {
  switch (in.op) {
    case Opcode::Nop:
      break;
    case Opcode::Li:
      s(in.rd) = in.imm;
      break;
    case Opcode::Mov:
      s(in.rd) = s(in.ra);
      break;
    case Opcode::SAlu:
      scalarAlu(in);
      break;
    case Opcode::SCmp:
      s(in.rd) = scalarCompare(s(in.ra), in.flags & isa::kImmOperand ? in.imm : s(in.rb),
                               isa::Cond(in.sub));
      break;
    case Opcode::Arg: {
      int64_t value = 0;
      std::memcpy(&value, args_ + 8 * in.imm, 8);
      s(in.rd) = value;
      break;
    }
    case Opcode::WgId:
      s(in.rd) = in.imm == 0 ? id_.x : in.imm == 1 ? id_.y : id_.z;
      break;
    case Opcode::GridDim:
      s(in.rd) = in.imm == 0 ? grid_.x : in.imm == 1 ? grid_.y : grid_.z;
      break;
    case Opcode::VShape:
      rows_ = s(in.ra);
      dstRowStride_ = s(in.rb);
      srcRowStride_ = s(in.rc);
      otherRowStride_ = s(in.rd);
      if (rows_ < 0) fault(FaultKind::IllegalAddress, "negative row count");
      break;
    case Opcode::MShape:
      mmaM_ = s(in.ra);
      mmaN_ = s(in.rb);
      mmaK_ = s(in.rc);
      if (mmaM_ < 0 || mmaN_ < 0 || mmaK_ < 0) {
        fault(FaultKind::IllegalAddress, "negative matrix dimension");
      }
      break;
    case Opcode::DmaDesc:
    case Opcode::DmaLoad:
    case Opcode::DmaStore:
      dma(in);
      break;
    case Opcode::Wait:
      flushIssue();
      waitFor(static_cast<uint32_t>(s(in.ra)));
      emit(TraceOp::Kind::Wait, Pipe::Dma, static_cast<uint32_t>(s(in.ra)), 0);
      break;
    case Opcode::WaitAll:
    case Opcode::Barrier:
      flushIssue();
      inFlight_.clear();
      emit(in.op == Opcode::WaitAll ? TraceOp::Kind::WaitAll : TraceOp::Kind::Barrier, Pipe::Scalar,
           0, 0);
      break;
    case Opcode::Mma:
      matrix(in);
      break;
    case Opcode::AtomicAdd:
      atomicAdd(in);
      break;
    default:
      vector(in);
  }
}

void Workgroup::scalarAlu(const Instr& in) {
  const int64_t a = s(in.ra);
  const int64_t b = in.flags & isa::kImmOperand ? in.imm : s(in.rb);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  int64_t r = 0;
  switch (isa::ScalarOp(in.sub)) {
    case isa::ScalarOp::Add:
      r = static_cast<int64_t>(ua + ub);
      break;
    case isa::ScalarOp::Sub:
      r = static_cast<int64_t>(ua - ub);
      break;
    case isa::ScalarOp::Mul:
      r = static_cast<int64_t>(ua * ub);
      break;
    case isa::ScalarOp::Div:
      r = b == 0 || (a == INT64_MIN && b == -1) ? 0 : a / b;
      break;
    case isa::ScalarOp::Rem:
      r = b == 0 || (a == INT64_MIN && b == -1) ? 0 : a % b;
      break;
    case isa::ScalarOp::And:
      r = a & b;
      break;
    case isa::ScalarOp::Or:
      r = a | b;
      break;
    case isa::ScalarOp::Xor:
      r = a ^ b;
      break;
    case isa::ScalarOp::Shl:
      r = static_cast<int64_t>(ua << (ub & 63));
      break;
    case isa::ScalarOp::Shr:
      r = a >> (ub & 63);
      break;
    case isa::ScalarOp::Min:
      r = std::min(a, b);
      break;
    case isa::ScalarOp::Max:
      r = std::max(a, b);
      break;
  }
  s(in.rd) = r;
}

bool Workgroup::scalarCompare(int64_t a, int64_t b, isa::Cond c) const {
  switch (c) {
    case isa::Cond::Eq:
      return a == b;
    case isa::Cond::Ne:
      return a != b;
    case isa::Cond::Lt:
      return a < b;
    case isa::Cond::Le:
      return a <= b;
    case isa::Cond::Gt:
      return a > b;
    case isa::Cond::Ge:
      return a >= b;
  }
  return false;
}

uint8_t* Workgroup::operand(int64_t address, int64_t rowStride, int64_t rows, int64_t bytesPerRow,
                            int elementBytes, bool write, const char* role) {
  if (address % elementBytes != 0 || rowStride % elementBytes != 0) {
    fault(FaultKind::MisalignedAddress, std::string(role) + " scratchpad address " +
                                            std::to_string(address) + " (row stride " +
                                            std::to_string(rowStride) + ") is not aligned to " +
                                            std::to_string(elementBytes) + " bytes");
  }
  const int64_t span = rows > 0 ? (rows - 1) * rowStride : 0;
  Range range{address + std::min<int64_t>(0, span),
              address + std::max<int64_t>(0, span) + (rows > 0 ? bytesPerRow : 0)};
  if (range.low < 0 || range.high > spBytes_) {
    fault(FaultKind::IllegalAddress, std::string(role) + " scratchpad range [" +
                                         std::to_string(range.low) + ", " +
                                         std::to_string(range.high) + ") is outside the " +
                                         std::to_string(spBytes_) + "-byte scratchpad");
  }
  for (const InFlightDma& dma : inFlight_) {
    if ((dma.load || write) && dma.range.overlaps(range)) {
      fault(FaultKind::ScratchpadHazard,
            std::string(role) + " scratchpad range [" + std::to_string(range.low) + ", " +
                std::to_string(range.high) + ") is " + (write ? "written" : "read") +
                " while DMA token " + std::to_string(dma.token) + " " +
                (dma.load ? "into" : "from") + " [" + std::to_string(dma.range.low) + ", " +
                std::to_string(dma.range.high) + ") is in flight (wait for it first)");
    }
  }
  return sp_ + address;
}

uint8_t* Workgroup::hbm(int64_t address, int64_t low, int64_t high, int elementBytes,
                        const char* role) {
  if (address % elementBytes != 0) {
    fault(FaultKind::MisalignedAddress, std::string(role) + " HBM address " +
                                            std::to_string(address) + " is not aligned to " +
                                            std::to_string(elementBytes) + " bytes");
  }
  const uint64_t first = static_cast<uint64_t>(address + low);
  const uint64_t last = static_cast<uint64_t>(address + high);
  sim::Allocation a{};
  if (high > low && (!memory_.find(first, &a) || last > a.base + a.size)) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s HBM range [0x%llx, 0x%llx) is not inside one live allocation", role,
                  static_cast<unsigned long long>(first), static_cast<unsigned long long>(last));
    fault(FaultKind::IllegalAddress, text);
  }
  return memory_.hostView(static_cast<uint64_t>(address));
}

void Workgroup::flushIssue() {
  if (pendingIssue_ == 0) return;
  emit(TraceOp::Kind::Issue, Pipe::Scalar, 0, pendingIssue_);
  out_.counters.pipeCycles[static_cast<int>(Pipe::Scalar)] += pendingIssue_;
  pendingIssue_ = 0;
}

void Workgroup::emit(TraceOp::Kind kind, Pipe pipe, uint32_t token, uint64_t amount) {
  out_.trace.push_back(TraceOp{kind, pipe, token, amount});
}

void Workgroup::compute(Pipe pipe, uint64_t cycles, uint64_t flops) {
  issue(costs_.scalarCycles);
  flushIssue();
  emit(TraceOp::Kind::Compute, pipe, 0, cycles);
  out_.counters.pipeCycles[static_cast<int>(pipe)] += cycles;
  out_.counters.flops += flops;
}

void Workgroup::waitFor(uint32_t token) {
  inFlight_.erase(std::remove_if(inFlight_.begin(), inFlight_.end(),
                                 [&](const InFlightDma& d) { return d.token == token; }),
                  inFlight_.end());
}

void Workgroup::dma(const Instr& in) {
  if (in.op == Opcode::DmaDesc) {
    DmaDescriptor& d = descriptors_[in.rd];
    if (in.imm == 0) d = DmaDescriptor{};
    d.elementBytes = static_cast<uint32_t>(isa::dtypeSize(in.type));
    d.count[in.imm] = s(in.ra);
    d.hbmStride[in.imm] = s(in.rb);
    d.spStride[in.imm] = s(in.rc);
    if (s(in.ra) < 0) fault(FaultKind::IllegalAddress, "negative DMA count");
    return;
  }
  const bool load = in.op == Opcode::DmaLoad;
  const DmaDescriptor& d = descriptors_[in.rc];
  const int64_t spAddress = load ? s(in.ra) : s(in.rb);
  const int64_t hbmAddress = load ? s(in.rb) : s(in.ra);
  const uint32_t token = nextToken_++;
  const uint64_t bytes = d.elements() * d.elementBytes;
  if (bytes > 0) {
    Extent spExtent = extentOf(d, d.spStride);
    Extent hbmExtent = extentOf(d, d.hbmStride);
    uint8_t* spBase =
        operand(spAddress + spExtent.low, 0, 1, spExtent.high - spExtent.low,
                static_cast<int>(d.elementBytes), load, load ? "DMA destination" : "DMA source") -
        spExtent.low;
    uint8_t* hbmBase =
        hbm(hbmAddress, hbmExtent.low, hbmExtent.high, static_cast<int>(d.elementBytes),
            load ? "DMA source" : "DMA destination");
    walkDma(d, hbmBase, spBase, load);
    inFlight_.push_back({token, {spAddress + spExtent.low, spAddress + spExtent.high}, load});
    (load ? out_.counters.bytesRead : out_.counters.bytesWritten) += bytes;
  }
  s(in.rd) = token;
  issue(costs_.dmaIssueCycles);
  flushIssue();
  emit(load ? TraceOp::Kind::DmaLoad : TraceOp::Kind::DmaStore, Pipe::Dma, token, bytes);
  out_.counters.pipeCycles[static_cast<int>(Pipe::Dma)] += costs_.dmaIssueCycles;
}

void Workgroup::vector(const Instr& in) {
  const DType t = in.type;
  const int e = isa::dtypeSize(t);
  const int64_t rows = rows_;
  auto unsupported = [&](const char* what) {
    fault(FaultKind::IllegalInstruction,
          std::string(what) + " is not defined for " + isa::dtypeName(t));
  };
  auto dst = [&](int64_t n, int elementBytes) {
    return operand(s(in.rd), dstRowStride_, rows, n * elementBytes, elementBytes, true,
                   "destination");
  };
  auto src = [&](uint8_t reg, int64_t n, int elementBytes, bool first) {
    return operand(s(reg), first ? srcRowStride_ : otherRowStride_, rows, n * elementBytes,
                   elementBytes, false, "source");
  };
  auto eachRow = [&](auto&& body) {
    for (int64_t r = 0; r < rows; ++r) body(r);
  };
  // Elements per row: re for the four-operand forms, whose rc is an operand.
  const int64_t n = s(in.op == Opcode::VFma || in.op == Opcode::VSelect ? in.re : in.rc);
  if (n < 0) fault(FaultKind::IllegalAddress, "negative element count");
  uint64_t flopsPerElement = 1;
  switch (in.op) {
    case Opcode::VUnary: {
      if (!supportsUnary(isa::UnaryOp(in.sub), t)) unsupported("this unary op");
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow([&](int64_t r) {
        unary(isa::UnaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, n);
      });
      break;
    }
    case Opcode::VBinary:
    case Opcode::VBinaryS: {
      if (!supportsBinary(isa::BinaryOp(in.sub), t)) unsupported("this binary op");
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      if (in.op == Opcode::VBinaryS) {
        const uint64_t bits = scalarBits(in);
        eachRow([&](int64_t r) {
          binaryScalar(isa::BinaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, bits,
                       n);
        });
      } else {
        const uint8_t* b = src(in.rb, n, e, false);
        eachRow([&](int64_t r) {
          binary(isa::BinaryOp(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_,
                 b + r * otherRowStride_, n);
        });
      }
      break;
    }
    case Opcode::VFma: {
      if (!supportsFma(t)) unsupported("fma");
      flopsPerElement = 2;
      uint8_t* d = dst(n, e);
      const uint8_t* a = src(in.ra, n, e, true);
      const uint8_t* b = src(in.rb, n, e, false);
      const uint8_t* c = src(in.rc, n, e, false);
      eachRow([&](int64_t r) {
        fma(t, d + r * dstRowStride_, a + r * srcRowStride_, b + r * otherRowStride_,
            c + r * otherRowStride_, n);
      });
      break;
    }
    case Opcode::VSelect: {
      uint8_t* d = dst(n, e);
      const uint8_t* mask = src(in.ra, n, 1, true);
      const uint8_t* a = src(in.rb, n, e, false);
      const uint8_t* b = src(in.rc, n, e, false);
      eachRow([&](int64_t r) {
        select(t, d + r * dstRowStride_, mask + r * srcRowStride_, a + r * otherRowStride_,
               b + r * otherRowStride_, n);
      });
      break;
    }
    case Opcode::VCmp:
    case Opcode::VCmpS: {
      uint8_t* d = dst(n, 1);
      const uint8_t* a = src(in.ra, n, e, true);
      if (in.op == Opcode::VCmpS) {
        const uint64_t bits = scalarBits(in);
        eachRow([&](int64_t r) {
          compareScalar(isa::Cond(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_, bits,
                        n);
        });
      } else {
        const uint8_t* b = src(in.rb, n, e, false);
        eachRow([&](int64_t r) {
          compare(isa::Cond(in.sub), t, d + r * dstRowStride_, a + r * srcRowStride_,
                  b + r * otherRowStride_, n);
        });
      }
      break;
    }
    case Opcode::VCast: {
      uint8_t* d = dst(n, isa::dtypeSize(in.type2));
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow(
          [&](int64_t r) { cast(t, in.type2, d + r * dstRowStride_, a + r * srcRowStride_, n); });
      break;
    }
    case Opcode::VReduce: {
      const isa::ReduceOp op = isa::ReduceOp(in.sub);
      const bool index = op == isa::ReduceOp::ArgMax || op == isa::ReduceOp::ArgMin;
      uint8_t* d = dst(1, index ? 8 : e);
      const uint8_t* a = src(in.ra, n, e, true);
      eachRow([&](int64_t r) { reduce(op, t, d + r * dstRowStride_, a + r * srcRowStride_, n); });
      break;
    }
    case Opcode::VFill:
    case Opcode::VIota: {
      uint8_t* d = dst(n, e);
      const uint64_t bits = scalarBits(in);
      eachRow([&](int64_t r) {
        if (in.op == Opcode::VFill) {
          fill(t, d + r * dstRowStride_, bits, n);
        } else {
          iota(t, d + r * dstRowStride_, n);
        }
      });
      flopsPerElement = 0;
      break;
    }
    default:
      fault(FaultKind::IllegalInstruction, "not a vector instruction");
  }
  const uint64_t elements = static_cast<uint64_t>(rows * n);
  compute(Pipe::Vector, costs_.cycles(in, elements, 0), elements * flopsPerElement);
}

void Workgroup::matrix(const Instr& in) {
  const int e = isa::dtypeSize(in.type);
  const int64_t m = mmaM_, n = mmaN_, k = mmaK_;
  const uint8_t* a = operand(s(in.ra), 0, 1, m * k * e, e, false, "matrix A");
  const uint8_t* b = operand(s(in.rb), 0, 1, k * n * e, e, false, "matrix B");
  float* c = reinterpret_cast<float*>(operand(s(in.rd), 0, 1, m * n * 4, 4, true, "matrix C"));
  if (in.type != DType::F32 && in.type != DType::F16 && in.type != DType::BF16) {
    fault(FaultKind::IllegalInstruction,
          std::string("mma does not support ") + isa::dtypeName(in.type));
  }
  mma(in.type, c, a, b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k));
  const uint64_t macs = static_cast<uint64_t>(m * n * k);
  compute(Pipe::Matrix, costs_.cycles(in, 0, macs), 2 * macs);
}

void Workgroup::atomicAdd(const Instr& in) {
  if (in.type != DType::F32 && in.type != DType::I32 && in.type != DType::I64) {
    fault(FaultKind::IllegalInstruction,
          std::string("atomic add does not support ") + isa::dtypeName(in.type));
  }
  const int e = isa::dtypeSize(in.type);
  const int64_t n = s(in.rc);
  if (n < 0) fault(FaultKind::IllegalAddress, "negative element count");
  const uint8_t* values = operand(s(in.rb), 0, 1, n * e, e, false, "atomic source");
  hbm(s(in.ra), 0, n * e, e, "atomic destination");
  out_.atomics.push_back(
      {static_cast<uint64_t>(s(in.ra)), in.type, std::vector<uint8_t>(values, values + n * e)});
  out_.counters.bytesRead += n * e;
  out_.counters.bytesWritten += n * e;
  compute(Pipe::Vector, costs_.cycles(in, n, 0), n);
}

}  // namespace

void Executor::run(const isa::Function& fn, const uint8_t* args, Dim3 grid, Dim3 id,
                   uint8_t* scratchpad, WorkgroupResult& out) const {
  out = WorkgroupResult{};
  out.counters.workgroups = 1;
  Workgroup(costs_, scratchpadBytes_, memory_, fn, args, grid, id, scratchpad, out).run();
}

void Executor::applyAtomics(const std::vector<AtomicAdd>& atomics) const {
  for (const AtomicAdd& a : atomics) {
    uint8_t* target = memory_.hostView(a.address);
    binary(isa::BinaryOp::Add, a.type, target, target, a.values.data(),
           static_cast<int64_t>(a.values.size()) / isa::dtypeSize(a.type));
  }
}

void KernelCounters::add(const KernelCounters& o) {
  workgroups += o.workgroups;
  for (int p = 0; p < isa::kNumPipes; ++p) {
    instructions[p] += o.instructions[p];
    pipeCycles[p] += o.pipeCycles[p];
  }
  flops += o.flops;
  bytesRead += o.bytesRead;
  bytesWritten += o.bytesWritten;
}

}  // namespace mimic::exec
