// The faults the interpreter raises, run one workgroup at a time through exec::Executor: each
// kind, and a message that names the kernel, the workgroup, the instruction (index and
// disassembly) and the offending address or range.
#include <cstdio>
#include <string>

#include "executor_test.h"
#include "sim/isa/disassembler.h"

namespace mimic::exec::test {
namespace {

using isa::Opcode;

std::string text(int64_t v) {
  return std::to_string(v);
}

std::string hex(uint64_t v) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "0x%llx", static_cast<unsigned long long>(v));
  return buffer;
}

std::string hbmRange(uint64_t low, uint64_t high) {
  return "HBM range [" + hex(low) + ", " + hex(high) + ") is not inside one live allocation";
}

std::string spRange(int64_t low, int64_t high) {
  return "scratchpad range [" + text(low) + ", " + text(high) + ")";
}

class FaultTest : public ExecutorTest {
 protected:
  const WorkgroupResult& runFaulty(const std::string& body, const std::vector<int64_t>& args = {}) {
    fn_ = kernel(body, args.size(), "faulty_kernel");
    return run(fn_, args, Dim3{4, 5, 6}, Dim3{3, 2, 1});
  }
  const WorkgroupResult& runFaulty(const isa::Function& fn, const std::vector<int64_t>& args = {}) {
    fn_ = fn;
    return run(fn_, args, Dim3{4, 5, 6}, Dim3{3, 2, 1});
  }

  // The index of the nth instruction with opcode `op`.
  size_t indexOf(Opcode op, int nth = 0) const {
    for (size_t i = 0; i < fn_.code.size(); ++i) {
      if (fn_.code[i].op == op && nth-- == 0) return i;
    }
    ADD_FAILURE() << "no such instruction";
    return 0;
  }

  // Checks the fault's kind, and that its message names the kernel, the workgroup, instruction
  // `index` with its disassembly, and contains each of `fragments`.
  void expectFault(FaultKind kind, size_t index, const std::vector<std::string>& fragments) {
    EXPECT_EQ(result_.fault.kind, kind);
    const std::string& m = result_.fault.message;
    ASSERT_LT(index, fn_.code.size());
    const std::string where = "kernel 'faulty_kernel', workgroup (3,2,1), instruction " +
                              text(int64_t(index)) + " `" + isa::disassemble(fn_.code[index]) + "`";
    EXPECT_NE(m.find(where), std::string::npos) << "expected '" << where << "' in: " << m;
    for (const std::string& f : fragments) {
      EXPECT_NE(m.find(f), std::string::npos) << "expected '" << f << "' in: " << m;
    }
  }

  // One f32 DMA of `count` elements with unit strides (desc d0; s1 = HBM, s2 = scratchpad).
  static std::string dma(const std::string& op, int64_t count) {
    std::string body =
        "li s10, " + text(count) + "\nli s11, 4\ndma.desc.f32 d0, 0, s10, s11, s11\n";
    return body + (op == "load" ? "dma.load s5, s2, s1, d0\n" : "dma.store s5, s1, s2, d0\n");
  }

  // The token of the first DMA in the trace.
  uint32_t firstToken() const {
    for (const TraceOp& op : result_.trace) {
      if (op.kind == TraceOp::Kind::DmaLoad || op.kind == TraceOp::Kind::DmaStore) return op.token;
    }
    ADD_FAILURE() << "no DMA in the trace";
    return 0;
  }

  isa::Function fn_;
};

// ---- HBM ranges ----

TEST_F(FaultTest, HbmOutsideAnyAllocationIsIllegal) {
  alloc(4096);
  const uint64_t nowhere = memory_.base() + kMemoryBytes - 4096;
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 16), {addr(nowhere)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad),
              {"DMA source " + hbmRange(nowhere, nowhere + 64)});
  // The exact text of the instruction, not only what disassemble() says.
  EXPECT_NE(result_.fault.message.find("`dma.load s5, s2, s1, d0`"), std::string::npos);
}

TEST_F(FaultTest, HbmRangeAcrossTheEndOfAnAllocationIsIllegal) {
  const uint64_t a = alloc(100);  // reserved up to 256 bytes, but only 100 are the allocation's
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 26), {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad),
              {"DMA source " + hbmRange(a, a + 104)});
}

TEST_F(FaultTest, HbmRangeEndingAtTheEndOfAnAllocationIsLegal) {
  const uint64_t a = alloc(100);
  EXPECT_TRUE(noFault(runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 25), {addr(a)})));
}

TEST_F(FaultTest, StoreAcrossTheEndOfAnAllocationIsIllegal) {
  const uint64_t a = alloc(256);
  alloc(256);  // the next allocation does not make the range legal
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("store", 8), {addr(a) + 240});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaStore),
              {"DMA destination " + hbmRange(a + 240, a + 272)});
}

TEST_F(FaultTest, NegativeHbmStrideBelowTheAllocationIsIllegal) {
  const uint64_t a = alloc(64);
  runFaulty(R"(
  arg s1, 0
  li s2, 0
  li s10, 3
  li s11, -4
  li s12, 4
  dma.desc.f32 d2, 0, s10, s11, s12
  dma.load s5, s2, s1, d2
)",
            {addr(a) + 4});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad),
              {"DMA source " + hbmRange(a - 4, a + 8)});
}

// An address just below zero makes a range that wraps to end at address 0; it is inside
// nothing, not even the empty entries the workgroup's allocation cache starts with.
TEST_F(FaultTest, StoreToANegativeAddressIsIllegal) {
  alloc(64);
  runFaulty("li s1, -4\nli s2, 0\n" + dma("store", 1));
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaStore),
              {"DMA destination " + hbmRange(uint64_t(-4), 0)});
}

TEST_F(FaultTest, FreedAllocationIsIllegal) {
  const uint64_t a = alloc(1024);
  ASSERT_EQ(memory_.release(a), sim::DeviceMemory::FreeResult::Freed);
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 4), {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad), {hbmRange(a, a + 16)});
}

TEST_F(FaultTest, AtomicDestinationIsRangeChecked) {
  const uint64_t a = alloc(16);
  runFaulty("arg s1, 0\nli s2, 0\nli s3, 5\natomic.add.i32 s1, s2, s3\n", {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::AtomicAdd),
              {"atomic destination " + hbmRange(a, a + 20)});
  EXPECT_TRUE(result_.atomics.empty());
}

TEST_F(FaultTest, FaultStopsTheWorkgroup) {
  const uint64_t a = alloc(16);
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 8) + "li s3, 1\nvfill.f32 s2, #1.0, s3\n",
            {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad), {});
  EXPECT_EQ(scratchpad_, std::vector<uint8_t>(kScratchpadBytes, 0));  // nothing moved or filled
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Vector)], 0u);
  EXPECT_EQ(result_.counters.bytesRead, 0u);
  EXPECT_TRUE(result_.trace.empty() || result_.trace.back().kind != TraceOp::Kind::Barrier);
}

// ---- Scratchpad ranges ----

TEST_F(FaultTest, DmaPastTheEndOfTheScratchpadIsIllegal) {
  const uint64_t a = alloc(1024);
  runFaulty("arg s1, 0\nli s2, 65504\n" + dma("load", 16), {addr(a)});
  expectFault(
      FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad),
      {"DMA destination " + spRange(65504, 65568) + " is outside the 65536-byte scratchpad"});
}

TEST_F(FaultTest, DmaScratchpadStridesAreRangeChecked) {
  const uint64_t a = alloc(1024);
  runFaulty(R"(
  arg s1, 0
  li s2, 1000
  li s10, 4
  li s11, 4
  li s12, 22000
  dma.desc.f32 d1, 0, s10, s11, s12
  dma.store s5, s1, s2, d1
)",
            {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaStore),
              {"DMA source " + spRange(1000, 1000 + 3 * 22000 + 4)});
}

TEST_F(FaultTest, NegativeScratchpadAddressIsIllegal) {
  runFaulty("li s1, -16\nli s2, 0\nli s3, 4\nvbin.add.f32 s1, s2, s2, s3\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VBinary),
              {"destination " + spRange(-16, 0) + " is outside the 65536-byte scratchpad"});
}

TEST_F(FaultTest, RowsTimesDestinationStrideOutsideTheScratchpadIsIllegal) {
  runFaulty(R"(
  li s10, 4
  li s11, 22000
  li s12, 0
  vshape s10, s11, s12, s12
  li s1, 0
  li s3, 4
  vfill.f32 s1, #1.0, s3
)");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VFill),
              {"destination " + spRange(0, 66016)});
  EXPECT_EQ(scratchpad_, std::vector<uint8_t>(kScratchpadBytes, 0));  // no row was written
}

TEST_F(FaultTest, RowsTimesFirstSourceStrideOutsideTheScratchpadIsIllegal) {
  runFaulty(R"(
  li s10, 3
  li s11, 16
  li s12, 33000
  li s13, 0
  vshape s10, s11, s12, s13
  li s1, 0
  li s2, 1024
  li s3, 4
  vun.neg.f32 s1, s2, s3
)");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VUnary),
              {"source " + spRange(1024, 1024 + 2 * 33000 + 16)});
}

TEST_F(FaultTest, RowsTimesOtherSourceStrideOutsideTheScratchpadIsIllegal) {
  runFaulty(R"(
  li s10, 2
  li s11, 16
  li s12, 16
  li s13, 65536
  vshape s10, s11, s12, s13
  li s1, 0
  li s2, 1024
  li s3, 4
  vbin.add.f32 s1, s2, s2, s3
)");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VBinary),
              {"source " + spRange(1024, 1024 + 65536 + 16)});
}

TEST_F(FaultTest, NegativeRowStrideBelowZeroIsIllegal) {
  runFaulty(R"(
  li s10, 3
  li s11, -256
  li s12, 0
  vshape s10, s11, s12, s12
  li s1, 400
  li s3, 4
  vfill.f32 s1, #1.0, s3
)");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VFill),
              {"destination " + spRange(-112, 416)});
}

TEST_F(FaultTest, ArgMaxDestinationNeedsEightBytes) {
  scratchpadBytes_ = kScratchpadBytes - 4;  // room for an f32 at 65528, not for an i64
  runFaulty("li s1, 65528\nli s2, 0\nli s3, 4\nvred.argmax.f32 s1, s2, s3\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VReduce),
              {"destination " + spRange(65528, 65536) + " is outside the 65532-byte scratchpad"});
}

TEST_F(FaultTest, MmaOperandsAreRangeChecked) {
  runFaulty(R"(
  li s10, 16
  li s11, 33
  li s12, 8
  mshape s10, s11, s12
  li s1, 63488
  li s2, 0
  li s3, 4096
  mma.f32 s1, s2, s3
)");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::Mma),
              {"matrix C " + spRange(63488, 63488 + 16 * 33 * 4)});
}

// ---- Alignment ----

TEST_F(FaultTest, MisalignedHbmAddressFaults) {
  const uint64_t a = alloc(1024);
  runFaulty("arg s1, 0\nli s2, 0\n" + dma("load", 4), {addr(a) + 2});
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::DmaLoad),
              {"DMA source HBM address " + std::to_string(a + 2) + " is not aligned to 4 bytes"});
}

TEST_F(FaultTest, MisalignedDmaScratchpadAddressFaults) {
  const uint64_t a = alloc(1024);
  runFaulty(R"(
  arg s1, 0
  li s2, 4
  li s10, 2
  li s11, 8
  dma.desc.i64 d0, 0, s10, s11, s11
  dma.load s5, s2, s1, d0
)",
            {addr(a)});
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::DmaLoad),
              {"DMA destination scratchpad address 4", "not aligned to 8 bytes"});
}

TEST_F(FaultTest, MisalignedVectorDestinationFaults) {
  runFaulty("li s1, 2\nli s2, 0\nli s3, 4\nvbin.add.f32 s1, s2, s2, s3\n");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::VBinary),
              {"destination scratchpad address 2 (row stride 0) is not aligned to 4 bytes"});
}

TEST_F(FaultTest, MisalignedVectorSecondSourceFaults) {
  runFaulty("li s1, 0\nli s2, 64\nli s4, 132\nli s3, 4\nvbin.add.i64 s1, s2, s4, s3\n");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::VBinary),
              {"source scratchpad address 132", "not aligned to 8 bytes"});
}

TEST_F(FaultTest, MisalignedDestinationRowStrideFaults) {
  runFaulty(R"(
  li s10, 2
  li s11, 6
  li s12, 0
  vshape s10, s11, s12, s12
  li s1, 0
  li s3, 1
  vfill.f32 s1, #1.0, s3
)");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::VFill),
              {"destination scratchpad address 0 (row stride 6) is not aligned to 4 bytes"});
}

TEST_F(FaultTest, MisalignedOtherRowStrideFaults) {
  runFaulty(R"(
  li s10, 2
  li s11, 64
  li s12, 64
  li s13, 4
  vshape s10, s11, s12, s13
  li s1, 0
  li s2, 1024
  li s3, 1
  vcmp.lt.i64 s1, s2, s2, s3
)");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::VCmp),
              {"source scratchpad address 1024 (row stride 4) is not aligned to 8 bytes"});
}

TEST_F(FaultTest, ArgMaxDestinationMustBeEightByteAligned) {
  runFaulty("li s1, 4\nli s2, 0\nli s3, 4\nvred.argmax.f32 s1, s2, s3\n");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::VReduce),
              {"destination scratchpad address 4", "not aligned to 8 bytes"});
}

TEST_F(FaultTest, MmaAccumulatorMustBeF32Aligned) {
  runFaulty("li s10, 2\nmshape s10, s10, s10\nli s1, 2\nli s2, 64\nmma.bf16 s1, s2, s2\n");
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::Mma),
              {"matrix C scratchpad address 2", "not aligned to 4 bytes"});
}

TEST_F(FaultTest, MisalignedAtomicDestinationFaults) {
  const uint64_t a = alloc(64);
  runFaulty("arg s1, 0\nli s2, 0\nli s3, 2\natomic.add.i64 s1, s2, s3\n", {addr(a) + 4});
  expectFault(FaultKind::MisalignedAddress, indexOf(Opcode::AtomicAdd),
              {"atomic destination HBM address " + std::to_string(a + 4), "aligned to 8 bytes"});
}

// ---- Scratchpad hazards ----

class HazardTest : public FaultTest {
 protected:
  void SetUp() override { hbm_ = alloc(4096); }
  // s1 = HBM, s2 = 0; d0 moves 16 f32 (64 bytes).
  std::string prologue() const {
    return "arg s1, 0\nli s2, 0\nli s10, 16\nli s11, 4\n"
           "dma.desc.f32 d0, 0, s10, s11, s11\n";
  }
  const WorkgroupResult& runHazard(const std::string& body) {
    return runFaulty(prologue() + body, {addr(hbm_)});
  }
  std::string inFlight(const char* direction, int64_t low, int64_t high) const {
    return "DMA token " + text(firstToken()) + " " + direction + " [" + text(low) + ", " +
           text(high) + ") is in flight";
  }
  uint64_t hbm_ = 0;
};

TEST_F(HazardTest, WritingIntoAnInFlightLoadIsAHazard) {
  runHazard("dma.load s5, s2, s1, d0\nli s3, 32\nli s4, 4\nvbin.add.f32 s3, s3, s3, s4\n");
  // The destination [32, 48) is written, which is checked first.
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::VBinary),
              {"destination " + spRange(32, 48) + " is written while " + inFlight("into", 0, 64)});
}

TEST_F(HazardTest, ReadingAnInFlightLoadAsASourceIsAHazard) {
  runHazard(
      "dma.load s5, s2, s1, d0\nli s3, 60\nli s4, 1\nli s6, 1024\n"
      "vun.neg.f32 s6, s3, s4\n");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::VUnary),
              {"source " + spRange(60, 64) + " is read while " + inFlight("into", 0, 64)});
}

TEST_F(HazardTest, WritingAnInFlightStoreIsAHazard) {
  runHazard("dma.store s5, s1, s2, d0\nli s3, 0\nli s4, 1\nvfill.f32 s3, #1.0, s4\n");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::VFill),
              {"destination " + spRange(0, 4) + " is written while " + inFlight("from", 0, 64)});
}

TEST_F(HazardTest, ReadingAnInFlightStoreIsFine) {
  EXPECT_TRUE(noFault(
      runHazard("dma.store s5, s1, s2, d0\nli s3, 1024\nli s4, 16\nvbin.add.f32 s3, s2, s2, s4\n"
                "salu.add s1, s1, #64\ndma.store s6, s1, s2, d0\n")));
}

TEST_F(HazardTest, AdjacentRangesAreNoHazard) {
  EXPECT_TRUE(noFault(runHazard(R"(
  li s3, 64
  dma.load s5, s3, s1, d0
  li s4, 16
  vbin.add.f32 s2, s2, s2, s4
  li s6, 128
  vfill.f32 s6, #1.0, s4
)")));
}

TEST_F(HazardTest, WaitClearsTheHazard) {
  std::vector<float> values(16);
  for (int i = 0; i < 16; ++i) values[i] = float(i) - 4.5f;
  writeHbm(hbm_, values);
  EXPECT_TRUE(noFault(
      runHazard("dma.load s5, s2, s1, d0\nwait s5\nli s4, 16\nvbin.add.f32 s2, s2, s2, s4\n")));
  for (float& v : values) v *= 2;
  EXPECT_EQ(readSp<float>(0, 16), values);
}

TEST_F(HazardTest, WaitForAnotherDmaKeepsTheHazard) {
  runHazard(R"(
  dma.load s5, s2, s1, d0
  li s3, 1024
  dma.load s6, s3, s1, d0
  wait s6
  li s4, 1
  vfill.f32 s2, #1.0, s4
)");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::VFill), {inFlight("into", 0, 64)});
}

TEST_F(HazardTest, WaitAllClearsEveryHazard) {
  EXPECT_TRUE(noFault(runHazard(R"(
  dma.load s5, s2, s1, d0
  li s3, 1024
  dma.store s6, s1, s3, d0
  waitall
  li s4, 16
  vfill.f32 s2, #1.0, s4
  vfill.f32 s3, #1.0, s4
)")));
}

TEST_F(HazardTest, BarrierClearsEveryHazard) {
  EXPECT_TRUE(noFault(runHazard(R"(
  dma.load s5, s2, s1, d0
  barrier
  li s4, 16
  vfill.f32 s2, #1.0, s4
)")));
}

TEST_F(HazardTest, DmaLoadIntoAnInFlightStoreRangeIsAHazard) {
  runHazard("dma.store s5, s1, s2, d0\nli s3, 32\ndma.load s6, s3, s1, d0\n");
  expectFault(
      FaultKind::ScratchpadHazard, indexOf(Opcode::DmaLoad),
      {"DMA destination " + spRange(32, 96) + " is written while " + inFlight("from", 0, 64)});
}

TEST_F(HazardTest, DmaStoreFromAnInFlightLoadRangeIsAHazard) {
  runHazard("dma.load s5, s2, s1, d0\nli s3, 48\ndma.store s6, s1, s3, d0\n");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::DmaStore),
              {"DMA source " + spRange(48, 112) + " is read while " + inFlight("into", 0, 64)});
}

TEST_F(HazardTest, MmaSourcesAreHazardChecked) {
  runHazard(R"(
  dma.load s5, s2, s1, d0
  li s10, 2
  mshape s10, s10, s10
  li s3, 1024
  mma.f32 s3, s3, s2
)");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::Mma),
              {"matrix B " + spRange(0, 16) + " is read"});
}

TEST_F(HazardTest, AtomicSourceIsHazardChecked) {
  runHazard("dma.load s5, s2, s1, d0\nli s4, 4\natomic.add.f32 s1, s2, s4\n");
  expectFault(FaultKind::ScratchpadHazard, indexOf(Opcode::AtomicAdd),
              {"atomic source " + spRange(0, 16) + " is read"});
}

// ---- Watchdog ----

TEST_F(FaultTest, WatchdogStopsAnEndlessLoop) {
  costs_.watchdogInstructions = 10;
  runFaulty("li s1, 0\nloop:\nsalu.add s1, s1, #1\nbr loop\n");
  // li, then (salu, br) four times and one more salu: the eleventh is the br at index 2.
  expectFault(FaultKind::WatchdogTimeout, 2, {"watchdog stopped it after 10 instructions"});
  EXPECT_NE(result_.fault.message.find("`br 1`"), std::string::npos) << result_.fault.message;
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 10u);
}

TEST_F(FaultTest, WatchdogAllowsExactlyItsLimit) {
  costs_.watchdogInstructions = 10;
  EXPECT_TRUE(noFault(runFaulty("nop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\nnop\nnop")));
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 10u);
}

// Rows and DMA elements count too: repeating the same bytes (strides 0) cannot run away.
TEST_F(FaultTest, WatchdogCountsTheRowsOfAVectorInstruction) {
  costs_.watchdogInstructions = 1000;
  runFaulty(
      "li s1, 1099511627776\nli s2, 0\nvshape s1, s2, s2, s2\nli s3, 4\n"
      "vfill.f32 s2, #0, s3\n");
  expectFault(FaultKind::WatchdogTimeout, indexOf(Opcode::VFill),
              {"vector rows and DMA elements count as instructions"});
}

TEST_F(FaultTest, WatchdogCountsTheElementsOfADma) {
  costs_.watchdogInstructions = 1000;
  const uint64_t a = alloc(4096);
  runFaulty(
      "arg s1, 0\nli s2, 0\nli s10, 1099511627776\ndma.desc.f32 d0, 0, s10, s2, s2\n"
      "dma.load s5, s2, s1, d0\n",
      {addr(a)});
  expectFault(FaultKind::WatchdogTimeout, indexOf(Opcode::DmaLoad),
              {"vector rows and DMA elements count as instructions"});
}

// ---- Sizes beyond 64 bits: illegal addresses, never overflow ----

TEST_F(FaultTest, RowsBeyond64BitsAreIllegal) {
  runFaulty(
      "li s1, 3\nli s2, 4611686018427387904\nvshape s1, s2, s2, s2\nli s3, 4\n"
      "vfill.f32 s3, #0, s1\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VFill), {"beyond 64 bits"});
}

TEST_F(FaultTest, DmaExtentBeyond64BitsIsIllegal) {
  const uint64_t a = alloc(4096);
  runFaulty(
      "arg s1, 0\nli s2, 0\nli s10, 3\nli s11, 4611686018427387904\nli s12, 4\n"
      "dma.desc.f32 d0, 0, s10, s11, s12\ndma.load s5, s2, s1, d0\n",
      {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaLoad), {"beyond 64 bits"});
}

// ---- Types and counts the instruction cannot take ----

TEST_F(FaultTest, UnaryOpOnAnUnsupportedTypeIsIllegal) {
  isa::Function fn = kernel("li s1, 0\nli s3, 4\nvun.exp.f32 s1, s1, s3\n", 0, "faulty_kernel");
  fn.code[2].type = DType::I32;  // the validator would refuse this
  runFaulty(fn);
  expectFault(FaultKind::IllegalInstruction, 2, {"not defined for i32"});
}

TEST_F(FaultTest, MmaOnIntegersIsIllegal) {
  isa::Function fn = kernel(
      "li s10, 2\nmshape s10, s10, s10\nli s1, 0\nli s2, 64\n"
      "mma.f32 s1, s2, s2\n",
      0, "faulty_kernel");
  fn.code[4].type = DType::I32;
  runFaulty(fn);
  expectFault(FaultKind::IllegalInstruction, 4, {"mma does not support i32"});
}

TEST_F(FaultTest, AtomicAddOnU8IsIllegal) {
  const uint64_t a = alloc(64);
  isa::Function fn =
      kernel("arg s1, 0\nli s2, 0\nli s3, 4\natomic.add.i32 s1, s2, s3\n", 1, "faulty_kernel");
  fn.code[3].type = DType::U8;
  runFaulty(fn, {addr(a)});
  expectFault(FaultKind::IllegalInstruction, 3, {"atomic add does not support u8"});
}

TEST_F(FaultTest, NegativeRowCountIsIllegal) {
  runFaulty("li s10, -1\nvshape s10, s10, s10, s10\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VShape), {"negative row count"});
}

TEST_F(FaultTest, NegativeMatrixDimensionIsIllegal) {
  runFaulty("li s10, 2\nli s11, -2\nmshape s10, s10, s11\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::MShape), {"negative matrix dimension"});
}

TEST_F(FaultTest, NegativeDmaCountIsIllegal) {
  runFaulty("li s10, -3\nli s11, 4\ndma.desc.f32 d0, 1, s10, s11, s11\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::DmaDesc), {"negative DMA count"});
}

TEST_F(FaultTest, NegativeVectorCountIsIllegal) {
  runFaulty("li s1, 0\nli s3, -5\nvbin.add.f32 s1, s1, s1, s3\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VBinary), {"negative element count"});
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Vector)], 0u);
  EXPECT_EQ(result_.counters.flops, 0u);
}

TEST_F(FaultTest, NegativeFmaAndSelectCountsAreIllegal) {
  runFaulty("li s1, 0\nli s3, -1\nvfma.f32 s1, s1, s1, s1, s3\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VFma), {"negative element count"});
  runFaulty("li s1, 0\nli s3, -1\nvsel.f32 s1, s1, s1, s1, s3\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VSelect), {"negative element count"});
}

// For vfma and vsel, rc is an operand address, not the count.
TEST_F(FaultTest, FmaThirdOperandAddressIsNotACount) {
  runFaulty("li s1, 0\nli s3, -8\nli s4, 2\nvfma.f32 s1, s1, s1, s3, s4\n");
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::VFma), {"source " + spRange(-8, 0)});
}

TEST_F(FaultTest, NegativeAtomicCountIsIllegal) {
  const uint64_t a = alloc(64);
  runFaulty("arg s1, 0\nli s2, 0\nli s3, -2\natomic.add.f32 s1, s2, s3\n", {addr(a)});
  expectFault(FaultKind::IllegalAddress, indexOf(Opcode::AtomicAdd), {"negative element count"});
  EXPECT_TRUE(result_.atomics.empty());
}

}  // namespace
}  // namespace mimic::exec::test
