// The interpreter's vector, matrix and sync instructions, run one workgroup at a time through
// exec::Executor. Element values come from vector_math (tested on its own); what is checked
// here is the routing: which operand each register and row stride feeds, the shape of the
// output, that nothing else in the scratchpad changes, and the counters and trace.
#include <algorithm>
#include <cstring>
#include <functional>
#include <iterator>
#include <random>

#include "executor_test.h"
#include "sim/exec/half.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::exec::test {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::ReduceOp;
using isa::UnaryOp;

std::string text(int64_t v) {
  return std::to_string(v);
}

// Scratchpad layout: the destination and each source in an 8 KiB region of its own (negative
// row strides reach below the base address).
constexpr int64_t kDst = 2048, kA = 10240, kB = 18432, kC = 26624, kMask = 34816;
constexpr int64_t kRegionBelow = 2048, kRegionBytes = 8192;

// Registers: s1 dst, s2 a, s3 b, s4 c, s5 n, s6 scalar, s7 mask.
const std::string kRegs = "li s1, " + text(kDst) + "\nli s2, " + text(kA) + "\nli s3, " + text(kB) +
                          "\nli s4, " + text(kC) + "\nli s7, " + text(kMask) + "\n";

struct Shape {
  const char* name;
  bool set;  // false: no vshape, the default one row
  int64_t rows, dst, src, other;
  int64_t n;
};

const Shape kShapes[] = {
    {"default", false, 1, 0, 0, 0, 7},
    {"distinct strides", true, 3, 96, 64, 128, 7},
    {"wide rows", true, 2, 1024, 768, 1280, 37},
    {"negative strides", true, 3, -96, 64, -128, 5},
    {"zero source strides", true, 4, 64, 0, 0, 6},
};

std::string shapeAsm(int64_t rows, int64_t dst, int64_t src, int64_t other) {
  return "li s20, " + text(rows) + "\nli s21, " + text(dst) + "\nli s22, " + text(src) +
         "\nli s23, " + text(other) + "\nvshape s20, s21, s22, s23\n";
}
std::string shapeAsm(const Shape& s) {
  return s.set ? shapeAsm(s.rows, s.dst, s.src, s.other) : "";
}

uint8_t* dstRow(uint8_t* sp, const Shape& s, int64_t r) {
  return sp + kDst + r * s.dst;
}
const uint8_t* firstRow(const uint8_t* sp, int64_t base, const Shape& s, int64_t r) {
  return sp + base + r * s.src;
}
const uint8_t* otherRow(const uint8_t* sp, int64_t base, const Shape& s, int64_t r) {
  return sp + base + r * s.other;
}

uint64_t lowBits(uint64_t bits, DType t) {
  const int e = isa::dtypeSize(t);
  return e == 8 ? bits : bits & ((uint64_t(1) << (8 * e)) - 1);
}

// A register value for a scalar operand of type t: a sensible value in the low bits and junk
// above them, which the instruction must ignore.
uint64_t scalarRegister(DType t) {
  switch (t) {
    case DType::F32:
      return 0xabcd123400000000ull | isa::floatToBits(1.25, t);
    case DType::F16:
    case DType::BF16:
      return 0x5a5a5a5a5a5a0000ull | isa::floatToBits(-0.75, t);
    case DType::I32:
      return 0x12345678fffffff7ull;  // -9
    case DType::I64:
      return static_cast<uint64_t>(int64_t(-98765432101));
    case DType::U8:
      return 0x7731;  // 49
    case DType::I8:
      return 0x12345677fbull;  // -5
    case DType::I16:
      return 0xabcd8001ull;  // -32767
    case DType::F64:
      return isa::floatToBits(-3.25, t);
  }
  return 0;
}

// An immediate scalar of type t as assembly text, and its bits.
std::pair<std::string, uint64_t> scalarImmediate(DType t) {
  switch (t) {
    case DType::F32:
      return {"1.5", isa::floatToBits(1.5, t)};
    case DType::F16:
    case DType::BF16:
      return {"-2.5", isa::floatToBits(-2.5, t)};
    case DType::I32:
      return {"-7", static_cast<uint64_t>(int64_t(-7))};
    case DType::I64:
      return {"-123456789012", static_cast<uint64_t>(int64_t(-123456789012))};
    case DType::U8:
      return {"200", 200};
    case DType::I8:
      return {"-100", static_cast<uint64_t>(int64_t(-100))};
    case DType::I16:
      return {"1234", 1234};
    case DType::F64:
      return {"0.1", isa::floatToBits(0.1, t)};
  }
  return {};
}

const char* const kUnaryNames[] = {"neg",  "abs",     "exp",   "log",   "sqrt", "rsqrt",
                                   "tanh", "sigmoid", "erf",   "sin",   "cos",  "floor",
                                   "ceil", "round",   "trunc", "recip", "relu", "not"};
const char* const kBinaryNames[] = {"add", "sub", "mul", "div", "max", "min",
                                    "pow", "and", "or",  "xor", "rem"};
const char* const kCondNames[] = {"eq", "ne", "lt", "le", "gt", "ge"};
const char* const kReduceNames[] = {"sum", "max", "min", "argmax", "argmin"};
const DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64,
                        DType::U8,  DType::I8,  DType::I16,  DType::F64};

class VectorTest : public ExecutorTest {
 protected:
  void SetUp() override { scrambleScratchpad(21); }

  // Fills [offset, offset + bytes) with values of type t: finite floats in [-8, 8] with some
  // zeros, integers with some extremes.
  void fillTyped(DType t, int64_t offset, int64_t bytes, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> real(-8.0f, 8.0f);
    const int e = isa::dtypeSize(t);
    for (int64_t p = offset; p + e <= offset + bytes; p += e) {
      uint8_t* q = scratchpad_.data() + p;
      const uint32_t pick = rng() % 8;
      const float f = pick == 0 ? 0.0f : real(rng);
      switch (t) {
        case DType::F32:
          std::memcpy(q, &f, 4);
          break;
        case DType::F16: {
          const uint16_t h = f32ToF16(f);
          std::memcpy(q, &h, 2);
          break;
        }
        case DType::BF16: {
          const uint16_t h = f32ToBf16(f);
          std::memcpy(q, &h, 2);
          break;
        }
        case DType::I32: {
          const int32_t v = pick == 0   ? INT32_MIN
                            : pick == 1 ? -1
                                        : static_cast<int32_t>(rng() % 2001) - 1000;
          std::memcpy(q, &v, 4);
          break;
        }
        case DType::I64: {
          const int64_t v = pick == 0   ? INT64_MIN
                            : pick == 1 ? static_cast<int64_t>(uint64_t(rng()) << 32 | rng())
                                        : static_cast<int64_t>(rng() % 20001) - 10000;
          std::memcpy(q, &v, 8);
          break;
        }
        case DType::U8:
        case DType::I8:
          *q = static_cast<uint8_t>(rng());
          break;
        case DType::I16: {
          const auto v = static_cast<int16_t>(pick == 0 ? INT16_MIN : rng());
          std::memcpy(q, &v, 2);
          break;
        }
        case DType::F64: {
          const double d = pick == 1 ? double{f} / 3.0 : double{f};
          std::memcpy(q, &d, 8);
          break;
        }
      }
    }
  }

  void fillRegion(DType t, int64_t base, unsigned seed) {
    fillTyped(t, base - kRegionBelow, kRegionBytes, seed);
  }

  void fillMasks() {
    std::mt19937 rng(5);
    const uint8_t values[] = {0, 1, 0, 2, 255, 0};
    for (int64_t p = kMask - kRegionBelow; p < kMask - kRegionBelow + kRegionBytes; ++p) {
      scratchpad_[p] = values[rng() % 6];
    }
  }

  // Runs `instr` (registers as kRegs, s5 = n, s6 = scalarBits) under `shape` and checks the
  // whole scratchpad against `row` applied to every row of a copy.
  void expectShape(const std::string& instr, const Shape& shape, uint64_t scalarBits,
                   const std::function<void(uint8_t*, const Shape&, int64_t)>& row) {
    std::vector<uint8_t> expected = scratchpad_;
    for (int64_t r = 0; r < shape.rows; ++r) row(expected.data(), shape, r);
    runAsm(kRegs + "li s5, " + text(shape.n) + "\nli s6, " + text(int64_t(scalarBits)) + "\n" +
           shapeAsm(shape) + instr);
    ASSERT_TRUE(noFault(result_)) << instr << ", shape " << shape.name;
    EXPECT_EQ(firstDifference(scratchpad_, expected), -1)
        << "first wrong scratchpad byte for " << instr << ", shape " << shape.name;
    EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Vector)], shape.set ? 2u : 1u);
  }

  void expectEveryShape(const std::string& instr, uint64_t scalarBits,
                        const std::function<void(uint8_t*, const Shape&, int64_t)>& row) {
    for (const Shape& shape : kShapes) expectShape(instr, shape, scalarBits, row);
  }
};

// Each vector instruction for every element type, under every shape of kShapes.
class VectorOpTest : public VectorTest, public ::testing::WithParamInterface<DType> {
 protected:
  void SetUp() override {
    VectorTest::SetUp();
    fillRegion(t(), kA, 1);
    fillRegion(t(), kB, 2);
    fillRegion(t(), kC, 3);
    fillMasks();
  }
  DType t() const { return GetParam(); }
  std::string suffix() const { return std::string(".") + isa::dtypeName(t()); }
};

TEST_P(VectorOpTest, VUnaryReadsTheFirstSourceStride) {
  int tested = 0;
  for (int op = 0; op <= static_cast<int>(UnaryOp::Not); ++op) {
    if (!supportsUnary(UnaryOp(op), t())) continue;
    ++tested;
    expectEveryShape(std::string("vun.") + kUnaryNames[op] + suffix() + " s1, s2, s5", 0,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       unary(UnaryOp(op), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), s.n);
                     });
  }
  EXPECT_GE(tested, 7);
}

TEST_P(VectorOpTest, VBinaryReadsTheSecondSourceAtTheOtherStride) {
  for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
    if (!supportsBinary(BinaryOp(op), t())) continue;
    expectEveryShape(std::string("vbin.") + kBinaryNames[op] + suffix() + " s1, s2, s3, s5", 0,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       binary(BinaryOp(op), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r),
                              otherRow(sp, kB, s, r), s.n);
                     });
  }
}

TEST_P(VectorOpTest, VBinarySUsesTheLowBitsOfARegister) {
  const uint64_t bits = scalarRegister(t());
  for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
    if (!supportsBinary(BinaryOp(op), t())) continue;
    expectEveryShape(std::string("vbins.") + kBinaryNames[op] + suffix() + " s1, s2, s6, s5", bits,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       binaryScalar(BinaryOp(op), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r),
                                    lowBits(bits, t()), s.n);
                     });
  }
}

TEST_P(VectorOpTest, VBinarySUsesAnImmediate) {
  const auto [literal, bits] = scalarImmediate(t());
  for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
    if (!supportsBinary(BinaryOp(op), t())) continue;
    // s6 holds something else, which the immediate form must not read.
    expectEveryShape(
        std::string("vbins.") + kBinaryNames[op] + suffix() + " s1, s2, #" + literal + ", s5",
        scalarRegister(t()), [&](uint8_t* sp, const Shape& s, int64_t r) {
          binaryScalar(BinaryOp(op), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), bits, s.n);
        });
  }
}

TEST_P(VectorOpTest, VFmaReadsTheLaterOperandsAtTheOtherStride) {
  expectEveryShape("vfma" + suffix() + " s1, s2, s3, s4, s5", 0,
                   [&](uint8_t* sp, const Shape& s, int64_t r) {
                     fma(t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), otherRow(sp, kB, s, r),
                         otherRow(sp, kC, s, r), s.n);
                   });
}

TEST_P(VectorOpTest, VSelectReadsTheMaskAtTheFirstStride) {
  expectEveryShape("vsel" + suffix() + " s1, s7, s3, s4, s5", 0,
                   [&](uint8_t* sp, const Shape& s, int64_t r) {
                     select(t(), dstRow(sp, s, r), firstRow(sp, kMask, s, r),
                            otherRow(sp, kB, s, r), otherRow(sp, kC, s, r), s.n);
                   });
}

TEST_P(VectorOpTest, VCmpWritesU8AtTheDestinationStride) {
  for (int c = 0; c <= static_cast<int>(Cond::Ge); ++c) {
    expectEveryShape(std::string("vcmp.") + kCondNames[c] + suffix() + " s1, s2, s3, s5", 0,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       compare(Cond(c), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r),
                               otherRow(sp, kB, s, r), s.n);
                     });
  }
}

TEST_P(VectorOpTest, VCmpSUsesARegisterOrAnImmediate) {
  const uint64_t bits = scalarRegister(t());
  const auto [literal, immBits] = scalarImmediate(t());
  for (int c = 0; c <= static_cast<int>(Cond::Ge); ++c) {
    const std::string stem = std::string("vcmps.") + kCondNames[c] + suffix();
    expectEveryShape(stem + " s1, s2, s6, s5", bits, [&](uint8_t* sp, const Shape& s, int64_t r) {
      compareScalar(Cond(c), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), lowBits(bits, t()),
                    s.n);
    });
    expectEveryShape(
        stem + " s1, s2, #" + literal + ", s5", bits, [&](uint8_t* sp, const Shape& s, int64_t r) {
          compareScalar(Cond(c), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), immBits, s.n);
        });
  }
}

TEST_P(VectorOpTest, VCastConvertsEveryRowToEachType) {
  for (DType to : kTypes) {
    expectEveryShape(std::string("vcast") + suffix() + "." + isa::dtypeName(to) + " s1, s2, s5", 0,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       cast(t(), to, dstRow(sp, s, r), firstRow(sp, kA, s, r), s.n);
                     });
  }
}

TEST_P(VectorOpTest, VReduceWritesOneResultPerRow) {
  for (int op = 0; op <= static_cast<int>(ReduceOp::ArgMin); ++op) {
    expectEveryShape(std::string("vred.") + kReduceNames[op] + suffix() + " s1, s2, s5", 0,
                     [&](uint8_t* sp, const Shape& s, int64_t r) {
                       reduce(ReduceOp(op), t(), dstRow(sp, s, r), firstRow(sp, kA, s, r), s.n);
                     });
  }
}

TEST_P(VectorOpTest, VFillWritesARegisterOrAnImmediate) {
  const uint64_t bits = scalarRegister(t());
  const auto [literal, immBits] = scalarImmediate(t());
  const std::string stem = "vfill" + suffix();
  expectEveryShape(stem + " s1, s6, s5", bits, [&](uint8_t* sp, const Shape& s, int64_t r) {
    fill(t(), dstRow(sp, s, r), lowBits(bits, t()), s.n);
  });
  expectEveryShape(
      stem + " s1, #" + literal + ", s5", bits,
      [&](uint8_t* sp, const Shape& s, int64_t r) { fill(t(), dstRow(sp, s, r), immBits, s.n); });
}

TEST_P(VectorOpTest, VIotaRestartsInEveryRow) {
  expectEveryShape("viota" + suffix() + " s1, s5", 0, [&](uint8_t* sp, const Shape& s, int64_t r) {
    iota(t(), dstRow(sp, s, r), s.n);
  });
}

INSTANTIATE_TEST_SUITE_P(AllTypes, VectorOpTest, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(isa::dtypeName(info.param)); });

// ---- Routing with literal expectations, independent of vector_math ----

TEST_F(VectorTest, VBinaryTakesEachStrideForItsOperand) {
  // Two rows of three: a dense (stride 12), b every 32 bytes, dst every 16 bytes.
  writeSp<float>(kA, {1, 2, 3, 4, 5, 6});
  writeSp<float>(kB, {10, 20, 30});
  writeSp<float>(kB + 32, {40, 50, 60});
  const std::vector<uint8_t> before = scratchpad_;
  ASSERT_TRUE(noFault(runAsm(kRegs + shapeAsm(2, 16, 12, 32) +
                             "li s5, 3\nvbin.sub.f32 s1, s3, s2, s5\n"
                             "vbin.add.f32 s1, s2, s3, s5\n")));
  // The second instruction overwrites the first; the first also reads b as its first source.
  EXPECT_EQ(readSp<float>(kDst, 3), (std::vector<float>{11, 22, 33}));
  EXPECT_EQ(readSp<float>(kDst + 16, 3), (std::vector<float>{44, 55, 66}));
  // The 4 bytes between the destination rows are untouched.
  EXPECT_EQ(std::memcmp(scratchpad_.data() + kDst + 12, before.data() + kDst + 12, 4), 0);
}

TEST_F(VectorTest, VFmaReadsBothLaterOperandsAtTheOtherStride) {
  writeSp<float>(kA, {1, 2, 3, 4});  // stride 8: rows {1, 2}, {3, 4}
  writeSp<float>(kB, {2, 2});
  writeSp<float>(kB + 24, {3, 3});
  writeSp<float>(kC, {100, 200});
  writeSp<float>(kC + 24, {300, 400});
  ASSERT_TRUE(
      noFault(runAsm(kRegs + shapeAsm(2, 8, 8, 24) + "li s5, 2\nvfma.f32 s1, s2, s3, s4, s5\n")));
  EXPECT_EQ(readSp<float>(kDst, 4), (std::vector<float>{102, 204, 309, 412}));
}

TEST_F(VectorTest, VSelectReadsTheMaskAtTheFirstStrideAndTheValuesAtTheOther) {
  writeSp<uint8_t>(kMask, {1, 0, 0, 1});  // stride 2
  writeSp<int32_t>(kB, {1, 2});
  writeSp<int32_t>(kB + 16, {3, 4});
  writeSp<int32_t>(kC, {-1, -2});
  writeSp<int32_t>(kC + 16, {-3, -4});
  ASSERT_TRUE(
      noFault(runAsm(kRegs + shapeAsm(2, 8, 2, 16) + "li s5, 2\nvsel.i32 s1, s7, s3, s4, s5\n")));
  EXPECT_EQ(readSp<int32_t>(kDst, 4), (std::vector<int32_t>{1, -2, -3, 4}));
}

TEST_F(VectorTest, VReduceArgMaxWritesAnI64PerRowAtTheDestinationStride) {
  writeSp<float>(kA, {1, 9, 3, 9, /**/ -5, -4, -7, -1, /**/ 2, 2, 2, 8});
  const std::vector<uint8_t> before = scratchpad_;
  ASSERT_TRUE(
      noFault(runAsm(kRegs + shapeAsm(3, 24, 16, 0) + "li s5, 4\nvred.argmax.f32 s1, s2, s5\n")));
  EXPECT_EQ(readSp<int64_t>(kDst, 1)[0], 1);
  EXPECT_EQ(readSp<int64_t>(kDst + 24, 1)[0], 3);
  EXPECT_EQ(readSp<int64_t>(kDst + 48, 1)[0], 3);
  // Only 8 bytes per row are written.
  EXPECT_TRUE(std::equal(before.begin() + kDst + 8, before.begin() + kDst + 24,
                         scratchpad_.begin() + kDst + 8));
}

TEST_F(VectorTest, VReduceSumOfF32GivesF32PerRow) {
  writeSp<float>(kA, {1, 2, 3, 4, 10, 20, 30, 40});
  ASSERT_TRUE(
      noFault(runAsm(kRegs + shapeAsm(2, 4, 16, 0) + "li s5, 4\nvred.sum.f32 s1, s2, s5\n")));
  EXPECT_EQ(readSp<float>(kDst, 2), (std::vector<float>{10, 100}));
}

TEST_F(VectorTest, VCastWritesTheDestinationTypePerRow) {
  writeSp<float>(kA, {1.9f, -2.5f, 300.0f, -1.0f});
  ASSERT_TRUE(
      noFault(runAsm(kRegs + shapeAsm(2, 16, 8, 0) + "li s5, 2\nvcast.f32.i64 s1, s2, s5\n")));
  EXPECT_EQ(readSp<int64_t>(kDst, 2), (std::vector<int64_t>{1, -2}));
  EXPECT_EQ(readSp<int64_t>(kDst + 16, 2), (std::vector<int64_t>{300, -1}));
}

TEST_F(VectorTest, VFillAndVIotaWriteEveryRow) {
  ASSERT_TRUE(noFault(runAsm(kRegs + shapeAsm(2, 12, 0, 0) +
                             "li s5, 3\nli s6, 0x1234\nvfill.u8 s1, s6, s5\n"
                             "viota.i32 s2, s5\n")));
  EXPECT_EQ(readSp<uint8_t>(kDst, 3), (std::vector<uint8_t>{0x34, 0x34, 0x34}));
  EXPECT_EQ(readSp<uint8_t>(kDst + 12, 3), (std::vector<uint8_t>{0x34, 0x34, 0x34}));
  EXPECT_EQ(readSp<int32_t>(kA, 3), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(readSp<int32_t>(kA + 12, 3), (std::vector<int32_t>{0, 1, 2}));
}

TEST_F(VectorTest, ShapeStaysUntilTheNextVShape) {
  ASSERT_TRUE(noFault(runAsm(kRegs + shapeAsm(2, 8, 0, 0) +
                             "li s5, 1\nvfill.i32 s1, #7, s5\nvfill.i32 s2, #8, s5\n" +
                             shapeAsm(1, 0, 0, 0) + "vfill.i32 s3, #9, s5\n")));
  EXPECT_EQ(readSp<int32_t>(kDst, 3)[0], 7);
  EXPECT_EQ(readSp<int32_t>(kDst + 8, 1)[0], 7);
  EXPECT_EQ(readSp<int32_t>(kA + 8, 1)[0], 8);
  EXPECT_EQ(readSp<int32_t>(kB, 1)[0], 9);
  EXPECT_NE(readSp<int32_t>(kB + 8, 1)[0], 9);  // the random byte pattern, almost surely
}

TEST_F(VectorTest, ZeroRowsChangeNothing) {
  const std::vector<uint8_t> before = scratchpad_;
  ASSERT_TRUE(noFault(runAsm(kRegs + shapeAsm(0, 8, 8, 8) +
                             "li s5, 64\nvfill.f32 s1, #1.0, s5\nvbin.add.f32 s1, s2, s3, s5\n"
                             "vred.sum.f32 s1, s2, s5\n")));
  EXPECT_EQ(scratchpad_, before);
  EXPECT_EQ(result_.counters.flops, 0u);
}

// vector_math defines fma for integers (wrapping) and the validator accepts vfma.i32.
TEST_F(VectorTest, VFmaOnIntegersWraps) {
  writeSp<int32_t>(kA, {INT32_MAX, -3});
  writeSp<int32_t>(kB, {2, 4});
  writeSp<int32_t>(kC, {2, 5});
  ASSERT_TRUE(noFault(runAsm(kRegs + "li s5, 2\nvfma.i32 s1, s2, s3, s4, s5\n")));
  EXPECT_EQ(readSp<int32_t>(kDst, 2), (std::vector<int32_t>{0, -7}));
}

// ---- Matrix ----

class MmaTest : public VectorTest {
 protected:
  // Runs one mma of type t with C preloaded, and checks C against vector_math's mma on the
  // same inputs (and the rest of the scratchpad unchanged).
  void expectMma(DType t, int m, int n, int k, int repeats = 1) {
    fillRegion(t, kA, 31);
    fillRegion(t, kB, 32);
    fillRegion(DType::F32, kDst, 33);
    std::vector<uint8_t> expected = scratchpad_;
    for (int i = 0; i < repeats; ++i) {
      mma(t, reinterpret_cast<float*>(expected.data() + kDst), expected.data() + kA,
          expected.data() + kB, m, n, k);
    }
    std::string body = kRegs + "li s10, " + text(m) + "\nli s11, " + text(n) + "\nli s12, " +
                       text(k) + "\nmshape s10, s11, s12\n";
    for (int i = 0; i < repeats; ++i)
      body += std::string("mma.") + isa::dtypeName(t) + " s1, s2, s3\n";
    ASSERT_TRUE(noFault(runAsm(body)));
    EXPECT_EQ(firstDifference(scratchpad_, expected), -1);
    EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Matrix)], uint64_t(repeats));
    EXPECT_EQ(result_.counters.flops, uint64_t(2 * m * n * k * repeats));
  }
};

TEST_F(MmaTest, F32NonSquareAccumulatesIntoC) {
  expectMma(DType::F32, 3, 5, 7);
}

TEST_F(MmaTest, Bf16NonSquareAccumulatesIntoC) {
  expectMma(DType::BF16, 4, 6, 3);
}

TEST_F(MmaTest, F16NonSquareAccumulatesIntoC) {
  expectMma(DType::F16, 2, 3, 9);
}

TEST_F(MmaTest, ShapeStaysForTheNextMma) {
  expectMma(DType::F32, 5, 2, 4, 2);
}

TEST_F(MmaTest, MatchesAHostProductPlusC) {
  // An independent check of the layout: row-major A (M x K), B (K x N), C (M x N), C += A B.
  const int m = 2, n = 3, k = 4;
  const std::vector<float> a = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<float> b = {1, 0, 2, 0, 1, 3, 1, 1, 0, -1, 2, 1};
  const std::vector<float> c = {100, 200, 300, 400, 500, 600};
  writeSp(kA, a);
  writeSp(kB, b);
  writeSp(kDst, c);
  ASSERT_TRUE(noFault(runAsm(kRegs + "li s10, 2\nli s11, 3\nli s12, 4\nmshape s10, s11, s12\n" +
                             shapeAsm(3, 64, 64, 64) + "mma.f32 s1, s2, s3\n")));
  std::vector<float> expected(m * n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float sum = c[i * n + j];
      for (int p = 0; p < k; ++p) sum += a[i * k + p] * b[p * n + j];
      expected[i * n + j] = sum;
    }
  }
  EXPECT_EQ(readSp<float>(kDst, m * n), expected);  // small integers: exact
}

// ---- Sync: barrier and atomics ----

TEST_F(VectorTest, BarrierAppearsInTheTraceInProgramOrder) {
  ASSERT_TRUE(noFault(runAsm("li s1, 0\nbarrier\nli s2, 8\nli s1, 4\nvfill.f32 s1, #1.0, s2\n")));
  using K = TraceOp::Kind;
  const WorkgroupTrace expected = {
      {K::Issue, Pipe::Scalar, 0, 1},      // li
      {K::Barrier, Pipe::Scalar, 0, 0},    // the barrier
      {K::Issue, Pipe::Scalar, 0, 1 + 3},  // its issue, li, li; the vfill's issue
      {K::Compute, Pipe::Vector, 0, 1},
      {K::Barrier, Pipe::Scalar, 0, 0},  // the end of the workgroup
  };
  EXPECT_EQ(result_.trace, expected);
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Scalar)], 4u);
}

class AtomicTest : public VectorTest, public ::testing::WithParamInterface<DType> {
 protected:
  // Writes `values` as type T at kA and atomically adds them at `target`.
  template <typename T>
  void addOnce(uint64_t target, const std::vector<T>& values, int64_t count) {
    writeSp(kA, values);
    ASSERT_TRUE(
        noFault(runAsm(std::string("arg s1, 0\nli s2, ") + text(kA) + "\nli s3, " + text(count) +
                           "\natomic.add." + isa::dtypeName(GetParam()) + " s1, s2, s3\n",
                       {addr(target)})));
  }

  template <typename T>
  void expectRecordedThenApplied(std::vector<T> initial, std::vector<T> values) {
    const uint64_t target = upload(initial);
    addOnce(target, values, int64_t(values.size()));
    ASSERT_EQ(result_.atomics.size(), 1u);
    const AtomicAdd& a = result_.atomics[0];
    EXPECT_EQ(a.address, target);
    EXPECT_EQ(a.type, GetParam());
    ASSERT_EQ(a.values.size(), values.size() * sizeof(T));
    EXPECT_EQ(std::memcmp(a.values.data(), values.data(), a.values.size()), 0);
    EXPECT_EQ(readHbm<T>(target, initial.size()), initial) << "applied before applyAtomics";
    EXPECT_EQ(result_.counters.bytesRead, values.size() * sizeof(T));
    EXPECT_EQ(result_.counters.bytesWritten, values.size() * sizeof(T));
    EXPECT_EQ(result_.counters.flops, values.size());
    EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Vector)], 1u);

    applyAtomics(result_.atomics);
    std::vector<T> expected = initial;
    binary(BinaryOp::Add, GetParam(), expected.data(), expected.data(), values.data(),
           int64_t(values.size()));
    EXPECT_EQ(readHbm<T>(target, initial.size()), expected);
  }
};

TEST_P(AtomicTest, IsRecordedAndAppliedByApplyAtomics) {
  switch (GetParam()) {
    case DType::F32:
      expectRecordedThenApplied<float>({1.5f, -2, 1e30f, 0, 7}, {0.25f, 2, -1e30f, -0.0f, 1});
      break;
    case DType::I32:
      expectRecordedThenApplied<int32_t>({1, INT32_MAX, -5}, {2, 1, -7});
      break;
    case DType::I64:
      expectRecordedThenApplied<int64_t>({INT64_MAX, 3, -4, 0}, {1, -3, 10, INT64_MIN});
      break;
    default:
      FAIL();
  }
}

INSTANTIATE_TEST_SUITE_P(Types, AtomicTest, ::testing::Values(DType::F32, DType::I32, DType::I64),
                         [](const auto& info) { return std::string(isa::dtypeName(info.param)); });

TEST_F(VectorTest, AtomicsApplyInTheOrderGiven) {
  // In f32, (1e8 + 1) - 1e8 = 0 but (1e8 - 1e8) + 1 = 1.
  const uint64_t target = upload(std::vector<float>{1e8f});
  const std::string body =
      "arg s1, 0\nli s2, " + text(kA) + "\nli s3, 1\natomic.add.f32 s1, s2, s3\n";
  writeSp<float>(kA, {1.0f});
  ASSERT_TRUE(noFault(runAsm(body, {addr(target)})));
  const std::vector<AtomicAdd> plusOne = result_.atomics;
  writeSp<float>(kA, {-1e8f});
  ASSERT_TRUE(noFault(runAsm(body, {addr(target)})));
  const std::vector<AtomicAdd> minus = result_.atomics;

  std::vector<AtomicAdd> order = plusOne;
  order.insert(order.end(), minus.begin(), minus.end());
  applyAtomics(order);
  EXPECT_EQ(readHbm<float>(target, 1)[0], 0.0f);

  writeHbm(target, std::vector<float>{1e8f});
  order = minus;
  order.insert(order.end(), plusOne.begin(), plusOne.end());
  applyAtomics(order);
  EXPECT_EQ(readHbm<float>(target, 1)[0], 1.0f);
}

TEST_F(VectorTest, AtomicsOfOneWorkgroupKeepProgramOrderAndIgnoreTheVectorShape) {
  const uint64_t target = upload(std::vector<int64_t>{0, 0, 0, 0});
  writeSp<int64_t>(kA, {1, 2, 3, 4});
  ASSERT_TRUE(noFault(runAsm(shapeAsm(3, 8, 8, 8) + "arg s1, 0\nli s2, " + text(kA) +
                                 "\nli s3, 4\n"
                                 "atomic.add.i64 s1, s2, s3\n"
                                 "salu.add s1, s1, #8\nli s3, 2\natomic.add.i64 s1, s2, s3\n",
                             {addr(target)})));
  ASSERT_EQ(result_.atomics.size(), 2u);
  EXPECT_EQ(result_.atomics[0].address, target);
  EXPECT_EQ(result_.atomics[0].values.size(), 32u);
  EXPECT_EQ(result_.atomics[1].address, target + 8);
  EXPECT_EQ(result_.atomics[1].values.size(), 16u);
  applyAtomics(result_.atomics);
  EXPECT_EQ(readHbm<int64_t>(target, 4), (std::vector<int64_t>{1, 3, 5, 4}));
}

TEST_F(VectorTest, AtomicAddOfF64AddsDoubles) {
  const uint64_t target = upload(std::vector<double>{0.5, 1e300, -2.0});
  writeSp<double>(kA, {0.25, 1e300, 0.1});
  ASSERT_TRUE(
      noFault(runAsm("arg s1, 0\nli s2, " + text(kA) + "\nli s3, 3\natomic.add.f64 s1, s2, s3\n",
                     {addr(target)})));
  applyAtomics(result_.atomics);
  EXPECT_EQ(readHbm<double>(target, 3), (std::vector<double>{0.75, 2e300, -2.0 + 0.1}));
}

// ---- Counters and trace of compute work ----

TEST_F(VectorTest, F64VectorWorkCountsGroupsOfTheF64Lanes) {
  // testCosts(): 16 lanes, 8 f64 lanes. 33 elements: 3 groups of f32, 5 of f64; a cast to or
  // from f64 runs on the f64 units too.
  costs_.vectorCycles = 2;
  costs_.vectorComplexCycles = 7;
  ASSERT_TRUE(noFault(runAsm(kRegs + R"(
  li s5, 33
  vbin.add.f32 s1, s2, s3, s5
  vbin.add.f64 s1, s2, s3, s5
  vbin.div.f64 s1, s2, s3, s5
  vcast.f32.f64 s1, s2, s5
  vcast.f64.i32 s1, s2, s5
  vbin.add.i8 s1, s2, s3, s5
)")));
  const uint64_t expected[] = {3 * 2, 5 * 2, 5 * 7, 5 * 2, 5 * 2, 3 * 2};
  std::vector<uint64_t> computes;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::Compute) computes.push_back(op.amount);
  }
  EXPECT_EQ(computes, std::vector<uint64_t>(std::begin(expected), std::end(expected)));
}

TEST_F(VectorTest, VectorCyclesCountLaneGroupsAndComplexity) {
  costs_.vectorCycles = 2;
  costs_.vectorComplexCycles = 7;
  costs_.scalarCycles = 3;
  ASSERT_TRUE(noFault(runAsm(kRegs + R"(
  li s5, 33
  vbin.add.f32 s1, s2, s3, s5
  vbin.div.f32 s1, s2, s3, s5
  vun.exp.f32 s1, s2, s5
  vun.neg.f32 s1, s2, s5
  li s20, 2
  li s21, 256
  vshape s20, s21, s21, s21
  vfma.f32 s1, s2, s3, s4, s5
  vred.sum.f32 s1, s2, s5
  viota.i32 s1, s5
)")));
  // 33 elements: 3 groups of 16; two rows: 66 elements, 5 groups.
  const uint64_t expected[] = {3 * 2, 3 * 7, 3 * 7, 3 * 2, 5 * 2, 5 * 2, 5 * 2};
  std::vector<uint64_t> computes;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::Compute) {
      EXPECT_EQ(op.pipe, Pipe::Vector);
      computes.push_back(op.amount);
    }
  }
  EXPECT_EQ(computes, std::vector<uint64_t>(std::begin(expected), std::end(expected)));
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Vector)], 3u * 2 + 3 * 7 * 2 + 3 * 2 + 15 * 2);
  // 8 scalar instructions and 7 issued compute instructions (the vshape issues nothing).
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Scalar)], (8u + 7u) * 3);
}

TEST_F(VectorTest, MmaCyclesUseTheMacRateOfTheType) {
  ASSERT_TRUE(noFault(runAsm(kRegs + R"(
  li s10, 8
  mshape s10, s10, s10
  mma.f32 s1, s2, s3
  mma.bf16 s1, s2, s3
  li s11, 33
  mshape s10, s10, s11
  mma.f16 s1, s2, s3
)")));
  std::vector<TraceOp> computes;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::Compute) computes.push_back(op);
  }
  // 512 MACs at 256 per cycle, 512 at 1024, 2112 at 1024 (rounded up).
  ASSERT_EQ(computes.size(), 3u);
  EXPECT_EQ(computes[0], (TraceOp{TraceOp::Kind::Compute, Pipe::Matrix, 0, 2}));
  EXPECT_EQ(computes[1], (TraceOp{TraceOp::Kind::Compute, Pipe::Matrix, 0, 1}));
  EXPECT_EQ(computes[2], (TraceOp{TraceOp::Kind::Compute, Pipe::Matrix, 0, 3}));
  EXPECT_EQ(result_.counters.pipeCycles[pipe(Pipe::Matrix)], 6u);
  EXPECT_EQ(result_.counters.flops, 2u * (512 + 512 + 2112));
}

TEST_F(VectorTest, FlopsCountOnePerElementAndTwoPerFmaElement) {
  ASSERT_TRUE(noFault(runAsm(kRegs + shapeAsm(3, 128, 128, 128) + R"(
  li s5, 10
  vbin.add.f32 s1, s2, s3, s5
  vun.sqrt.f32 s1, s2, s5
  vfma.f32 s1, s2, s3, s4, s5
  vcmp.lt.f32 s1, s2, s3, s5
  vred.max.f32 s1, s2, s5
  vcast.f32.i32 s1, s2, s5
  vsel.f32 s1, s7, s3, s4, s5
)")));
  EXPECT_EQ(result_.counters.flops, 30u * 6 + 60u);
}

// The executor counts no flops for vfill and viota (they do no arithmetic).
TEST_F(VectorTest, FillAndIotaCountNoFlops) {
  ASSERT_TRUE(noFault(runAsm(kRegs + "li s5, 10\nvfill.f32 s1, #2.0, s5\nviota.f32 s1, s5\n")));
  EXPECT_EQ(result_.counters.flops, 0u);
  EXPECT_EQ(result_.counters.instructions[pipe(Pipe::Vector)], 2u);
}

TEST_F(VectorTest, InstructionsAreCountedPerPipe) {
  const uint64_t target = upload(std::vector<float>(4));
  ASSERT_TRUE(noFault(runAsm(kRegs + R"(
  arg s9, 0
  li s5, 4
  li s10, 2
  vshape s10, s5, s5, s5
  mshape s10, s10, s10
  mma.f32 s1, s2, s3
  vbin.add.f32 s1, s2, s3, s5
  atomic.add.f32 s9, s2, s5
  li s11, 16
  li s12, 4
  dma.desc.f32 d0, 0, s12, s12, s12
  dma.load s13, s4, s9, d0
  wait s13
  barrier
  nop
)",
                             {addr(target)})));
  const KernelCounters& c = result_.counters;
  // kRegs (5 li), arg, li x2, mshape, li x2, barrier, nop.
  EXPECT_EQ(c.instructions[pipe(Pipe::Scalar)], 5u + 1 + 2 + 1 + 2 + 1 + 1);
  EXPECT_EQ(c.instructions[pipe(Pipe::Vector)], 3u);  // vshape, vbin, atomic.add
  EXPECT_EQ(c.instructions[pipe(Pipe::Matrix)], 1u);
  EXPECT_EQ(c.instructions[pipe(Pipe::Dma)], 3u);
  EXPECT_EQ(c.workgroups, 1u);
}

TEST_F(VectorTest, ScalarIssueMergesIntoTheNextComputesIssue) {
  ASSERT_TRUE(noFault(runAsm(kRegs + R"(
  li s5, 16
  vbin.add.f32 s1, s2, s3, s5
  vbin.mul.f32 s1, s2, s3, s5
  li s10, 1
  mshape s10, s10, s10
  mma.f32 s1, s2, s3
  nop
)")));
  using K = TraceOp::Kind;
  const WorkgroupTrace expected = {
      {K::Issue, Pipe::Scalar, 0, 6 + 1},  // kRegs, li; the vbin's issue
      {K::Compute, Pipe::Vector, 0, 1},
      {K::Issue, Pipe::Scalar, 0, 1},
      {K::Compute, Pipe::Vector, 0, 1},
      {K::Issue, Pipe::Scalar, 0, 2 + 1},      // li, mshape; the mma's issue
      {K::Compute, Pipe::Matrix, 0, 1, true},  // reads what the vbins wrote
      {K::Issue, Pipe::Scalar, 0, 1},          // nop
      {K::Barrier, Pipe::Scalar, 0, 0},
  };
  EXPECT_EQ(result_.trace, expected);
}

// The vector and matrix pipes run side by side; the trace orders an instruction after the
// other pipe's earlier work only where it uses that work's scratchpad.
TEST_F(VectorTest, ComputeWaitsForTheOtherPipeOnlyWhenItsScratchpadOverlaps) {
  ASSERT_TRUE(noFault(runAsm(R"(
  li s1, 0
  li s2, 1024
  li s3, 2048
  li s4, 4096
  li s5, 16
  li s10, 1
  mshape s10, s10, s10
  mma.f32 s1, s2, s3
  vbin.add.f32 s4, s4, s4, s5
  vbin.mul.f32 s1, s1, s4, s5
  mma.f32 s4, s2, s3
  barrier
  vbin.add.f32 s1, s2, s3, s5
)")));
  std::vector<bool> after;
  for (const TraceOp& op : result_.trace) {
    if (op.kind == TraceOp::Kind::Compute) after.push_back(op.afterOtherPipe);
  }
  // mma; vbin on untouched bytes; vbin reading the mma's C; mma writing what the vbins read
  // and wrote; after the barrier nothing is pending.
  EXPECT_EQ(after, (std::vector<bool>{false, false, true, true, false}));
}

}  // namespace
}  // namespace mimic::exec::test
