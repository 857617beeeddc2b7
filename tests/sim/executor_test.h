// Shared set-up for the interpreter tests: one workgroup run directly through exec::Executor on
// a DeviceMemory, a scratchpad buffer and a hand-made cost model (no SystemC, no driver).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "sim/device_memory.h"
#include "sim/exec/executor.h"
#include "sim/isa/assembler.h"

namespace mimic::isa {
inline void PrintTo(DType t, std::ostream* os) {
  *os << dtypeName(t);
}
}  // namespace mimic::isa

namespace mimic::exec {

// Readable gtest output for the result types.
inline const char* faultKindName(FaultKind k) {
  switch (k) {
    case FaultKind::None:
      return "None";
    case FaultKind::IllegalAddress:
      return "IllegalAddress";
    case FaultKind::MisalignedAddress:
      return "MisalignedAddress";
    case FaultKind::ScratchpadHazard:
      return "ScratchpadHazard";
    case FaultKind::IllegalInstruction:
      return "IllegalInstruction";
    case FaultKind::WatchdogTimeout:
      return "WatchdogTimeout";
  }
  return "?";
}

inline void PrintTo(FaultKind k, std::ostream* os) {
  *os << faultKindName(k);
}

inline void PrintTo(const TraceOp& op, std::ostream* os) {
  static const char* const kKinds[] = {"Issue", "Compute", "DmaLoad", "DmaStore",
                                       "Wait",  "WaitAll", "Barrier"};
  static const char* const kPipes[] = {"Scalar", "Vector", "Matrix", "Dma"};
  *os << "{" << kKinds[static_cast<int>(op.kind)] << " " << kPipes[static_cast<int>(op.pipe)]
      << " token " << op.token << " amount " << op.amount
      << (op.afterOtherPipe ? " after the other pipe" : "") << "}";
}

namespace test {

using isa::DType;
using isa::Pipe;

constexpr uint64_t kScratchpadBytes = 64 * 1024;
constexpr uint64_t kMemoryBytes = 16 << 20;
// Where dumpRegs() writes the registers it dumps.
constexpr int64_t kDumpOffset = 60 * 1024;

inline CostModel testCosts() {
  CostModel c;
  c.lanes = 16;
  c.f64Lanes = 8;
  c.clockGHz = 1.5;
  c.scalarCycles = 1;
  c.sloadCycles = 4;
  c.vectorCycles = 1;
  c.vectorComplexCycles = 8;
  c.matrixF32MacsPerCycle = 256;
  c.matrixF16MacsPerCycle = 1024;
  c.dmaIssueCycles = 4;
  c.dmaBandwidthGBps = 200;
  c.watchdogInstructions = 1000000;
  return c;
}

inline int pipe(Pipe p) {
  return static_cast<int>(p);
}

// One kernel from assembly text: `.kernel <name> <8 * argCount>`, the body, `.end`.
inline isa::Function kernel(const std::string& body, size_t argCount = 0,
                            const std::string& name = "probe") {
  const std::string text =
      ".kernel " + name + " " + std::to_string(8 * argCount) + "\n" + body + "\n.end\n";
  return isa::assemble(text).functions.at(0);
}

// Assembly that stores each register of `regs` as i64 at kDumpOffset + 8 * (firstSlot + i), with
// vfill (clobbers s30 and s31; needs the default one-row vector shape).
inline std::string dumpRegs(const std::vector<int>& regs, int firstSlot = 0) {
  std::string text = "li s31, 1\n";
  for (size_t i = 0; i < regs.size(); ++i) {
    text += "li s30, " + std::to_string(kDumpOffset + 8 * (firstSlot + int64_t(i))) + "\n";
    text += "vfill.i64 s30, s" + std::to_string(regs[i]) + ", s31\n";
  }
  return text;
}

inline ::testing::AssertionResult noFault(const WorkgroupResult& r) {
  if (r.fault.kind == FaultKind::None) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << faultKindName(r.fault.kind) << " fault: " << r.fault.message;
}

// The first byte offset where two buffers differ, or -1.
inline int64_t firstDifference(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return static_cast<int64_t>(i);
  }
  return -1;
}

class ExecutorTest : public ::testing::Test {
 protected:
  uint64_t alloc(uint64_t bytes) {
    const uint64_t address = memory_.allocate(bytes);
    EXPECT_NE(address, 0u);
    return address;
  }

  template <typename T>
  void writeHbm(uint64_t address, const std::vector<T>& values) {
    std::memcpy(memory_.hostView(address), values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> readHbm(uint64_t address, size_t count) const {
    std::vector<T> values(count);
    std::memcpy(values.data(), memory_.hostView(address), count * sizeof(T));
    return values;
  }
  template <typename T>
  uint64_t upload(const std::vector<T>& values) {
    const uint64_t address = alloc(values.size() * sizeof(T));
    writeHbm(address, values);
    return address;
  }

  template <typename T>
  void writeSp(int64_t offset, const std::vector<T>& values) {
    std::memcpy(scratchpad_.data() + offset, values.data(), values.size() * sizeof(T));
  }
  template <typename T>
  std::vector<T> readSp(int64_t offset, size_t count) const {
    std::vector<T> values(count);
    std::memcpy(values.data(), scratchpad_.data() + offset, count * sizeof(T));
    return values;
  }
  std::vector<int64_t> dumped(size_t count) const { return readSp<int64_t>(kDumpOffset, count); }

  // Fills the whole scratchpad with random bytes, so that stray writes show.
  void scrambleScratchpad(unsigned seed) {
    std::mt19937 rng(seed);
    for (uint8_t& b : scratchpad_) b = static_cast<uint8_t>(rng());
  }

  const WorkgroupResult& run(const isa::Function& fn, const std::vector<int64_t>& args = {},
                             Dim3 grid = {}, Dim3 id = {0, 0, 0}) {
    EXPECT_EQ(fn.argBytes, 8 * args.size());
    Executor executor(costs_, scratchpadBytes_, memory_);
    executor.run(fn, reinterpret_cast<const uint8_t*>(args.data()), grid, id, scratchpad_.data(),
                 result_);
    return result_;
  }
  // Assembles `body` as a kernel taking `args` and runs it.
  const WorkgroupResult& runAsm(const std::string& body, const std::vector<int64_t>& args = {},
                                Dim3 grid = {}, Dim3 id = {0, 0, 0}) {
    return run(kernel(body, args.size()), args, grid, id);
  }

  void applyAtomics(const std::vector<AtomicAdd>& atomics) {
    Executor(costs_, scratchpadBytes_, memory_).applyAtomics(atomics);
  }

  static int64_t addr(uint64_t deviceAddress) { return static_cast<int64_t>(deviceAddress); }

  sim::DeviceMemory memory_{kMemoryBytes, sim::DeviceMemoryConfig{256}};
  CostModel costs_ = testCosts();
  uint64_t scratchpadBytes_ = kScratchpadBytes;  // the size the executor is told (<= the buffer)
  std::vector<uint8_t> scratchpad_ = std::vector<uint8_t>(kScratchpadBytes, 0);
  WorkgroupResult result_;
};

}  // namespace test
}  // namespace mimic::exec
