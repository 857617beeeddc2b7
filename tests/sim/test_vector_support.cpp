// Tests of what the functional vector/matrix math (sim/exec) supports: the SIMD build, the
// op/type support tables, and unsupported calls leaving memory alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <random>

#include "sim/exec/vector_math.h"
#include "vector_math_test.h"

namespace mimic::exec::vector_math_test {
namespace {

TEST(VectorMath, ReportsSimdArch) {
  std::printf("vector math built for %s\n", simdArchName());
  SUCCEED();
}

TEST(VectorMath, SupportMatrix) {
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(UnaryOp::Not); ++op) {
      const auto u = static_cast<UnaryOp>(op);
      const bool floatOnly = (u >= UnaryOp::Exp && u <= UnaryOp::Cos) || u == UnaryOp::Recip;
      const bool expect = isFloatT(t) ? u != UnaryOp::Not : !floatOnly;
      EXPECT_EQ(supportsUnary(u, t), expect) << typeName(t) << " unary " << op;
    }
    for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
      const auto b = static_cast<BinaryOp>(op);
      const bool bitwise = b == BinaryOp::And || b == BinaryOp::Or || b == BinaryOp::Xor;
      EXPECT_EQ(supportsBinary(b, t), !(isFloatT(t) && bitwise)) << typeName(t) << " binary " << op;
    }
    for (DType to : kTypes) EXPECT_TRUE(supportsCast(t, to));
    EXPECT_TRUE(supportsFma(t));
    EXPECT_TRUE(supportsSelect(t));
    EXPECT_TRUE(supportsFill(t));
    EXPECT_TRUE(supportsIota(t));
    EXPECT_TRUE(supportsCompare(Cond::Ge, t));
    EXPECT_TRUE(supportsReduce(ReduceOp::ArgMin, t));
    EXPECT_EQ(supportsMma(t), isFloatT(t));
  }
  // Values outside the enums (as a corrupt instruction could carry) are never supported.
  const auto badType = static_cast<DType>(isa::kNumDTypes);
  EXPECT_FALSE(supportsUnary(static_cast<UnaryOp>(200), DType::F32));
  EXPECT_FALSE(supportsUnary(UnaryOp::Neg, badType));
  EXPECT_FALSE(supportsBinary(static_cast<BinaryOp>(11), DType::I32));
  EXPECT_FALSE(supportsCompare(static_cast<Cond>(6), DType::F32));
  EXPECT_FALSE(supportsReduce(static_cast<ReduceOp>(5), DType::F32));
  EXPECT_FALSE(supportsCast(badType, DType::F32));
  EXPECT_FALSE(supportsCast(DType::F32, badType));
  EXPECT_FALSE(supportsFma(badType));
  EXPECT_FALSE(supportsSelect(badType));
  EXPECT_FALSE(supportsFill(badType));
  EXPECT_FALSE(supportsMma(badType));
}

TEST(VectorMath, UnsupportedCallsDoNothing) {
  Row src(DType::F32, 9), dst(DType::F32, 9), i32(DType::I32, 9);
  std::mt19937_64 rng(1);
  fillInputs({&src}, rng);
  unary(UnaryOp::Not, DType::F32, dst.data(), src.data(), 9);
  binary(BinaryOp::Xor, DType::F32, dst.data(), src.data(), src.data(), 9);
  binaryScalar(BinaryOp::And, DType::BF16, dst.data(), src.data(), 0, 9);
  unary(UnaryOp::Exp, DType::I32, i32.data(), src.data(), 9);
  unary(static_cast<UnaryOp>(99), DType::F32, dst.data(), src.data(), 9);
  cast(static_cast<DType>(17), DType::F32, dst.data(), src.data(), 9);
  fill(static_cast<DType>(isa::kNumDTypes), dst.data(), 0, 9);
  mma(DType::I32, static_cast<float*>(dst.data()), src.data(), src.data(), 3, 3, 1);
  for (int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(dst.get(i), 0xCDCDCDCDu);
    EXPECT_EQ(i32.get(i), 0xCDCDCDCDu);
  }
  EXPECT_TRUE(dst.guardsIntact());
}

}  // namespace
}  // namespace mimic::exec::vector_math_test
