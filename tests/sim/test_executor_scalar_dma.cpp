// The interpreter's scalar and DMA instructions, run one workgroup at a time through
// exec::Executor: every scalar ALU op and compare against a reference written here, branches,
// arguments and grid ids, and DMA descriptors of one to four dimensions with every kind of
// stride, checked byte for byte, with their counters and trace.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <random>
#include <tuple>

#include "executor_test.h"

namespace mimic::exec::test {
namespace {

using isa::Cond;
using isa::ScalarOp;

std::string text(int64_t v) {
  return std::to_string(v);
}

// ---- Scalar ALU ----

const char* const kScalarOpNames[] = {"add", "sub", "mul", "div", "rem", "and",
                                      "or",  "xor", "shl", "shr", "min", "max"};

// The scalar ALU as this test reads isa.h: 64-bit two's complement that wraps, division by zero
// and INT64_MIN / -1 give 0 for both div and rem, shift amounts are taken modulo 64 and shr is
// arithmetic.
int64_t referenceAlu(ScalarOp op, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  const bool trap = b == 0 || (a == INT64_MIN && b == -1);
  switch (op) {
    case ScalarOp::Add:
      return static_cast<int64_t>(ua + ub);
    case ScalarOp::Sub:
      return static_cast<int64_t>(ua - ub);
    case ScalarOp::Mul:
      return static_cast<int64_t>(ua * ub);
    case ScalarOp::Div:
      return trap ? 0 : a / b;
    case ScalarOp::Rem:
      return trap ? 0 : a % b;
    case ScalarOp::And:
      return static_cast<int64_t>(ua & ub);
    case ScalarOp::Or:
      return static_cast<int64_t>(ua | ub);
    case ScalarOp::Xor:
      return static_cast<int64_t>(ua ^ ub);
    case ScalarOp::Shl:
      return static_cast<int64_t>(ua << (ub % 64));
    case ScalarOp::Shr: {
      const int shift = static_cast<int>(ub % 64);
      // Arithmetic shift spelled without relying on >> of a negative value.
      return a >= 0 ? a >> shift : ~(~a >> shift);
    }
    case ScalarOp::Min:
      return a < b ? a : b;
    case ScalarOp::Max:
      return a > b ? a : b;
  }
  return 0;
}

const std::pair<int64_t, int64_t> kAluOperands[] = {
    {7, 3},
    {-7, 3},
    {7, -3},
    {-7, -3},
    {0, 5},
    {5, 0},
    {-5, 0},
    {INT64_MAX, 1},
    {INT64_MIN, 1},
    {INT64_MIN, -1},
    {INT64_MAX, INT64_MIN},
    {0x123456789abcdef0, 0x0ff00ff00ff00ff0},
    {-16, 2},
    {3, 63},
    {3, 64},
    {3, 65},
    {-1, -1},
    {int64_t(1) << 62, 4},
};

// Runs `salu.<op>` on (a, b) in both operand forms; returns {register form, immediate form}.
class ScalarAluTest : public ExecutorTest, public ::testing::WithParamInterface<ScalarOp> {
 protected:
  const char* name() const { return kScalarOpNames[static_cast<int>(GetParam())]; }
};

TEST_P(ScalarAluTest, MatchesTheReferenceInBothOperandForms) {
  std::string body;
  int slot = 0;
  for (const auto& [a, b] : kAluOperands) {
    body += "li s1, " + text(a) + "\nli s2, " + text(b) + "\n";
    body += std::string("salu.") + name() + " s3, s1, s2\n";
    body += std::string("salu.") + name() + " s4, s1, #" + text(b) + "\n";
    body += dumpRegs({3, 4}, slot);
    slot += 2;
  }
  ASSERT_TRUE(noFault(runAsm(body)));
  const std::vector<int64_t> out = dumped(slot);
  for (size_t i = 0; i < std::size(kAluOperands); ++i) {
    const auto [a, b] = kAluOperands[i];
    const int64_t expected = referenceAlu(GetParam(), a, b);
    EXPECT_EQ(out[2 * i], expected) << name() << " " << a << ", " << b << " (register)";
    EXPECT_EQ(out[2 * i + 1], expected) << name() << " " << a << ", " << b << " (immediate)";
  }
}

INSTANTIATE_TEST_SUITE_P(AllOps, ScalarAluTest,
                         ::testing::Values(ScalarOp::Add, ScalarOp::Sub, ScalarOp::Mul,
                                           ScalarOp::Div, ScalarOp::Rem, ScalarOp::And,
                                           ScalarOp::Or, ScalarOp::Xor, ScalarOp::Shl,
                                           ScalarOp::Shr, ScalarOp::Min, ScalarOp::Max),
                         [](const auto& info) {
                           return std::string(kScalarOpNames[static_cast<int>(info.param)]);
                         });

// The edge cases again with literal expectations, independent of the reference above.
class ScalarEdgeTest : public ExecutorTest {
 protected:
  // Evaluates each line (which writes s3 from s1 and s2) after setting s1 = a, s2 = b.
  std::vector<int64_t> eval(int64_t a, int64_t b, const std::vector<std::string>& ops) {
    std::string body = "li s1, " + text(a) + "\nli s2, " + text(b) + "\n";
    for (size_t i = 0; i < ops.size(); ++i) body += ops[i] + "\n" + dumpRegs({3}, int(i));
    EXPECT_TRUE(noFault(runAsm(body)));
    return dumped(ops.size());
  }
};

TEST_F(ScalarEdgeTest, AddSubMulWrap) {
  EXPECT_EQ(eval(INT64_MAX, 1, {"salu.add s3, s1, s2"})[0], INT64_MIN);
  EXPECT_EQ(eval(INT64_MIN, 1, {"salu.sub s3, s1, s2"})[0], INT64_MAX);
  EXPECT_EQ(eval(int64_t(1) << 62, 4, {"salu.mul s3, s1, s2"})[0], 0);
  EXPECT_EQ(eval(INT64_MAX, 2, {"salu.mul s3, s1, #2"})[0], -2);
}

TEST_F(ScalarEdgeTest, DivTruncatesAndRemTakesTheDividendsSign) {
  EXPECT_EQ(eval(-7, 2, {"salu.div s3, s1, s2", "salu.rem s3, s1, s2"}),
            (std::vector<int64_t>{-3, -1}));
  EXPECT_EQ(eval(7, -2, {"salu.div s3, s1, s2", "salu.rem s3, s1, #-2"}),
            (std::vector<int64_t>{-3, 1}));
}

TEST_F(ScalarEdgeTest, DivisionByZeroGivesZero) {
  EXPECT_EQ(eval(5, 0,
                 {"salu.div s3, s1, s2", "salu.rem s3, s1, s2", "salu.div s3, s1, #0",
                  "salu.rem s3, s1, #0"}),
            (std::vector<int64_t>{0, 0, 0, 0}));
  EXPECT_EQ(eval(INT64_MIN, 0, {"salu.div s3, s1, s2", "salu.rem s3, s1, s2"}),
            (std::vector<int64_t>{0, 0}));
}

// isa.h does not say; the executor gives 0 for both (vector i64 division gives INT64_MIN).
TEST_F(ScalarEdgeTest, Int64MinDividedByMinusOneGivesZero) {
  EXPECT_EQ(eval(INT64_MIN, -1,
                 {"salu.div s3, s1, s2", "salu.rem s3, s1, s2", "salu.div s3, s1, #-1",
                  "salu.rem s3, s1, #-1"}),
            (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST_F(ScalarEdgeTest, ShiftAmountsAreMaskedToSixBits) {
  EXPECT_EQ(eval(3, 64, {"salu.shl s3, s1, s2", "salu.shr s3, s1, s2"}),
            (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(eval(3, 65, {"salu.shl s3, s1, s2", "salu.shl s3, s1, #129"}),
            (std::vector<int64_t>{6, 6}));
  EXPECT_EQ(eval(1, -1, {"salu.shl s3, s1, s2"})[0], INT64_MIN);  // -1 & 63 = 63
  EXPECT_EQ(eval(-256, 68, {"salu.shr s3, s1, s2"})[0], -16);
}

TEST_F(ScalarEdgeTest, ShrIsArithmetic) {
  EXPECT_EQ(eval(-16, 2, {"salu.shr s3, s1, s2", "salu.shr s3, s1, #63"}),
            (std::vector<int64_t>{-4, -1}));
  EXPECT_EQ(eval(INT64_MIN, 63, {"salu.shr s3, s1, s2"})[0], -1);
  EXPECT_EQ(eval(INT64_MAX, 62, {"salu.shr s3, s1, s2"})[0], 1);
}

TEST_F(ScalarEdgeTest, BitwiseOpsAndSignedMinMax) {
  EXPECT_EQ(eval(0b1100, 0b1010,
                 {"salu.and s3, s1, s2", "salu.or s3, s1, s2", "salu.xor s3, s1, s2",
                  "salu.xor s3, s1, #-1"}),
            (std::vector<int64_t>{0b1000, 0b1110, 0b0110, ~int64_t(0b1100)}));
  EXPECT_EQ(eval(-1, 1,
                 {"salu.min s3, s1, s2", "salu.max s3, s1, s2", "salu.min s3, s1, #-2",
                  "salu.max s3, s1, #-2"}),
            (std::vector<int64_t>{-1, 1, -2, -1}));
}

// ---- Scalar compare ----

const char* const kCondNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};

bool referenceCompare(Cond c, int64_t a, int64_t b) {
  switch (c) {
    case Cond::Eq:
      return a == b;
    case Cond::Ne:
      return a != b;
    case Cond::Lt:
      return a < b;
    case Cond::Le:
      return a <= b;
    case Cond::Gt:
      return a > b;
    case Cond::Ge:
      return a >= b;
  }
  return false;
}

class ScalarCompareTest : public ExecutorTest, public ::testing::WithParamInterface<Cond> {};

TEST_P(ScalarCompareTest, GivesOneOrZeroInBothOperandForms) {
  const char* name = kCondNames[static_cast<int>(GetParam())];
  const std::pair<int64_t, int64_t> operands[] = {
      {1, 2}, {2, 1}, {2, 2}, {-1, 1}, {1, -1}, {INT64_MIN, INT64_MAX}, {INT64_MAX, INT64_MIN}};
  std::string body = "li s3, 77\nli s4, 77\n";
  int slot = 0;
  for (const auto& [a, b] : operands) {
    body += "li s1, " + text(a) + "\nli s2, " + text(b) + "\n";
    body += std::string("scmp.") + name + " s3, s1, s2\n";
    body += std::string("scmp.") + name + " s4, s1, #" + text(b) + "\n";
    body += dumpRegs({3, 4}, slot);
    slot += 2;
  }
  ASSERT_TRUE(noFault(runAsm(body)));
  const std::vector<int64_t> out = dumped(slot);
  for (size_t i = 0; i < std::size(operands); ++i) {
    const auto [a, b] = operands[i];
    const int64_t expected = referenceCompare(GetParam(), a, b) ? 1 : 0;
    EXPECT_EQ(out[2 * i], expected) << name << " " << a << ", " << b << " (register)";
    EXPECT_EQ(out[2 * i + 1], expected) << name << " " << a << ", " << b << " (immediate)";
  }
}

INSTANTIATE_TEST_SUITE_P(AllConds, ScalarCompareTest,
                         ::testing::Values(Cond::Eq, Cond::Ne, Cond::Lt, Cond::Le, Cond::Gt,
                                           Cond::Ge),
                         [](const auto& info) {
                           return std::string(kCondNames[static_cast<int>(info.param)]);
                         });

// ---- Moves, branches, arguments, grid ----

TEST_F(ExecutorTest, LiAndMovCopyAll64Bits) {
  ASSERT_TRUE(
      noFault(runAsm("li s1, -1234567890123\n"
                     "li s2, -9223372036854775808\n"
                     "li s3, 0x7fffffffffffffff\n"
                     "mov s4, s1\n"
                     "mov s5, s2\n"
                     "mov s1, s3\n" +
                     dumpRegs({1, 2, 3, 4, 5}))));
  EXPECT_EQ(dumped(5),
            (std::vector<int64_t>{INT64_MAX, INT64_MIN, INT64_MAX, -1234567890123, INT64_MIN}));
}

TEST_F(ExecutorTest, RegistersStartAtZero) {
  ASSERT_TRUE(noFault(runAsm(dumpRegs({0, 1, 17, 29}))));
  EXPECT_EQ(dumped(4), (std::vector<int64_t>{0, 0, 0, 0}));
}

TEST_F(ExecutorTest, BrnzLoopRunsUntilTheCounterIsZero) {
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 10
  li s2, 0
loop:
  salu.add s2, s2, s1
  salu.sub s1, s1, #1
  brnz s1, loop
)" + dumpRegs({1, 2}))));
  EXPECT_EQ(dumped(2), (std::vector<int64_t>{0, 55}));
  // 2 + 3 per iteration, then the dump's three li.
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 2u + 30u + 3u);
}

TEST_F(ExecutorTest, BrzAndBrLoopRunsUntilTheCounterIsZero) {
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 5
  li s2, 0
top:
  brz s1, done
  salu.add s2, s2, #3
  salu.sub s1, s1, #1
  br top
done:
  nop
)" + dumpRegs({2}))));
  EXPECT_EQ(dumped(1)[0], 15);
}

TEST_F(ExecutorTest, ConditionalBranchesTakeOnlyTheirCase) {
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 0
  li s2, -3
  li s3, 0
  brz s1, a          # taken
  salu.add s3, s3, #1
a:
  brz s2, b          # not taken
  salu.add s3, s3, #10
b:
  brnz s1, c         # not taken
  salu.add s3, s3, #100
c:
  brnz s2, d         # taken
  salu.add s3, s3, #1000
d:
  br e
  salu.add s3, s3, #10000
e:
  nop
)" + dumpRegs({3}))));
  EXPECT_EQ(dumped(1)[0], 110);
}

TEST_F(ExecutorTest, BranchTargetsAreInstructionNumbers) {
  // brz to instruction 3 skips instruction 2.
  ASSERT_TRUE(noFault(runAsm("li s1, 0\nbrz s1, 3\nli s1, 9\nnop\n" + dumpRegs({1}))));
  EXPECT_EQ(dumped(1)[0], 0);
}

TEST_F(ExecutorTest, ArgReadsEachEightByteSlot) {
  ASSERT_TRUE(noFault(
      runAsm("arg s1, 2\narg s2, 0\narg s3, 1\n" + dumpRegs({1, 2, 3}), {-5, INT64_MIN, 42})));
  EXPECT_EQ(dumped(3), (std::vector<int64_t>{42, -5, INT64_MIN}));
}

TEST_F(ExecutorTest, WgIdAndGridDimReadAllThreeDimensions) {
  ASSERT_TRUE(noFault(
      runAsm("wgid s1, 0\nwgid s2, 1\nwgid s3, 2\ngriddim s4, 0\ngriddim s5, 1\ngriddim s6, 2\n" +
                 dumpRegs({1, 2, 3, 4, 5, 6}),
             {}, Dim3{3, 40, 500}, Dim3{2, 17, 499})));
  EXPECT_EQ(dumped(6), (std::vector<int64_t>{2, 17, 499, 3, 40, 500}));
}

TEST_F(ExecutorTest, ExitEndsTheWorkgroup) {
  ASSERT_TRUE(
      noFault(runAsm("li s1, 1\n" + dumpRegs({1}, 0) + "exit\nli s1, 2\n" + dumpRegs({1}, 1))));
  EXPECT_EQ(dumped(2), (std::vector<int64_t>{1, 0}));
  // Nothing after the exit is counted (nor, in this executor, the exit itself).
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 3u);
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Vector)], 1u);
  EXPECT_EQ(result_.trace.back().kind, TraceOp::Kind::Barrier);
}

TEST_F(ExecutorTest, ExitInsideALoopStopsIt) {
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 0
loop:
  salu.add s1, s1, #1
  scmp.eq s2, s1, #4
  brnz s2, out
  br loop
out:
)" + dumpRegs({1}) + "exit\nbr loop\n")));
  EXPECT_EQ(dumped(1)[0], 4);
}

TEST_F(ExecutorTest, NopOnlyCostsItsIssueCycles) {
  costs_.scalarCycles = 3;
  std::vector<uint8_t> before = scratchpad_;
  ASSERT_TRUE(noFault(runAsm("nop\nnop\nnop")));
  EXPECT_EQ(scratchpad_, before);
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 3u);
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Scalar)], 9u);
  EXPECT_EQ(result_.trace, (WorkgroupTrace{{TraceOp::Kind::Issue, Pipe::Scalar, 0, 9},
                                           {TraceOp::Kind::Barrier, Pipe::Scalar, 0, 0}}));
}

TEST_F(ExecutorTest, EmptyProgramIsOneWorkgroupAndAFinalBarrier) {
  ASSERT_TRUE(noFault(runAsm("exit")));
  EXPECT_EQ(result_.counters.workgroups, 1u);
  for (int p = 0; p < isa::kNumPipes; ++p) {
    EXPECT_EQ(result_.counters.instructions[p], 0u);
    EXPECT_EQ(result_.counters.pipeCycles[p], 0u);
  }
  EXPECT_EQ(result_.trace, (WorkgroupTrace{{TraceOp::Kind::Barrier, Pipe::Scalar, 0, 0}}));
}

TEST_F(ExecutorTest, RunResetsThePreviousResult) {
  ASSERT_TRUE(noFault(runAsm("nop\nnop")));
  ASSERT_TRUE(noFault(runAsm("nop")));
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 1u);
  EXPECT_EQ(result_.trace.size(), 2u);
}

// ---- SLoad ----

TEST_F(ExecutorTest, SLoadSignExtendsIntsAndZeroExtendsU8) {
  writeSp<int32_t>(100, {-5, INT32_MAX});
  writeSp<int64_t>(200, {INT64_MIN, 0x123456789abcdef0});
  writeSp<uint8_t>(301, {0xff, 7});
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 100
  sload.i32 s2, s1
  li s1, 104
  sload.i32 s3, s1
  li s1, 200
  sload.i64 s4, s1
  li s1, 208
  sload.i64 s5, s1
  li s1, 301
  sload.u8 s6, s1
  li s1, 302
  sload.u8 s7, s1
)" + dumpRegs({2, 3, 4, 5, 6, 7}))));
  EXPECT_EQ(dumped(6),
            (std::vector<int64_t>{-5, INT32_MAX, INT64_MIN, 0x123456789abcdef0, 255, 7}));
}

TEST_F(ExecutorTest, SLoadSignExtendsI8AndI16) {
  writeSp<int8_t>(301, {-1, 127});
  writeSp<int16_t>(400, {-32768, 300});
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 301
  sload.i8 s2, s1
  li s1, 302
  sload.i8 s3, s1
  li s1, 400
  sload.i16 s4, s1
  li s1, 402
  sload.i16 s5, s1
)" + dumpRegs({2, 3, 4, 5}))));
  EXPECT_EQ(dumped(4), (std::vector<int64_t>{-1, 127, -32768, 300}));
}

TEST_F(ExecutorTest, SLoadFeedsAddressing) {
  // The gather pattern: an index read from the scratchpad picks the element to read next.
  writeSp<int64_t>(0, {3});
  writeSp<int32_t>(64, {10, 11, 12, 13});
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 0
  sload.i64 s2, s1
  salu.shl s2, s2, #2
  salu.add s2, s2, #64
  sload.i32 s3, s2
)" + dumpRegs({3}))));
  EXPECT_EQ(dumped(1)[0], 13);
}

TEST_F(ExecutorTest, SLoadCostsItsOwnCyclesOnTheScalarPipe) {
  costs_.scalarCycles = 2;
  costs_.sloadCycles = 5;
  ASSERT_TRUE(noFault(runAsm("li s1, 0\nsload.i64 s2, s1\nsload.u8 s3, s1\n")));
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 3u);
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Scalar)], 2u + 2 * 5);
  EXPECT_EQ(result_.counters.bytesRead, 0u);  // the scratchpad is not HBM
}

TEST_F(ExecutorTest, SLoadOutsideTheScratchpadFaults) {
  const int64_t end = kScratchpadBytes;
  for (const auto& [type, address] : std::vector<std::pair<std::string, int64_t>>{
           {"i32", -4}, {"i32", end}, {"i64", end}, {"u8", end}}) {
    runAsm("li s1, " + text(address) + "\nsload." + type + " s2, s1\n");
    EXPECT_EQ(result_.fault.kind, FaultKind::IllegalAddress) << type << " at " << address;
    EXPECT_NE(result_.fault.message.find("SLoad source scratchpad range"), std::string::npos)
        << result_.fault.message;
  }
  // The last element is in range.
  EXPECT_TRUE(noFault(runAsm("li s1, " + text(end - 8) + "\nsload.i64 s2, s1\n")));
  EXPECT_TRUE(noFault(runAsm("li s1, " + text(end - 1) + "\nsload.u8 s2, s1\n")));
}

TEST_F(ExecutorTest, SLoadOfAMisalignedAddressFaults) {
  runAsm("li s1, 6\nsload.i64 s2, s1\n");
  EXPECT_EQ(result_.fault.kind, FaultKind::MisalignedAddress);
  EXPECT_NE(result_.fault.message.find("`sload.i64 s2, s1`"), std::string::npos)
      << result_.fault.message;
  EXPECT_TRUE(noFault(runAsm("li s1, 7\nsload.u8 s2, s1\n")));  // bytes have no alignment
}

TEST_F(ExecutorTest, SLoadOfScratchpadADmaIsStillWritingIsAHazard) {
  const uint64_t hbm = upload(std::vector<int64_t>(8, 42));
  const std::string load =
      "arg s1, 0\nli s2, 64\nli s3, 8\ndma.desc.i64 d0, 0, s3, s3, s3\n"
      "dma.load s4, s2, s1, d0\n";
  runAsm(load + "li s5, 120\nsload.i64 s6, s5\n", {addr(hbm)});
  EXPECT_EQ(result_.fault.kind, FaultKind::ScratchpadHazard);
  EXPECT_NE(result_.fault.message.find("SLoad source scratchpad range [120, 128) is read"),
            std::string::npos)
      << result_.fault.message;
  // Outside the DMA's range, or once it has been waited for, the load is fine.
  ASSERT_TRUE(noFault(runAsm(load + "li s5, 128\nsload.i64 s6, s5\nwait s4\nli s5, 120\n" +
                                 "sload.i64 s7, s5\n" + dumpRegs({7}),
                             {addr(hbm)})));
  EXPECT_EQ(dumped(1)[0], 42);
}

TEST_F(ExecutorTest, SLoadOfScratchpadADmaStoreIsReadingIsFine) {
  const uint64_t hbm = alloc(64);
  writeSp<int64_t>(64, {9});
  ASSERT_TRUE(
      noFault(runAsm("arg s1, 0\nli s2, 64\nli s3, 8\nli s8, 1\n"
                     "dma.desc.i64 d0, 0, s8, s3, s3\ndma.store s4, s1, s2, d0\n"
                     "sload.i64 s6, s2\n" +
                         dumpRegs({6}),
                     {addr(hbm)})));
  EXPECT_EQ(dumped(1)[0], 9);
}

// ---- DMA ----

struct DmaDim {
  int dim;
  int64_t count, hbmStride, spStride;
};

struct Dma {
  DType type;
  std::vector<DmaDim> dims;  // set in this order
};

// dma.desc lines for descriptor d<desc> (uses s20..s22).
std::string descAsm(int desc, const Dma& d) {
  std::string out;
  for (const DmaDim& x : d.dims) {
    out += "li s20, " + text(x.count) + "\nli s21, " + text(x.hbmStride) + "\nli s22, " +
           text(x.spStride) + "\n";
    out += std::string("dma.desc.") + isa::dtypeName(d.type) + " d" + text(desc) + ", " +
           text(x.dim) + ", s20, s21, s22\n";
  }
  return out;
}

// The copy isa.h describes, element by element; dimensions not listed have count 1.
void referenceDma(const Dma& d, uint8_t* hbm, uint8_t* sp, bool load) {
  int64_t count[4] = {1, 1, 1, 1}, hs[4] = {}, ss[4] = {};
  for (const DmaDim& x : d.dims) {
    count[x.dim] = x.count;
    hs[x.dim] = x.hbmStride;
    ss[x.dim] = x.spStride;
  }
  const int e = isa::dtypeSize(d.type);
  for (int64_t i3 = 0; i3 < count[3]; ++i3) {
    for (int64_t i2 = 0; i2 < count[2]; ++i2) {
      for (int64_t i1 = 0; i1 < count[1]; ++i1) {
        for (int64_t i0 = 0; i0 < count[0]; ++i0) {
          uint8_t* h = hbm + i0 * hs[0] + i1 * hs[1] + i2 * hs[2] + i3 * hs[3];
          uint8_t* s = sp + i0 * ss[0] + i1 * ss[1] + i2 * ss[2] + i3 * ss[3];
          if (load) {
            std::memcpy(s, h, e);
          } else {
            std::memcpy(h, s, e);
          }
        }
      }
    }
  }
}

uint64_t dmaBytes(const Dma& d) {
  uint64_t n = isa::dtypeSize(d.type);
  for (const DmaDim& x : d.dims) n *= x.count;
  return n;
}

class DmaTest : public ExecutorTest {
 protected:
  static constexpr uint64_t kHbmBytes = 16384;

  void SetUp() override {
    hbm_ = alloc(kHbmBytes);
    std::mt19937 rng(11);
    std::vector<uint8_t> bytes(kHbmBytes);
    for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
    writeHbm(hbm_, bytes);
    scrambleScratchpad(12);
  }

  std::vector<uint8_t> hbmBytes() const { return readHbm<uint8_t>(hbm_, kHbmBytes); }

  // Loads through descriptor d3 from hbm_ + hbmOffset into the scratchpad at spAddress and
  // checks every scratchpad byte against the reference, and that HBM is unchanged.
  void expectLoad(const Dma& d, int64_t spAddress, int64_t hbmOffset) {
    std::vector<uint8_t> expected = scratchpad_;
    referenceDma(d, memory_.hostView(hbm_ + hbmOffset), expected.data() + spAddress, true);
    const std::vector<uint8_t> hbmBefore = hbmBytes();
    runAsm("arg s1, 0\nli s2, " + text(spAddress) + "\n" + descAsm(3, d) +
               "dma.load s5, s2, s1, d3\nwait s5\n",
           {addr(hbm_) + hbmOffset});
    ASSERT_TRUE(noFault(result_));
    EXPECT_EQ(firstDifference(scratchpad_, expected), -1) << "first wrong scratchpad byte";
    EXPECT_EQ(firstDifference(hbmBytes(), hbmBefore), -1) << "a load wrote HBM";
    EXPECT_EQ(result_.counters.bytesRead, dmaBytes(d));
    EXPECT_EQ(result_.counters.bytesWritten, 0u);
  }

  // Stores through descriptor d6 from the scratchpad at spAddress to hbm_ + hbmOffset and
  // checks every byte of the HBM buffer against the reference, and that the scratchpad is
  // unchanged.
  void expectStore(const Dma& d, int64_t hbmOffset, int64_t spAddress) {
    std::vector<uint8_t> expected = hbmBytes();
    referenceDma(d, expected.data() + hbmOffset, scratchpad_.data() + spAddress, false);
    const std::vector<uint8_t> spBefore = scratchpad_;
    runAsm("arg s1, 0\nli s2, " + text(spAddress) + "\n" + descAsm(6, d) +
               "dma.store s5, s1, s2, d6\nwait s5\n",
           {addr(hbm_) + hbmOffset});
    ASSERT_TRUE(noFault(result_));
    EXPECT_EQ(firstDifference(hbmBytes(), expected), -1) << "first wrong HBM byte";
    EXPECT_EQ(firstDifference(scratchpad_, spBefore), -1) << "a store wrote the scratchpad";
    EXPECT_EQ(result_.counters.bytesWritten, dmaBytes(d));
    EXPECT_EQ(result_.counters.bytesRead, 0u);
  }

  uint64_t hbm_ = 0;
};

TEST_F(DmaTest, Load1DCopiesContiguousElements) {
  expectLoad({DType::F32, {{0, 100, 4, 4}}}, 256, 64);
  // Spot check against the source itself, not only the reference.
  EXPECT_EQ(readSp<uint32_t>(256, 100), readHbm<uint32_t>(hbm_ + 64, 100));
}

TEST_F(DmaTest, Store1DWritesContiguousElements) {
  expectStore({DType::I64, {{0, 33, 8, 8}}}, 512, 1024);
  EXPECT_EQ(readHbm<int64_t>(hbm_ + 512, 33), readSp<int64_t>(1024, 33));
}

TEST_F(DmaTest, Load2DGathersASubmatrixWithARowPitch) {
  // A 5 x 7 block at (2, 3) of a row-major i32 matrix with 16 columns.
  expectLoad({DType::I32, {{0, 7, 4, 4}, {1, 5, 64, 28}}}, 0, (2 * 16 + 3) * 4);
  const std::vector<int32_t> block = readSp<int32_t>(0, 35);
  EXPECT_EQ(block[8], readHbm<int32_t>(hbm_ + ((2 + 1) * 16 + 3 + 1) * 4, 1)[0]);
}

TEST_F(DmaTest, EachDmaLeavesItsHbmRegionAndTheScratchpadHighWaterMark) {
  expectLoad({DType::I32, {{0, 7, 4, 4}, {1, 5, 64, 28}}}, 512, 12);
  ASSERT_EQ(result_.dmaRegions.size(), 1u);  // token 1's
  const DmaRegion& region = result_.dmaRegions[0];
  EXPECT_EQ(region.address, hbm_ + 12);
  EXPECT_EQ(region.descriptor.count[0], 7);
  EXPECT_EQ(region.descriptor.hbmStride[1], 64);
  EXPECT_EQ(region.descriptor.elementBytes, 4u);
  EXPECT_EQ(result_.scratchpadBytes, uint64_t(512 + 35 * 4));
  // The timing model's cache walks it as five dense rows of 28 bytes.
  std::vector<std::pair<uint64_t, uint64_t>> runs;
  forEachHbmSpan(region.descriptor, region.address, 0,
                 [&](uint64_t first, uint64_t extent, uint64_t bytes) {
                   EXPECT_EQ(extent, bytes);
                   runs.emplace_back(first, bytes);
                 });
  ASSERT_EQ(runs.size(), 5u);
  EXPECT_EQ(runs[4], std::make_pair(hbm_ + 12 + 4 * 64, uint64_t(28)));
}

TEST_F(DmaTest, SpansMergeElementsWhoseGapsAreNarrowEnough) {
  DmaDescriptor every2nd;  // 4 f32, 8 bytes apart: gaps of 4 bytes
  every2nd.count[0] = 4;
  every2nd.hbmStride[0] = 8;
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> spans;
  auto collect = [&](uint64_t first, uint64_t extent, uint64_t bytes) {
    spans.emplace_back(first, extent, bytes);
  };
  forEachHbmSpan(every2nd, 1000, 4, collect);
  EXPECT_EQ(spans, (std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{{1000, 28, 16}}));
  spans.clear();
  forEachHbmSpan(every2nd, 1000, 3, collect);  // too wide: one span per element
  EXPECT_EQ(spans.size(), 4u);
  EXPECT_EQ(spans[3], std::make_tuple(uint64_t(1024), uint64_t(4), uint64_t(4)));
  spans.clear();
  every2nd.hbmStride[0] = -8;  // backwards: the span starts at the lowest element
  forEachHbmSpan(every2nd, 1024, 4, collect);
  EXPECT_EQ(spans, (std::vector<std::tuple<uint64_t, uint64_t, uint64_t>>{{1000, 28, 16}}));
}

TEST_F(DmaTest, Load3DWithPaddedScratchpadRows) {
  expectLoad({DType::F16, {{0, 5, 2, 2}, {1, 3, 10, 16}, {2, 2, 30, 64}}}, 2048, 6);
}

TEST_F(DmaTest, Load4DUsesEveryDimensionsStrides) {
  expectLoad({DType::I64, {{0, 2, 8, 8}, {1, 3, 40, 16}, {2, 2, 200, 48}, {3, 2, 1000, 96}}}, 4096,
             16);
}

TEST_F(DmaTest, Store4DScattersWithEveryDimensionsStrides) {
  expectStore({DType::U8, {{0, 3, 2, 1}, {1, 2, 7, 3}, {2, 4, 20, 6}, {3, 2, 100, 24}}}, 33, 77);
}

TEST_F(DmaTest, ZeroHbmStrideBroadcastsARow) {
  expectLoad({DType::F32, {{0, 6, 4, 4}, {1, 4, 0, 24}}}, 512, 128);
  const std::vector<uint32_t> rows = readSp<uint32_t>(512, 24);
  for (int r = 1; r < 4; ++r) {
    EXPECT_TRUE(std::equal(rows.begin(), rows.begin() + 6, rows.begin() + 6 * r)) << r;
  }
}

TEST_F(DmaTest, ZeroInnerHbmStrideSplatsOneElement) {
  expectLoad({DType::I32, {{0, 9, 0, 4}}}, 100, 40);
  EXPECT_EQ(readSp<int32_t>(100, 9), std::vector<int32_t>(9, readHbm<int32_t>(hbm_ + 40, 1)[0]));
}

TEST_F(DmaTest, NegativeHbmStridesReadBackwards) {
  // Twelve f32 read from the last one down, in two rows of six.
  expectLoad({DType::F32, {{0, 6, -4, 4}, {1, 2, -24, 24}}}, 0, 400 + 11 * 4);
  std::vector<uint32_t> source = readHbm<uint32_t>(hbm_ + 400, 12);
  std::reverse(source.begin(), source.end());
  EXPECT_EQ(readSp<uint32_t>(0, 12), source);
}

TEST_F(DmaTest, ScratchpadStridesTranspose) {
  // A 4 x 3 i32 matrix lands transposed: element (r, c) at scratchpad column r of row c.
  expectLoad({DType::I32, {{0, 3, 4, 16}, {1, 4, 12, 4}}}, 8192, 0);
  const std::vector<int32_t> source = readHbm<int32_t>(hbm_, 12);
  const std::vector<int32_t> t = readSp<int32_t>(8192, 12);
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 3; ++c) EXPECT_EQ(t[c * 4 + r], source[r * 3 + c]) << r << "," << c;
  }
}

TEST_F(DmaTest, NegativeScratchpadStrideReversesIntoTheScratchpad) {
  expectLoad({DType::F32, {{0, 8, 4, -4}}}, 1024 + 7 * 4, 0);
}

TEST_F(DmaTest, ZeroScratchpadStrideStoresOneElementEverywhere) {
  expectStore({DType::I32, {{0, 5, 4, 0}, {1, 2, 64, 0}}}, 256, 40);
}

TEST_F(DmaTest, StoreWithNegativeHbmStridesWritesBackwards) {
  expectStore({DType::F16, {{0, 10, -2, 2}, {1, 3, -40, 20}}}, 2000, 600);
}

TEST_F(DmaTest, StoreWithGapsLeavesTheGapsAlone) {
  expectStore({DType::F32, {{0, 3, 8, 4}, {1, 4, 64, 12}}}, 0, 0);
}

TEST_F(DmaTest, ByteElementsNeedNoAlignment) {
  expectLoad({DType::U8, {{0, 5, 1, 1}}}, 3, 1);
}

TEST_F(DmaTest, UnsetDimensionsHaveCountOne) {
  // Dimensions 1 and 3 are never set: 4 x 3 elements move.
  const Dma d{DType::F32, {{0, 4, 4, 4}, {2, 3, 64, 32}}};
  EXPECT_EQ(dmaBytes(d), 48u);
  expectLoad(d, 0, 0);
}

// isa.h does not say what setting dimension 0 again does; the executor starts a new
// descriptor (the reference kernels rely on it), so dimensions set before it count 1 again.
TEST_F(DmaTest, SettingDimensionZeroStartsANewDescriptor) {
  const Dma twoD{DType::F32, {{0, 4, 4, 4}, {1, 3, 64, 16}}};
  const Dma oneD{DType::F32, {{0, 5, 4, 4}}};
  std::vector<uint8_t> expected = scratchpad_;
  referenceDma(twoD, memory_.hostView(hbm_), expected.data() + 0, true);
  referenceDma(oneD, memory_.hostView(hbm_ + 256), expected.data() + 4096, true);
  ASSERT_TRUE(noFault(runAsm("arg s1, 0\nli s2, 0\n" + descAsm(0, twoD) +
                                 "dma.load s5, s2, s1, d0\n"
                                 "salu.add s1, s1, #256\nli s2, 4096\n" +
                                 descAsm(0, oneD) + "dma.load s6, s2, s1, d0\nwaitall\n",
                             {addr(hbm_)})));
  EXPECT_EQ(firstDifference(scratchpad_, expected), -1);
  EXPECT_EQ(result_.counters.bytesRead, 48u + 20u);
}

TEST_F(DmaTest, DescriptorsAreIndependent) {
  const Dma a{DType::I32, {{0, 6, 4, 4}}};
  const Dma b{DType::I64, {{0, 2, 16, 8}, {1, 2, 64, 16}}};
  std::vector<uint8_t> expected = scratchpad_;
  referenceDma(a, memory_.hostView(hbm_), expected.data() + 0, true);
  referenceDma(b, memory_.hostView(hbm_ + 1024), expected.data() + 2048, true);
  ASSERT_TRUE(noFault(runAsm("arg s1, 0\narg s2, 1\nli s3, 0\nli s4, 2048\n" + descAsm(0, a) +
                                 descAsm(7, b) +
                                 "dma.load s5, s4, s2, d7\ndma.load s6, s3, s1, d0\nwaitall\n",
                             {addr(hbm_), addr(hbm_) + 1024})));
  EXPECT_EQ(firstDifference(scratchpad_, expected), -1);
}

TEST_F(DmaTest, CountZeroMovesNothingButReturnsAToken) {
  const std::vector<uint8_t> spBefore = scratchpad_, hbmBefore = hbmBytes();
  // Neither address is valid: with nothing to move, nothing is checked.
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 0
  li s2, -64
  li s20, 0
  li s21, 4
  dma.desc.f32 d1, 0, s20, s21, s21
  dma.desc.f32 d2, 0, s21, s21, s21
  dma.desc.f32 d2, 1, s20, s21, s21
  dma.load s3, s2, s1, d1
  dma.store s4, s1, s2, d2
  dma.store s5, s1, s2, d1
)" + dumpRegs({3, 4, 5}))));
  const std::vector<int64_t> tokens = dumped(3);
  EXPECT_NE(tokens[0], tokens[1]);
  EXPECT_NE(tokens[1], tokens[2]);
  EXPECT_NE(tokens[0], tokens[2]);
  EXPECT_EQ(result_.counters.bytesRead, 0u);
  EXPECT_EQ(result_.counters.bytesWritten, 0u);
  EXPECT_EQ(firstDifference(hbmBytes(), hbmBefore), -1);
  // Only the dump area changed.
  std::vector<uint8_t> sp = scratchpad_;
  std::copy(spBefore.begin() + kDumpOffset, spBefore.begin() + kDumpOffset + 24,
            sp.begin() + kDumpOffset);
  EXPECT_EQ(firstDifference(sp, spBefore), -1);
  // Each still appears in the trace, with its token and no bytes.
  std::vector<TraceOp> dmas;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::DmaLoad || op.kind == TraceOp::Kind::DmaStore) dmas.push_back(op);
  }
  ASSERT_EQ(dmas.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(dmas[i].token, uint32_t(tokens[i])) << i;
    EXPECT_EQ(dmas[i].amount, 0u) << i;
  }
  EXPECT_EQ(dmas[0].kind, TraceOp::Kind::DmaLoad);
  EXPECT_EQ(dmas[1].kind, TraceOp::Kind::DmaStore);
}

TEST_F(DmaTest, RoundTripThroughTheScratchpad) {
  // Load a row, scale it, store it elsewhere: the ordinary kernel shape.
  const std::vector<float> input = {1, -2, 3.5f, 4, 0.25f, -6, 7, 8};
  writeHbm(hbm_, input);
  ASSERT_TRUE(noFault(runAsm(R"(
  arg s1, 0
  arg s2, 1
  li s3, 8
  li s4, 4
  li s5, 128
  dma.desc.f32 d0, 0, s3, s4, s4
  dma.load s6, s5, s1, d0
  wait s6
  vbins.mul.f32 s5, s5, #2.0, s3
  dma.store s7, s2, s5, d0
  wait s7
)",
                             {addr(hbm_), addr(hbm_) + 4096})));
  std::vector<float> expected = input;
  for (float& x : expected) x *= 2;
  EXPECT_EQ(readHbm<float>(hbm_ + 4096, 8), expected);
  EXPECT_EQ(result_.counters.bytesRead, 32u);
  EXPECT_EQ(result_.counters.bytesWritten, 32u);
}

// ---- Counters and trace of scalar and DMA work ----

TEST_F(DmaTest, TraceListsDmasAndWaitsInProgramOrder) {
  ASSERT_TRUE(noFault(runAsm(R"(
  arg s1, 0
  li s2, 0
  li s3, 16
  li s4, 4
  dma.desc.f32 d0, 0, s3, s4, s4
  dma.load s5, s2, s1, d0
  wait s5
  salu.add s1, s1, #64
  dma.store s6, s1, s2, d0
  li s7, 1024
  dma.load s8, s7, s1, d0
  waitall
  nop
)",
                             {addr(hbm_)})));
  // The same token numbers the program saw are in the trace.
  std::vector<uint32_t> tokens;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::DmaLoad || op.kind == TraceOp::Kind::DmaStore) {
      tokens.push_back(op.token);
    }
  }
  ASSERT_EQ(tokens.size(), 3u);
  using K = TraceOp::Kind;
  const WorkgroupTrace expected = {
      {K::Issue, Pipe::Scalar, 0, 4 + 4},  // arg, li, li, li; the load's issue
      {K::DmaLoad, Pipe::Dma, tokens[0], 64},
      {K::Wait, Pipe::Dma, tokens[0], 0},
      {K::Issue, Pipe::Scalar, 0, 1 + 4},  // salu; the store's issue
      {K::DmaStore, Pipe::Dma, tokens[1], 64},
      {K::Issue, Pipe::Scalar, 0, 1 + 4},  // li; the load's issue
      {K::DmaLoad, Pipe::Dma, tokens[2], 64},
      {K::WaitAll, Pipe::Scalar, 0, 0},
      {K::Issue, Pipe::Scalar, 0, 1},  // nop
      {K::Barrier, Pipe::Scalar, 0, 0},
  };
  EXPECT_EQ(result_.trace, expected);
}

TEST_F(DmaTest, CountersCountDmaInstructionsBytesAndIssueCycles) {
  costs_.scalarCycles = 2;
  costs_.dmaIssueCycles = 7;
  ASSERT_TRUE(noFault(runAsm(R"(
  arg s1, 0
  li s2, 0
  li s3, 10
  li s4, 8
  dma.desc.i64 d0, 0, s3, s4, s4
  dma.desc.i64 d0, 1, s4, s4, s4
  dma.load s5, s2, s1, d0
  wait s5
  dma.store s6, s1, s2, d0
  dma.store s7, s1, s2, d0
  waitall
)",
                             {addr(hbm_)})));
  const KernelCounters& c = result_.counters;
  EXPECT_EQ(c.instructions[pipe(Pipe::Scalar)], 4u);
  EXPECT_EQ(c.instructions[pipe(Pipe::Dma)], 7u);  // desc x2, load, wait, store x2, waitall
  EXPECT_EQ(c.instructions[pipe(Pipe::Vector)], 0u);
  EXPECT_EQ(c.instructions[pipe(Pipe::Matrix)], 0u);
  EXPECT_EQ(c.bytesRead, 640u);
  EXPECT_EQ(c.bytesWritten, 2 * 640u);
  // Each DMA's issue occupies the scalar pipe (and is what this executor counts on the DMA
  // pipe); desc, wait and waitall cost nothing.
  EXPECT_EQ(c.pipeCycles[pipe(Pipe::Scalar)], 4u * 2 + 3u * 7);
  EXPECT_EQ(c.pipeCycles[pipe(Pipe::Dma)], 3u * 7);
  EXPECT_EQ(c.flops, 0u);
}

}  // namespace
}  // namespace mimic::exec::test
