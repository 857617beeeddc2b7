#include "sim/exec/workgroup.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "sim/isa/disassembler.h"

namespace mimic::exec::detail {

bool PipeHazards::finish(Pipe pipe) {
  const int self = index(pipe), other = 1 - self;
  const bool after = reads_.overlaps(pipeWrites_[other]) || writes_.overlaps(pipeWrites_[other]) ||
                     writes_.overlaps(pipeReads_[other]);
  if (after) pipeReads_[other] = pipeWrites_[other] = {0, 0};
  pipeReads_[self].add(reads_);
  pipeWrites_[self].add(writes_);
  reads_ = writes_ = {0, 0};
  return after;
}

void Workgroup::run() {
  const std::vector<Instr>& code = fn_.code;
  try {
    while (pc_ < code.size()) {
      const Instr& in = code[pc_];
      charge(1);
      if (in.op == Opcode::Exit) break;
      const Pipe pipe = isa::pipeOf(in.op);
      ++out_.counters.instructions[static_cast<int>(pipe)];
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
      if (pipe == Pipe::Scalar) {
        issue(in.op == Opcode::SLoad ? costs_.sloadCycles : costs_.scalarCycles);
      }
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
    out_.fault = {f.kind, where.str() + ": " + f.what, f.address};
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
      if (in.op == Opcode::Barrier) hazards_.clear();
      emit(in.op == Opcode::WaitAll ? TraceOp::Kind::WaitAll : TraceOp::Kind::Barrier, Pipe::Scalar,
           0, 0);
      break;
    case Opcode::SLoad:
      scalarLoad(in);
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

void Workgroup::scalarLoad(const Instr& in) {
  const int bytes = isa::dtypeSize(in.type);
  const uint8_t* p = operand(s(in.ra), 0, 1, bytes, bytes, false, "SLoad source");
  hazards_.discard();
  if (in.type != DType::I32 && in.type != DType::I64 && in.type != DType::U8 &&
      in.type != DType::I8 && in.type != DType::I16) {
    fault(FaultKind::IllegalInstruction,
          std::string("SLoad of ") + isa::dtypeName(in.type) + " (only i8, i16, i32, i64 and u8)");
  }
  ++out_.counters.dataDependentReads;
  if (timingOnly_) {
    s(in.rd) = 0;
    return;
  }
  if (in.type == DType::I32) {
    int32_t v;
    std::memcpy(&v, p, sizeof v);
    s(in.rd) = v;
  } else if (in.type == DType::I64) {
    std::memcpy(&s(in.rd), p, sizeof(int64_t));
  } else if (in.type == DType::I16) {
    int16_t v;
    std::memcpy(&v, p, sizeof v);
    s(in.rd) = v;
  } else if (in.type == DType::I8) {
    s(in.rd) = static_cast<int8_t>(*p);
  } else {
    s(in.rd) = *p;
  }
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
  const int64_t span = rows > 0 ? checkedMul(rows - 1, rowStride) : 0;
  Range range{
      checkedAdd(address, std::min<int64_t>(0, span)),
      checkedAdd(checkedAdd(address, std::max<int64_t>(0, span)), rows > 0 ? bytesPerRow : 0)};
  if (range.low < 0 || range.high > spBytes_) {
    fault(FaultKind::IllegalAddress, std::string(role) + " scratchpad range [" +
                                         std::to_string(range.low) + ", " +
                                         std::to_string(range.high) + ") is outside the " +
                                         std::to_string(spBytes_) + "-byte scratchpad");
  }
  out_.scratchpadBytes = std::max(out_.scratchpadBytes, static_cast<uint64_t>(range.high));
  hazards_.touch(range, write);
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

void Workgroup::watchdogFault() const {
  fault(FaultKind::WatchdogTimeout,
        "the watchdog stopped it after " + std::to_string(costs_.watchdogInstructions) +
            " instructions (vector rows and DMA elements count as instructions)");
}

int64_t Workgroup::checkedMul(int64_t a, int64_t b) const {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    fault(FaultKind::IllegalAddress, "a size or address beyond 64 bits (" + std::to_string(a) +
                                         " x " + std::to_string(b) + ")");
  }
  return product;
}

int64_t Workgroup::checkedAdd(int64_t a, int64_t b) const {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) {
    fault(FaultKind::IllegalAddress, "a size or address beyond 64 bits (" + std::to_string(a) +
                                         " + " + std::to_string(b) + ")");
  }
  return sum;
}

uint8_t* Workgroup::hbm(int64_t address, int64_t low, int64_t high, int elementBytes,
                        const char* role) {
  if (address % elementBytes != 0) {
    fault(FaultKind::MisalignedAddress, std::string(role) + " HBM address " +
                                            std::to_string(address) + " is not aligned to " +
                                            std::to_string(elementBytes) + " bytes");
  }
  // An empty range touches nothing: no allocation to check, no pointer to make.
  if (high <= low) return nullptr;
  const uint64_t first = static_cast<uint64_t>(checkedAdd(address, low));
  const uint64_t last = static_cast<uint64_t>(checkedAdd(address, high));
  // A range that wraps past zero (a negative address) is inside nothing; the test below would
  // otherwise take it for a part of the empty entries the allocation cache starts with.
  const bool wraps = last <= first;
  for (const sim::Allocation& known : allocations_) {
    if (!wraps && first >= known.base && last <= known.base + known.size) {
      return memory_.hostView(static_cast<uint64_t>(address));
    }
  }
  sim::Allocation a{};
  if (wraps || !memory_.find(first, &a) || last > a.base + a.size) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%s HBM range [0x%llx, 0x%llx) is not inside one live allocation: ", role,
                  static_cast<unsigned long long>(first), static_cast<unsigned long long>(last));
    // Name the first byte that is out: the start, or the end of the allocation it starts in.
    const uint64_t out = memory_.find(first, &a) ? a.base + a.size : first;
    fault(FaultKind::IllegalAddress, text + memory_.describe(out), out);
  }
  allocations_[nextAllocation_] = a;
  nextAllocation_ = (nextAllocation_ + 1) % std::size(allocations_);
  return memory_.hostView(static_cast<uint64_t>(address));
}

void Workgroup::flushIssue() {
  if (pendingIssue_ == 0) return;
  emit(TraceOp::Kind::Issue, Pipe::Scalar, 0, pendingIssue_);
  out_.counters.pipeCycles[static_cast<int>(Pipe::Scalar)] += pendingIssue_;
  pendingIssue_ = 0;
}

void Workgroup::compute(Pipe pipe, uint64_t cycles, uint64_t flops) {
  issue(costs_.scalarCycles);
  flushIssue();
  emit(TraceOp::Kind::Compute, pipe, 0, cycles);
  out_.trace.back().afterOtherPipe = hazards_.finish(pipe);
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
  out_.dmaRegions.push_back({static_cast<uint64_t>(hbmAddress), d});
  const uint64_t elements = d.elements();
  charge(elements);
  const uint64_t bytes = elements * d.elementBytes;
  if (bytes > 0) {
    Extent spExtent{}, hbmExtent{};
    if (!extentOf(d, d.spStride, &spExtent) || !extentOf(d, d.hbmStride, &hbmExtent)) {
      fault(FaultKind::IllegalAddress, "the DMA's strides and counts reach beyond 64 bits");
    }
    uint8_t* spBase =
        operand(checkedAdd(spAddress, spExtent.low), 0, 1,
                checkedAdd(spExtent.high, checkedMul(spExtent.low, -1)),
                static_cast<int>(d.elementBytes), load, load ? "DMA destination" : "DMA source") -
        spExtent.low;
    uint8_t* hbmBase =
        hbm(hbmAddress, hbmExtent.low, hbmExtent.high, static_cast<int>(d.elementBytes),
            load ? "DMA source" : "DMA destination");
    if (!timingOnly_) walkDma(d, hbmBase, spBase, load);
    if (recordAccesses_) {
      out_.accesses.push_back({static_cast<uint64_t>(hbmAddress + hbmExtent.low),
                               static_cast<uint64_t>(hbmAddress + hbmExtent.high), !load});
    }
    inFlight_.push_back({token, {spAddress + spExtent.low, spAddress + spExtent.high}, load});
    hazards_.discard();
    (load ? out_.counters.bytesRead : out_.counters.bytesWritten) += bytes;
  }
  s(in.rd) = token;
  issue(costs_.dmaIssueCycles);
  flushIssue();
  emit(load ? TraceOp::Kind::DmaLoad : TraceOp::Kind::DmaStore, Pipe::Dma, token, bytes);
  out_.counters.pipeCycles[static_cast<int>(Pipe::Dma)] += costs_.dmaIssueCycles;
}

}  // namespace mimic::exec::detail
