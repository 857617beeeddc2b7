// Exact values of the vector math (sim/exec) for i8, i16 and f64: integer arithmetic wraps in
// the type's width, casts saturate from floats and keep the low bits between integers, and f64
// rounds once (no detour through f32). The rules are vector_math.h's.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "sim/exec/vector_math.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::exec {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::ReduceOp;
using isa::UnaryOp;

template <class T>
uint64_t bitsOf(T v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof v);
  return bits;
}

// Each row is longer than one SIMD batch in some tests, so the tail and the bulk are both used.
template <class T>
std::vector<T> binaryOf(BinaryOp op, DType t, const std::vector<T>& a, const std::vector<T>& b) {
  std::vector<T> d(a.size());
  binary(op, t, d.data(), a.data(), b.data(), static_cast<int64_t>(a.size()));
  return d;
}

template <class T>
std::vector<T> unaryOf(UnaryOp op, DType t, const std::vector<T>& a) {
  std::vector<T> d(a.size());
  unary(op, t, d.data(), a.data(), static_cast<int64_t>(a.size()));
  return d;
}

template <class To, class From>
std::vector<To> castOf(DType from, DType to, const std::vector<From>& a) {
  std::vector<To> d(a.size());
  cast(from, to, d.data(), a.data(), static_cast<int64_t>(a.size()));
  return d;
}

TEST(VectorNarrowInts, I8ArithmeticWrapsLikeCppAfterPromotion) {
  using V = std::vector<int8_t>;
  const V a = {100, -100, 16, 100, -128, 127, 7, -7};
  const V b = {100, 100, 16, 3, -1, 1, -2, 2};
  EXPECT_EQ(binaryOf(BinaryOp::Add, DType::I8, a, b), (V{-56, 0, 32, 103, 127, -128, 5, -5}));
  EXPECT_EQ(binaryOf(BinaryOp::Sub, DType::I8, a, b), (V{0, 56, 0, 97, -127, 126, 9, -9}));
  EXPECT_EQ(binaryOf(BinaryOp::Mul, DType::I8, a, b),
            (V{16, 240 - 256, 0, 44, -128, 127, -14, -14}));
  // Division truncates toward zero, the remainder has the dividend's sign; -128 / -1 wraps.
  EXPECT_EQ(binaryOf(BinaryOp::Div, DType::I8, a, b), (V{1, -1, 1, 33, -128, 127, -3, -3}));
  EXPECT_EQ(binaryOf(BinaryOp::Rem, DType::I8, a, b), (V{0, 0, 0, 1, 0, 0, 1, -1}));
  EXPECT_EQ(binaryOf(BinaryOp::Max, DType::I8, a, b), (V{100, 100, 16, 100, -1, 127, 7, 2}));
  EXPECT_EQ(binaryOf(BinaryOp::Min, DType::I8, a, b), (V{100, -100, 16, 3, -128, 1, -2, -7}));
  EXPECT_EQ(binaryOf(BinaryOp::Xor, DType::I8, a, b),
            (V{0, int8_t(-100 ^ 100), 0, 100 ^ 3, 127, 126, int8_t(7 ^ -2), int8_t(-7 ^ 2)}));
  // 3^5 = 243 keeps its low byte; a zero divisor gives 0.
  EXPECT_EQ(binaryOf(BinaryOp::Pow, DType::I8, V{3, 2, -2, 5}, V{5, 7, 7, -1}),
            (V{243 - 256, -128, -128, 0}));
  EXPECT_EQ(binaryOf(BinaryOp::Div, DType::I8, V{5, -128}, V{0, 0}), (V{0, 0}));
  EXPECT_EQ(unaryOf(UnaryOp::Neg, DType::I8, V{-128, 5, 0}), (V{-128, -5, 0}));
  EXPECT_EQ(unaryOf(UnaryOp::Abs, DType::I8, V{-128, -5, 3}), (V{-128, 5, 3}));
  EXPECT_EQ(unaryOf(UnaryOp::Not, DType::I8, V{5, -1, 0}), (V{-6, 0, -1}));
  EXPECT_EQ(unaryOf(UnaryOp::Relu, DType::I8, V{-128, 5, 0}), (V{0, 5, 0}));
}

TEST(VectorNarrowInts, I16ArithmeticWrapsLongRows) {
  // 40 elements: bulk batches and a tail.
  std::vector<int16_t> a(40), b(40), sum(40), prod(40), quot(40);
  for (int i = 0; i < 40; ++i) {
    a[i] = static_cast<int16_t>(30000 - 1000 * i);
    b[i] = static_cast<int16_t>(i % 2 ? 300 : -1);
    sum[i] = static_cast<int16_t>(a[i] + b[i]);
    prod[i] = static_cast<int16_t>(a[i] * b[i]);
    quot[i] = static_cast<int16_t>(a[i] / b[i]);
  }
  a[2] = INT16_MIN;
  sum[2] = static_cast<int16_t>(INT16_MIN - 1);  // wraps to 32767
  prod[2] = INT16_MIN;                           // -(-32768) wraps
  quot[2] = INT16_MIN;
  EXPECT_EQ(binaryOf(BinaryOp::Add, DType::I16, a, b), sum);
  EXPECT_EQ(binaryOf(BinaryOp::Mul, DType::I16, a, b), prod);
  EXPECT_EQ(binaryOf(BinaryOp::Div, DType::I16, a, b), quot);
  EXPECT_EQ(sum[2], 32767);
  EXPECT_EQ(sum[0], 29999);
  EXPECT_EQ(prod[1], -16288);  // 29000 * 300 = 8700000 = 132 * 65536 + 49248
}

TEST(VectorNarrowInts, ScalarOperandsAreTheLowBits) {
  const std::vector<int8_t> a = {1, 127, -128};
  std::vector<int8_t> d(3);
  binaryScalar(BinaryOp::Add, DType::I8, d.data(), a.data(), 0xdead01ull, 3);
  EXPECT_EQ(d, (std::vector<int8_t>{2, -128, -127}));
  std::vector<uint8_t> m(3);
  compareScalar(Cond::Lt, DType::I8, m.data(), a.data(), bitsOf<int64_t>(-1), 3);
  EXPECT_EQ(m, (std::vector<uint8_t>{0, 0, 1}));
  const std::vector<int16_t> h = {-300, 300};
  std::vector<int16_t> hd(2);
  binaryScalar(BinaryOp::Mul, DType::I16, hd.data(), h.data(), 0xffff0000ull | 300u, 2);
  EXPECT_EQ(hd, (std::vector<int16_t>{static_cast<int16_t>(-90000), 24464}));
}

TEST(VectorNarrowInts, ComparesAreSigned) {
  const std::vector<int8_t> a = {-1, 5, -128};
  const std::vector<int8_t> b = {1, 5, 127};
  std::vector<uint8_t> m(3);
  compare(Cond::Lt, DType::I8, m.data(), a.data(), b.data(), 3);
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0, 1}));
  compare(Cond::Ge, DType::I16, m.data(), std::vector<int16_t>{-1, 5, 0}.data(),
          std::vector<int16_t>{-2, 6, 0}.data(), 3);
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0, 1}));
}

TEST(VectorNarrowInts, ReductionsKeepTheTypeAndWrap) {
  std::vector<int8_t> x(70, 5);  // sum 68 * 5 - 128 + 127 = 339 -> 83
  x[33] = -128;
  x[50] = 127;
  int8_t s = 0;
  reduce(ReduceOp::Sum, DType::I8, &s, x.data(), 70);
  EXPECT_EQ(s, 83);
  reduce(ReduceOp::Max, DType::I8, &s, x.data(), 70);
  EXPECT_EQ(s, 127);
  reduce(ReduceOp::Min, DType::I8, &s, x.data(), 70);
  EXPECT_EQ(s, -128);
  int64_t index = 0;
  reduce(ReduceOp::ArgMin, DType::I8, &index, x.data(), 70);
  EXPECT_EQ(index, 33);
  // Empty: the lowest value for Max, the highest for Min.
  int16_t h = 0;
  reduce(ReduceOp::Max, DType::I16, &h, x.data(), 0);
  EXPECT_EQ(h, INT16_MIN);
  reduce(ReduceOp::Min, DType::I16, &h, x.data(), 0);
  EXPECT_EQ(h, INT16_MAX);
}

TEST(VectorNarrowInts, CastsSaturateFromFloatsAndWrapBetweenInts) {
  const std::vector<float> f = {127.9f, 128.0f, -129.0f, -1.5f, NAN, 1e10f, -0.0f, 40000.0f};
  EXPECT_EQ((castOf<int8_t>(DType::F32, DType::I8, f)),
            (std::vector<int8_t>{127, 127, -128, -1, 0, 127, 0, 127}));
  EXPECT_EQ((castOf<int16_t>(DType::F32, DType::I16, f)),
            (std::vector<int16_t>{127, 128, -129, -1, 0, 32767, 0, 32767}));
  const std::vector<int64_t> wide = {300, -1, 65535, -32769, 128};
  EXPECT_EQ((castOf<int8_t>(DType::I64, DType::I8, wide)),
            (std::vector<int8_t>{44, -1, -1, -1, -128}));
  EXPECT_EQ((castOf<int16_t>(DType::I64, DType::I16, wide)),
            (std::vector<int16_t>{300, -1, -1, 32767, 128}));
  // Widening sign-extends i8/i16 and zero-extends u8.
  const std::vector<int8_t> small = {-1, -128, 127};
  EXPECT_EQ((castOf<int64_t>(DType::I8, DType::I64, small)), (std::vector<int64_t>{-1, -128, 127}));
  EXPECT_EQ((castOf<uint8_t>(DType::I8, DType::U8, small)), (std::vector<uint8_t>{255, 128, 127}));
  EXPECT_EQ((castOf<int8_t>(DType::U8, DType::I8, std::vector<uint8_t>{255, 128})),
            (std::vector<int8_t>{-1, -128}));
  EXPECT_EQ((castOf<int32_t>(DType::I16, DType::I32, std::vector<int16_t>{-32768, 7})),
            (std::vector<int32_t>{-32768, 7}));
  EXPECT_EQ((castOf<float>(DType::I16, DType::F32, std::vector<int16_t>{-32768, 32767})),
            (std::vector<float>{-32768.0f, 32767.0f}));
  // bf16 keeps 8 significant bits: 257 rounds to even (256), 32767 up to 32768.
  const auto bf = castOf<uint16_t>(DType::I16, DType::BF16, std::vector<int16_t>{257, 32767, -3});
  EXPECT_EQ(isa::bitsToFloat(bf[0], DType::BF16), 256.0);
  EXPECT_EQ(isa::bitsToFloat(bf[1], DType::BF16), 32768.0);
  EXPECT_EQ(isa::bitsToFloat(bf[2], DType::BF16), -3.0);
}

TEST(VectorNarrowInts, IotaWrapsAndFillUsesTheLowBits) {
  std::vector<int8_t> v(300);
  iota(DType::I8, v.data(), 300);
  EXPECT_EQ(v[127], 127);
  EXPECT_EQ(v[128], -128);
  EXPECT_EQ(v[299], static_cast<int8_t>(299 - 256));
  std::vector<int16_t> h(5);
  fill(DType::I16, h.data(), 0x1234ffffull, 5);
  EXPECT_EQ(h, (std::vector<int16_t>(5, -1)));
}

TEST(VectorF64, ArithmeticIsIeeeDouble) {
  using V = std::vector<double>;
  const V a = {0.1, 1.0, -0.0, 1e308, 7.5, NAN, 3.0, -7.0};
  const V b = {0.2, 3.0, 0.0, 1e308, 2.0, 1.0, -0.0, 2.0};
  const V sum = binaryOf(BinaryOp::Add, DType::F64, a, b);
  EXPECT_EQ(bitsOf(sum[0]), 0x3FD3333333333334ull);  // 0.30000000000000004
  EXPECT_EQ(sum[3], INFINITY);
  EXPECT_TRUE(std::isnan(sum[5]));
  const V quot = binaryOf(BinaryOp::Div, DType::F64, a, b);
  EXPECT_EQ(quot[1], 1.0 / 3.0);
  EXPECT_EQ(quot[6], -INFINITY);
  const V mx = binaryOf(BinaryOp::Max, DType::F64, a, b);
  const V mn = binaryOf(BinaryOp::Min, DType::F64, a, b);
  EXPECT_FALSE(std::signbit(mx[2]));  // max(-0, +0) = +0
  EXPECT_TRUE(std::signbit(mn[2]));   // min(-0, +0) = -0
  EXPECT_TRUE(std::isnan(mx[5]) && std::isnan(mn[5]));
  const V rem = binaryOf(BinaryOp::Rem, DType::F64, a, b);
  EXPECT_EQ(rem[4], 1.5);
  EXPECT_EQ(rem[7], -1.0);  // fmod keeps the dividend's sign
  EXPECT_EQ(binaryOf(BinaryOp::Pow, DType::F64, V{2.0, NAN, 1.0}, V{60.0, 0.0, NAN}),
            (V{1152921504606846976.0, 1.0, 1.0}));
  // fma rounds once: 0.1 * 10 - 1 is the rounding error of the product, not 0.
  V d(1);
  const double x = 0.1, y = 10.0, z = -1.0;
  fma(DType::F64, d.data(), &x, &y, &z, 1);
  EXPECT_EQ(d[0], 5.551115123125783e-17);
}

TEST(VectorF64, UnaryOpsAreCorrectlyRoundedWhereIeeeSaysSo) {
  using V = std::vector<double>;
  EXPECT_EQ(bitsOf(unaryOf(UnaryOp::Sqrt, DType::F64, V{2.0})[0]), 0x3FF6A09E667F3BCDull);
  const V r = unaryOf(UnaryOp::Round, DType::F64, V{2.5, -2.5, 0.5, -0.3, 4503599627370497.0});
  EXPECT_EQ(r, (V{2.0, -2.0, 0.0, -0.0, 4503599627370497.0}));
  EXPECT_TRUE(std::signbit(r[3]));
  const V fl = unaryOf(UnaryOp::Floor, DType::F64, V{-0.5, -0.0, 1.9999999999999998});
  EXPECT_EQ(fl, (V{-1.0, -0.0, 1.0}));
  EXPECT_TRUE(std::signbit(fl[1]));
  const V relu = unaryOf(UnaryOp::Relu, DType::F64, V{-0.0, -3.0, 2.0, NAN});
  EXPECT_FALSE(std::signbit(relu[0]));
  EXPECT_EQ(relu[1], 0.0);
  EXPECT_TRUE(std::isnan(relu[3]));
  // Sigmoid does not overflow for large |x|; exp(1) is e within glibc's 1-ULP bound.
  const V sig = unaryOf(UnaryOp::Sigmoid, DType::F64, V{-800.0, 800.0, 0.0, -40.0});
  EXPECT_EQ(sig[0], 0.0);
  EXPECT_EQ(sig[1], 1.0);
  EXPECT_EQ(sig[2], 0.5);
  EXPECT_NEAR(sig[3], 4.248354255291589e-18, 4.248354255291589e-18 * 4e-16);
  const double e = unaryOf(UnaryOp::Exp, DType::F64, V{1.0})[0];
  EXPECT_LE(std::fabs(e - 2.718281828459045), std::nextafter(e, 10.0) - e);
  // Values beyond f32's range stay finite in f64.
  EXPECT_EQ(unaryOf(UnaryOp::Exp, DType::F64, V{100.0})[0], std::exp(100.0));
  EXPECT_GT(std::exp(100.0), double{std::numeric_limits<float>::max()});
}

TEST(VectorF64, CastsRoundOnce) {
  // 1 + 2^-11 + 2^-40 is just above the f16 midpoint between 1 and 1 + 2^-10; through f32 it
  // would become the midpoint itself and round to even (1.0).
  const double justAbove = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  const auto h = castOf<uint16_t>(DType::F64, DType::F16, std::vector<double>{justAbove, 1e6});
  EXPECT_EQ(h[0], 0x3C01);
  EXPECT_EQ(h[1], 0x7C00);  // overflow to inf
  EXPECT_EQ((castOf<float>(DType::F64, DType::F32, std::vector<double>{0.1, 1e300})),
            (std::vector<float>{0.1f, INFINITY}));
  EXPECT_EQ((castOf<int64_t>(DType::F64, DType::I64,
                             std::vector<double>{9.3e18, -9.3e18, -0.5, NAN, 9007199254740993.0})),
            (std::vector<int64_t>{INT64_MAX, INT64_MIN, 0, 0, 9007199254740992}));
  EXPECT_EQ((castOf<uint8_t>(DType::F64, DType::U8, std::vector<double>{300.0, -5.0, 254.9})),
            (std::vector<uint8_t>{255, 0, 254}));
  EXPECT_EQ((castOf<int8_t>(DType::F64, DType::I8, std::vector<double>{-200.0, 99.99})),
            (std::vector<int8_t>{-128, 99}));
  // int64 -> f64 is one correct rounding: 2^53 + 1 ties to even.
  EXPECT_EQ((castOf<double>(DType::I64, DType::F64,
                            std::vector<int64_t>{(int64_t{1} << 53) + 1, (int64_t{1} << 53) + 3})),
            (std::vector<double>{9007199254740992.0, 9007199254740996.0}));
  // Widening is exact.
  EXPECT_EQ((castOf<double>(DType::F32, DType::F64, std::vector<float>{0.1f})),
            (std::vector<double>{double{0.1f}}));
  EXPECT_EQ((castOf<double>(DType::BF16, DType::F64, std::vector<uint16_t>{0x3F81})),
            (std::vector<double>{1.0078125}));
  EXPECT_EQ((castOf<double>(DType::I8, DType::F64, std::vector<int8_t>{-128})),
            (std::vector<double>{-128.0}));
}

TEST(VectorF64, ReductionsAndCompares) {
  std::vector<double> x(100);
  for (int i = 0; i < 100; ++i) x[i] = i + 1;
  double s = 0;
  reduce(ReduceOp::Sum, DType::F64, &s, x.data(), 100);
  EXPECT_EQ(s, 5050.0);
  x[40] = NAN;
  x[70] = NAN;
  int64_t index = 0;
  reduce(ReduceOp::ArgMax, DType::F64, &index, x.data(), 100);
  EXPECT_EQ(index, 40);
  reduce(ReduceOp::Max, DType::F64, &s, x.data(), 100);
  EXPECT_TRUE(std::isnan(s));
  reduce(ReduceOp::Max, DType::F64, &s, x.data(), 0);
  EXPECT_EQ(s, -INFINITY);
  reduce(ReduceOp::Sum, DType::F64, &s, x.data(), 0);
  EXPECT_EQ(s, 0.0);
  const std::vector<double> zeros = {0.0, -0.0};
  reduce(ReduceOp::Min, DType::F64, &s, zeros.data(), 2);
  EXPECT_TRUE(std::signbit(s));
  // Sums beyond f32's precision stay exact in f64.
  const std::vector<double> fine = {16777216.0, 1.0};
  reduce(ReduceOp::Sum, DType::F64, &s, fine.data(), 2);
  EXPECT_EQ(s, 16777217.0);

  const std::vector<double> a = {NAN, -0.0, 1.0, 1.0 + 0x1p-52};
  const std::vector<double> b = {NAN, 0.0, 1.0, 1.0};
  std::vector<uint8_t> m(4);
  compare(Cond::Eq, DType::F64, m.data(), a.data(), b.data(), 4);
  EXPECT_EQ(m, (std::vector<uint8_t>{0, 1, 1, 0}));
  compare(Cond::Ne, DType::F64, m.data(), a.data(), b.data(), 4);
  EXPECT_EQ(m, (std::vector<uint8_t>{1, 0, 0, 1}));
  compareScalar(Cond::Gt, DType::F64, m.data(), a.data(), bitsOf(1.0), 4);
  EXPECT_EQ(m, (std::vector<uint8_t>{0, 0, 0, 1}));
}

TEST(VectorF64, IotaAndFill) {
  std::vector<double> v(70);
  iota(DType::F64, v.data(), 70);
  for (int i = 0; i < 70; ++i) EXPECT_EQ(v[i], double(i));
  fill(DType::F64, v.data(), bitsOf(-0.1), 70);
  EXPECT_EQ(v[69], -0.1);
}

TEST(VectorNewTypes, SupportFollowsTheIsaRules) {
  for (DType t : {DType::I8, DType::I16}) {
    EXPECT_FALSE(supportsUnary(UnaryOp::Exp, t));
    EXPECT_TRUE(supportsUnary(UnaryOp::Not, t));
    EXPECT_TRUE(supportsBinary(BinaryOp::And, t));
    EXPECT_FALSE(supportsMma(t));
  }
  EXPECT_TRUE(supportsUnary(UnaryOp::Erf, DType::F64));
  EXPECT_FALSE(supportsUnary(UnaryOp::Not, DType::F64));
  EXPECT_FALSE(supportsBinary(BinaryOp::Xor, DType::F64));
  EXPECT_FALSE(supportsMma(DType::F64));  // the matrix pipe has no f64 path
  for (DType to : {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8,
                   DType::I8, DType::I16, DType::F64}) {
    EXPECT_TRUE(supportsCast(DType::F64, to));
    EXPECT_TRUE(supportsCast(to, DType::I8));
  }
}

}  // namespace
}  // namespace mimic::exec
