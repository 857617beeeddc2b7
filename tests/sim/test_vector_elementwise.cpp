// Tests of the element-wise functional vector math (sim/exec) against scalar references: unary
// ops (with the ULP accuracy of the transcendental ones), binary ops in array, scalar and in
// place forms, fma, select and compare. Shared helpers: vector_math_test.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/exec/half.h"
#include "sim/exec/vector_math.h"
#include "vector_math_test.h"

namespace mimic::exec::vector_math_test {
namespace {

// ---- References -----------------------------------------------------------------------------

bool isApproximate(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Erf:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
      return true;
    default:
      return false;
  }
}

// The largest error (f32 ULPs against the correctly rounded result) the library may have.
// Measured with 25M inputs per function (half uniform in the useful range, half uniform in bit
// pattern over all finite floats), in both SIMD builds: exp 1-2, log 1, tanh 1, sigmoid 2,
// erf 2, sin 2, cos 2, rsqrt 1. TranscendentalAccuracy prints the values for its own sample.
int64_t ulpBound(UnaryOp op) {
  switch (op) {
    case UnaryOp::Rsqrt:
    case UnaryOp::Log:
    case UnaryOp::Tanh:
      return 1;
    case UnaryOp::Exp:
    case UnaryOp::Sigmoid:
    case UnaryOp::Erf:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
      return 2;
    default:
      return 0;
  }
}

// Exact ops in f32; approximate ones as the correctly rounded (double) value.
float refUnaryF32(UnaryOp op, float x) {
  const double d = x;
  switch (op) {
    case UnaryOp::Neg:
      return -x;
    case UnaryOp::Abs:
      return std::fabs(x);
    case UnaryOp::Exp:
      return static_cast<float>(std::exp(d));
    case UnaryOp::Log:
      return static_cast<float>(std::log(d));
    case UnaryOp::Sqrt:
      return std::sqrt(x);
    case UnaryOp::Rsqrt:
      return static_cast<float>(1.0 / std::sqrt(d));
    case UnaryOp::Tanh:
      return static_cast<float>(std::tanh(d));
    case UnaryOp::Sigmoid:
      return static_cast<float>(1.0 / (1.0 + std::exp(-d)));
    case UnaryOp::Erf:
      return static_cast<float>(std::erf(d));
    case UnaryOp::Sin:
      return static_cast<float>(std::sin(d));
    case UnaryOp::Cos:
      return static_cast<float>(std::cos(d));
    case UnaryOp::Floor:
      return std::floor(x);
    case UnaryOp::Ceil:
      return std::ceil(x);
    case UnaryOp::Round:
      return std::nearbyint(x);
    case UnaryOp::Trunc:
      return std::trunc(x);
    case UnaryOp::Recip:
      return 1.0f / x;
    case UnaryOp::Relu:
      return std::isnan(x) ? x : x > 0 ? x : 0.0f;
    case UnaryOp::Not:
      break;
  }
  return kNaN;
}

uint64_t refUnaryInt(UnaryOp op, DType t, int64_t a) {
  const uint64_t u = static_cast<uint64_t>(a);
  switch (op) {
    case UnaryOp::Neg:
      return encodeInt(t, 0 - u);
    case UnaryOp::Abs:
      return encodeInt(t, a < 0 ? 0 - u : u);
    case UnaryOp::Relu:
      return encodeInt(t, a < 0 ? 0 : u);
    case UnaryOp::Not:
      return t == DType::U8 ? (a == 0 ? 1 : 0) : encodeInt(t, ~u);
    default:
      return encodeInt(t, u);  // Floor, Ceil, Round, Trunc
  }
}

float refBinaryF32(BinaryOp op, float x, float y) {
  switch (op) {
    case BinaryOp::Add:
      return x + y;
    case BinaryOp::Sub:
      return x - y;
    case BinaryOp::Mul:
      return x * y;
    case BinaryOp::Div:
      return x / y;
    case BinaryOp::Max:
      return refMax(x, y);
    case BinaryOp::Min:
      return refMin(x, y);
    case BinaryOp::Pow:
      return std::pow(x, y);
    case BinaryOp::Rem:
      return std::fmod(x, y);
    default:
      return kNaN;
  }
}

uint64_t refPow(DType t, int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? encodeInt(t, (e % 2) ? ~uint64_t{0} : 1) : 0;
  uint64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= static_cast<uint64_t>(base);
  return encodeInt(t, r);
}

uint64_t refBinaryInt(BinaryOp op, DType t, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryOp::Add:
      return encodeInt(t, ua + ub);
    case BinaryOp::Sub:
      return encodeInt(t, ua - ub);
    case BinaryOp::Mul:
      return encodeInt(t, ua * ub);
    case BinaryOp::Div:
      if (b == 0) return 0;
      if (b == -1) return encodeInt(t, 0 - ua);
      return encodeInt(t, static_cast<uint64_t>(a / b));
    case BinaryOp::Rem:
      if (b == 0 || b == -1) return 0;
      return encodeInt(t, static_cast<uint64_t>(a % b));
    case BinaryOp::Max:
      return encodeInt(t, static_cast<uint64_t>(std::max(a, b)));
    case BinaryOp::Min:
      return encodeInt(t, static_cast<uint64_t>(std::min(a, b)));
    case BinaryOp::Pow:
      return refPow(t, a, b);
    case BinaryOp::And:
      return encodeInt(t, ua & ub);
    case BinaryOp::Or:
      return encodeInt(t, ua | ub);
    case BinaryOp::Xor:
      return encodeInt(t, ua ^ ub);
  }
  return 0;
}

template <class V>
bool refCompare(Cond c, V x, V y) {
  switch (c) {
    case Cond::Eq:
      return x == y;
    case Cond::Ne:
      return !(x == y);
    case Cond::Lt:
      return x < y;
    case Cond::Le:
      return x <= y;
    case Cond::Gt:
      return x > y;
    case Cond::Ge:
      return x >= y;
  }
  return false;
}

// ---- Tests ----------------------------------------------------------------------------------

TEST(VectorMath, Unary) {
  std::mt19937_64 rng(2);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(UnaryOp::Not); ++op) {
      const auto u = static_cast<UnaryOp>(op);
      if (!supportsUnary(u, t)) continue;
      for (int64_t n : kLengths) {
        for (bool inPlace : {false, true}) {
          Row src(t, n), dst(t, n, 2);
          fillInputs({&src}, rng);
          const Row in = src;
          Row& out = inPlace ? src : dst;
          unary(u, t, out.data(), src.data(), n);
          Mismatches m(std::string("unary ") + std::to_string(op) + " " + typeName(t) +
                       " n=" + std::to_string(n) + (inPlace ? " in place" : ""));
          for (int64_t i = 0; i < n; ++i) {
            uint64_t want;
            int64_t tol = 0;
            if (isFloatT(t)) {
              want = roundTo(t, refUnaryF32(u, static_cast<float>(in.value(i))));
              // An f32 result within bound ULPs may round to a neighbour in f16/bf16.
              if (isApproximate(u)) tol = t == DType::F32 ? ulpBound(u) : 1;
              m.check(
                  floatMatches(t, out.get(i), want, tol), i,
                  show(t, in.get(i)) + " -> " + show(t, out.get(i)) + ", want " + show(t, want));
            } else {
              want = refUnaryInt(u, t, in.integer(i));
              m.check(
                  out.get(i) == want, i,
                  show(t, in.get(i)) + " -> " + show(t, out.get(i)) + ", want " + show(t, want));
            }
          }
          EXPECT_TRUE(out.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, UnaryEdgeCases) {
  auto one = [](UnaryOp op, float x) {
    float r = 0;
    unary(op, DType::F32, &r, &x, 1);
    return r;
  };
  EXPECT_TRUE(std::signbit(one(UnaryOp::Floor, -0.0f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Trunc, -0.7f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Ceil, -0.7f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Round, -0.5f)));
  EXPECT_EQ(one(UnaryOp::Round, 2.5f), 2.0f);
  EXPECT_EQ(one(UnaryOp::Round, 3.5f), 4.0f);
  EXPECT_EQ(one(UnaryOp::Round, -2.5f), -2.0f);
  EXPECT_EQ(one(UnaryOp::Floor, 8388609.0f), 8388609.0f);
  EXPECT_FALSE(std::signbit(one(UnaryOp::Relu, -0.0f)));
  EXPECT_TRUE(std::isnan(one(UnaryOp::Relu, kNaN)));
  EXPECT_EQ(one(UnaryOp::Exp, -kInf), 0.0f);
  EXPECT_EQ(one(UnaryOp::Exp, kInf), kInf);
  EXPECT_EQ(one(UnaryOp::Exp, 100.0f), kInf);
  EXPECT_EQ(one(UnaryOp::Log, 0.0f), -kInf);
  EXPECT_TRUE(std::isnan(one(UnaryOp::Log, -1.0f)));
  EXPECT_TRUE(std::isnan(one(UnaryOp::Sqrt, -1.0f)));
  EXPECT_EQ(one(UnaryOp::Rsqrt, 0.0f), kInf);
  EXPECT_EQ(one(UnaryOp::Recip, -0.0f), -kInf);
  EXPECT_EQ(one(UnaryOp::Sigmoid, 200.0f), 1.0f);
  EXPECT_GT(one(UnaryOp::Sigmoid, -100.0f), 0.0f);  // e^-100: tiny but representable
  EXPECT_EQ(one(UnaryOp::Sigmoid, -kInf), 0.0f);
  EXPECT_EQ(one(UnaryOp::Tanh, kInf), 1.0f);
  EXPECT_EQ(one(UnaryOp::Erf, -kInf), -1.0f);
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sin, UnaryOp::Erf, UnaryOp::Sigmoid}) {
    EXPECT_TRUE(std::isnan(one(op, kNaN))) << static_cast<int>(op);
  }
  int32_t v[3] = {INT32_MIN, -5, 0}, r[3];
  unary(UnaryOp::Abs, DType::I32, r, v, 3);
  EXPECT_EQ(r[0], INT32_MIN);
  EXPECT_EQ(r[1], 5);
  unary(UnaryOp::Neg, DType::I32, r, v, 3);
  EXPECT_EQ(r[0], INT32_MIN);
  uint8_t b[3] = {0, 1, 7}, nb[3];
  unary(UnaryOp::Not, DType::U8, nb, b, 3);
  EXPECT_EQ(nb[0], 1);
  EXPECT_EQ(nb[1], 0);
  EXPECT_EQ(nb[2], 0);
}

// The ULP errors of the approximated functions over their useful f32 domains.
TEST(VectorMath, TranscendentalAccuracy) {
  struct Case {
    UnaryOp op;
    const char* name;
    float lo, hi;
  };
  const Case cases[] = {
      {UnaryOp::Exp, "exp", -103.0f, 88.8f},      {UnaryOp::Log, "log", 0.0f, 3.4e38f},
      {UnaryOp::Tanh, "tanh", -20.0f, 20.0f},     {UnaryOp::Sigmoid, "sigmoid", -105.0f, 30.0f},
      {UnaryOp::Erf, "erf", -6.0f, 6.0f},         {UnaryOp::Sin, "sin", -10000.0f, 10000.0f},
      {UnaryOp::Cos, "cos", -10000.0f, 10000.0f}, {UnaryOp::Rsqrt, "rsqrt", 0.0f, 3.4e38f},
  };
  std::mt19937_64 rng(3);
  for (const Case& c : cases) {
    // Half the inputs uniform in the interesting range, half uniform in bit pattern over all
    // finite floats (every magnitude, subnormals included).
    const int64_t n = 400000;
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      if (i % 2) {
        x[i] = std::uniform_real_distribution<float>(c.lo, c.hi)(rng);
      } else {
        do {
          x[i] = bitsToFloat(static_cast<uint32_t>(rng()));
        } while (!std::isfinite(x[i]));
      }
    }
    unary(c.op, DType::F32, y.data(), x.data(), n);
    int64_t worst = 0;
    float worstX = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t d =
          ulpDistance(DType::F32, floatToBits(y[i]), floatToBits(refUnaryF32(c.op, x[i])));
      if (d > worst) {
        worst = d;
        worstX = x[i];
      }
    }
    std::printf("max error %-8s %lld ULP (at %.9g)\n", c.name, static_cast<long long>(worst),
                worstX);
    RecordProperty(std::string("ulp_") + c.name, static_cast<int>(worst));
    EXPECT_LE(worst, ulpBound(c.op)) << c.name << " at " << worstX;
  }
}

TEST(VectorMath, Binary) {
  std::mt19937_64 rng(4);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
      const auto b = static_cast<BinaryOp>(op);
      if (!supportsBinary(b, t)) continue;
      for (int64_t n : kLengths) {
        for (int mode = 0; mode < 3; ++mode) {  // array, scalar, in place (dst == a)
          Row x(t, n), y(t, n, 3), dst(t, n, 2);
          fillInputs({&x, &y}, rng);
          if (b == BinaryOp::Pow && !isFloatT(t)) {  // exponents the reference can loop over
            for (int64_t i = 0; i < n; ++i) {
              y.set(i, encodeInt(t, static_cast<uint64_t>(static_cast<int64_t>(rng() % 70) - 5)));
            }
          }
          uint64_t scalar = y.size() > 0 ? y.get(0) : 0;
          if (mode == 1) {
            for (int64_t i = 0; i < n; ++i) y.set(i, scalar);
            scalar |= typeSize(t) < 8 ? 0xABCD000000000000ull : 0;  // high bits are ignored
          }
          const Row in = x;
          Row& out = mode == 2 ? x : dst;
          if (mode == 1) {
            binaryScalar(b, t, out.data(), x.data(), scalar, n);
          } else {
            binary(b, t, out.data(), x.data(), y.data(), n);
          }
          Mismatches m(std::string("binary ") + std::to_string(op) + " " + typeName(t) +
                       " n=" + std::to_string(n) + " mode " + std::to_string(mode));
          for (int64_t i = 0; i < n; ++i) {
            const uint64_t want = isFloatT(t)
                                      ? roundTo(t, refBinaryF32(b, static_cast<float>(in.value(i)),
                                                                static_cast<float>(y.value(i))))
                                      : refBinaryInt(b, t, in.integer(i), y.integer(i));
            const bool ok = isFloatT(t) ? floatMatches(t, out.get(i), want) : out.get(i) == want;
            m.check(ok, i,
                    show(t, in.get(i)) + " op " + show(t, y.get(i)) + " -> " + show(t, out.get(i)) +
                        ", want " + show(t, want));
          }
          EXPECT_TRUE(out.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, BinaryEdgeCases) {
  auto f = [](BinaryOp op, float x, float y) {
    float r = 0;
    binary(op, DType::F32, &r, &x, &y, 1);
    return r;
  };
  EXPECT_TRUE(std::isnan(f(BinaryOp::Max, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(f(BinaryOp::Max, 1.0f, kNaN)));
  EXPECT_TRUE(std::isnan(f(BinaryOp::Min, 1.0f, kNaN)));
  EXPECT_FALSE(std::signbit(f(BinaryOp::Max, -0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(f(BinaryOp::Max, 0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(f(BinaryOp::Min, 0.0f, -0.0f)));
  EXPECT_EQ(f(BinaryOp::Pow, 0.0f, 0.0f), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, kNaN, 0.0f), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, 1.0f, kNaN), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, -2.0f, 3.0f), -8.0f);
  EXPECT_EQ(f(BinaryOp::Pow, 0.0f, -1.0f), kInf);
  EXPECT_TRUE(std::isnan(f(BinaryOp::Pow, -2.0f, 0.5f)));
  EXPECT_EQ(f(BinaryOp::Rem, -7.0f, 2.0f), -1.0f);
  EXPECT_EQ(f(BinaryOp::Rem, 7.0f, -2.0f), 1.0f);
  EXPECT_TRUE(std::isnan(f(BinaryOp::Rem, 1.0f, 0.0f)));
  EXPECT_EQ(f(BinaryOp::Div, 1.0f, -0.0f), -kInf);

  auto i32 = [](BinaryOp op, int32_t x, int32_t y) {
    int32_t r = 0;
    binary(op, DType::I32, &r, &x, &y, 1);
    return r;
  };
  EXPECT_EQ(i32(BinaryOp::Div, INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Rem, INT32_MIN, -1), 0);
  EXPECT_EQ(i32(BinaryOp::Div, 7, 0), 0);
  EXPECT_EQ(i32(BinaryOp::Rem, 7, 0), 0);
  EXPECT_EQ(i32(BinaryOp::Div, -7, 2), -3);
  EXPECT_EQ(i32(BinaryOp::Rem, -7, 2), -1);
  EXPECT_EQ(i32(BinaryOp::Add, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Mul, 65536, 65536), 0);
  EXPECT_EQ(i32(BinaryOp::Pow, 2, 31), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Pow, 2, -1), 0);
  EXPECT_EQ(i32(BinaryOp::Pow, -1, -3), -1);
  EXPECT_EQ(i32(BinaryOp::Pow, -1, INT32_MAX), -1);
  EXPECT_EQ(i32(BinaryOp::Pow, 0, 0), 1);
  int64_t a = INT64_MIN, b = -1, r = 0;
  binary(BinaryOp::Div, DType::I64, &r, &a, &b, 1);
  EXPECT_EQ(r, INT64_MIN);
  a = 3;
  b = INT64_MAX;  // 3^(2^63-1) mod 2^64 by squaring, checked against 3^-1 mod 2^64 identities
  binary(BinaryOp::Pow, DType::I64, &r, &a, &b, 1);
  EXPECT_EQ(static_cast<uint64_t>(r) * 3u, 1u);  // 3^(2^63) = 1 mod 2^64, so r = 3^-1
  uint8_t u = 200, v = 100, w = 0;
  binary(BinaryOp::Add, DType::U8, &w, &u, &v, 1);
  EXPECT_EQ(w, 44);
  binary(BinaryOp::Sub, DType::U8, &w, &v, &u, 1);
  EXPECT_EQ(w, 156);
}

TEST(VectorMath, Fma) {
  std::mt19937_64 rng(5);
  for (DType t : kTypes) {
    for (int64_t n : kLengths) {
      Row a(t, n), b(t, n, 2), c(t, n, 3), dst(t, n, 0);
      fillInputs({&a, &b, &c}, rng);
      fma(t, dst.data(), a.data(), b.data(), c.data(), n);
      Mismatches m(std::string("fma ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) {
        uint64_t want;
        if (isFloatT(t)) {
          want = roundTo(t, std::fma(static_cast<float>(a.value(i)), static_cast<float>(b.value(i)),
                                     static_cast<float>(c.value(i))));
        } else {
          want = encodeInt(
              t, static_cast<uint64_t>(a.integer(i)) * static_cast<uint64_t>(b.integer(i)) +
                     static_cast<uint64_t>(c.integer(i)));
        }
        const bool ok = isFloatT(t) ? floatMatches(t, dst.get(i), want) : dst.get(i) == want;
        m.check(ok, i, show(t, dst.get(i)) + ", want " + show(t, want));
      }
      EXPECT_TRUE(dst.guardsIntact());
    }
  }
  // One rounding: (1 + 2^-12)^2 - 1 keeps the 2^-24 term that a rounded product loses.
  const float x = 1.0f + 0x1p-12f, z = -1.0f;
  float r = 0;
  fma(DType::F32, &r, &x, &x, &z, 1);
  EXPECT_EQ(r, 0x1p-11f + 0x1p-24f);
}

TEST(VectorMath, Select) {
  std::mt19937_64 rng(6);
  for (DType t : kTypes) {
    for (int64_t n : kLengths) {
      Row a(t, n), b(t, n, 2), dst(t, n, 3), mask(DType::U8, n, 5);
      fillInputs({&a, &b}, rng);
      const uint8_t maskValues[] = {0, 1, 2, 255, 0, 0, 1};
      for (int64_t i = 0; i < n; ++i) mask.set(i, maskValues[rng() % 7]);
      select(t, dst.data(), static_cast<const uint8_t*>(mask.data()), a.data(), b.data(), n);
      Mismatches m(std::string("select ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) {
        m.check(dst.get(i) == (mask.get(i) ? a.get(i) : b.get(i)), i, hex(dst.get(i)));
      }
      EXPECT_TRUE(dst.guardsIntact());
    }
  }
}

TEST(VectorMath, Compare) {
  std::mt19937_64 rng(7);
  for (DType t : kTypes) {
    for (int c = 0; c <= static_cast<int>(Cond::Ge); ++c) {
      const auto cond = static_cast<Cond>(c);
      for (int64_t n : kLengths) {
        for (bool scalarMode : {false, true}) {
          Row a(t, n), b(t, n, 2), dst(DType::U8, n, 3);
          fillInputs({&a, &b}, rng);
          // Equal elements, so that Eq/Le/Ge are exercised on more than specials.
          for (int64_t i = 0; i < n; i += 3) b.set(i, a.get(i));
          uint64_t scalar = n > 0 ? a.get(n / 2) : 0;
          if (scalarMode) {
            for (int64_t i = 0; i < n; ++i) b.set(i, scalar);
            scalar |= typeSize(t) < 8 ? 0x5A5A000000000000ull : 0;
            compareScalar(cond, t, static_cast<uint8_t*>(dst.data()), a.data(), scalar, n);
          } else {
            compare(cond, t, static_cast<uint8_t*>(dst.data()), a.data(), b.data(), n);
          }
          Mismatches m(std::string("compare ") + std::to_string(c) + " " + typeName(t) +
                       " n=" + std::to_string(n) + (scalarMode ? " scalar" : ""));
          for (int64_t i = 0; i < n; ++i) {
            const bool want = isFloatT(t) ? refCompare(cond, a.value(i), b.value(i))
                                          : refCompare(cond, a.integer(i), b.integer(i));
            m.check(dst.get(i) == (want ? 1u : 0u), i,
                    show(t, a.get(i)) + " vs " + show(t, b.get(i)) + " -> " +
                        std::to_string(dst.get(i)));
          }
          EXPECT_TRUE(dst.guardsIntact());
        }
      }
    }
  }
}

}  // namespace
}  // namespace mimic::exec::vector_math_test
