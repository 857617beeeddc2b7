// The interpreter of one workgroup: its registers, descriptors, vector shapes, in-flight DMAs
// and the trace it leaves for the timing model. Internal to sim/exec: executor.h is the
// interface; workgroup.cpp runs scalar, control and DMA instructions, workgroup_vector.cpp the
// vector, matrix and atomic ones.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "sim/device_memory.h"
#include "sim/exec/dma_walk.h"
#include "sim/exec/executor.h"

namespace mimic::exec::detail {

using isa::DType;
using isa::Instr;
using isa::Opcode;
using isa::Pipe;

// Thrown inside a workgroup to stop it; run() turns it into the result's Fault.
struct FaultRaised {
  FaultKind kind;
  std::string what;
  uint64_t address = 0;  // the HBM byte an illegal access hit
};

struct Range {
  int64_t low, high;  // scratchpad byte offsets, [low, high)
  bool overlaps(const Range& o) const { return low < o.high && o.low < high; }
  void add(const Range& o) {
    if (o.low >= o.high) return;
    if (low >= high) {
      *this = o;
    } else {
      low = std::min(low, o.low);
      high = std::max(high, o.high);
    }
  }
};

// The scratchpad the vector and matrix pipes have read and written since they were last
// ordered with each other, as bounding ranges: an instruction that touches what the other pipe
// wrote, or writes what it reads, must wait for it (the timing model's only dependence between
// the two pipes).
class PipeHazards {
 public:
  void touch(const Range& range, bool write) { (write ? writes_ : reads_).add(range); }
  // Ends the instruction on `pipe`: whether it must wait for the other pipe's earlier work.
  bool finish(Pipe pipe);
  // Ends an instruction that is not on either pipe (DMAs wait for all earlier compute anyway).
  void discard() { reads_ = writes_ = {0, 0}; }
  void clear() { *this = PipeHazards{}; }

 private:
  static int index(Pipe pipe) { return pipe == Pipe::Matrix ? 1 : 0; }
  Range reads_{0, 0}, writes_{0, 0};  // of the instruction being executed
  Range pipeReads_[2] = {{0, 0}, {0, 0}}, pipeWrites_[2] = {{0, 0}, {0, 0}};
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
            WorkgroupResult& out, bool recordAccesses, bool timingOnly)
      : costs_(costs),
        spBytes_(static_cast<int64_t>(scratchpadBytes)),
        memory_(memory),
        fn_(fn),
        args_(args),
        grid_(grid),
        id_(id),
        sp_(scratchpad),
        out_(out),
        recordAccesses_(recordAccesses),
        timingOnly_(timingOnly) {}

  void run();

 private:
  int64_t& s(uint8_t r) { return regs_[r]; }
  void step(const Instr& in);
  void scalarAlu(const Instr& in);
  void scalarLoad(const Instr& in);
  bool scalarCompare(int64_t a, int64_t b, isa::Cond c) const;
  void vector(const Instr& in);
  void matrix(const Instr& in);
  void dma(const Instr& in);
  void atomicAdd(const Instr& in);
  void waitFor(uint32_t token);

  // Checks an operand range of the scratchpad; `write` for destinations.
  uint8_t* operand(int64_t address, int64_t rowStride, int64_t rows, int64_t bytesPerRow,
                   int elementBytes, bool write, const char* role);
  // Checks the HBM range [address + low, address + high) lies in one live allocation and
  // returns the host view of `address` (nullptr for an empty range, which touches nothing).
  uint8_t* hbm(int64_t address, int64_t low, int64_t high, int elementBytes, const char* role);
  // Sizes and addresses computed from registers: a value int64 cannot hold lies outside the
  // scratchpad and every allocation, so it faults as an illegal address instead of overflowing.
  int64_t checkedMul(int64_t a, int64_t b) const;
  int64_t checkedAdd(int64_t a, int64_t b) const;
  // Counts work against the watchdog: one per instruction, and also one per row of a vector
  // instruction and per element of a DMA, so that no single instruction runs away (stride-0
  // rows and elements repeat the same bytes without bound).
  // Inline: it runs once per instruction.
  void charge(uint64_t work) {
    // executed_ never passes the limit: the work that would take it past faults instead.
    if (work > costs_.watchdogInstructions - executed_) watchdogFault();
    executed_ += work;
  }
  [[noreturn]] void watchdogFault() const;
  [[noreturn]] void fault(FaultKind kind, const std::string& what, uint64_t address = 0) const {
    throw FaultRaised{kind, what, address};
  }
  uint64_t scalarBits(const Instr& in) { return in.flags & isa::kImmOperand ? in.imm : s(in.rb); }

  void issue(uint64_t cycles) { pendingIssue_ += cycles; }
  void flushIssue();
  void emit(TraceOp::Kind kind, Pipe pipe, uint32_t token, uint64_t amount) {
    out_.trace.push_back(TraceOp{kind, pipe, token, amount});
  }
  void compute(Pipe pipe, uint64_t cycles, uint64_t flops);

  const CostModel& costs_;
  const int64_t spBytes_;
  sim::DeviceMemory& memory_;
  const isa::Function& fn_;
  const uint8_t* args_;
  Dim3 grid_, id_;
  uint8_t* sp_;
  WorkgroupResult& out_;
  bool recordAccesses_;
  bool timingOnly_;  // see Executor

  int64_t regs_[isa::kNumScalarRegs] = {};
  DmaDescriptor descriptors_[isa::kNumDescriptors];
  int64_t rows_ = 1, dstRowStride_ = 0, srcRowStride_ = 0, otherRowStride_ = 0;
  int64_t mmaM_ = 0, mmaN_ = 0, mmaK_ = 0;
  uint64_t executed_ = 0;  // work counted by the watchdog
  // The allocations this workgroup's last DMAs and atomics touched. Freeing memory a running
  // kernel uses is the program's race, so a workgroup (tens of microseconds) may go on trusting
  // them instead of asking DeviceMemory, which takes a lock, every time.
  sim::Allocation allocations_[4] = {};
  size_t nextAllocation_ = 0;
  std::vector<InFlightDma> inFlight_;
  uint32_t nextToken_ = 1;
  uint64_t pendingIssue_ = 0;
  PipeHazards hazards_;
  size_t pc_ = 0;
};

}  // namespace mimic::exec::detail
