// Tests of the accumulating functional math (sim/exec): reductions (with the documented 16-way
// f32 summation) and the matrix multiply-accumulate. Shared helpers: vector_math_test.h.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "sim/exec/half.h"
#include "sim/exec/matrix_kernels.h"
#include "sim/exec/vector_math.h"
#include "vector_math_test.h"

namespace mimic::exec::vector_math_test {
namespace {

// ---- References -----------------------------------------------------------------------------

// The library's documented f32 summation: 16 interleaved partial sums, combined pairwise.
float refSum16(const std::vector<float>& x) {
  if (x.empty()) return 0.0f;
  float p[16];
  std::fill(p, p + 16, -0.0f);
  for (size_t i = 0; i < x.size(); ++i) p[i % 16] += x[i];
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) p[j] += p[j + w];
  }
  return p[0];
}

// ---- Reductions -----------------------------------------------------------------------------

TEST(VectorMath, Reduce) {
  std::mt19937_64 rng(9);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(ReduceOp::ArgMin); ++op) {
      const auto r = static_cast<ReduceOp>(op);
      const bool arg = r == ReduceOp::ArgMax || r == ReduceOp::ArgMin;
      for (int64_t n : kLengths) {
        for (int data = 0; data < 3; ++data) {  // with specials, random only, many ties
          Row src(t, n);
          fillInputs({&src}, rng, 100.0f, data == 0);
          if (data == 2) {
            for (int64_t i = 0; i < n; ++i) {
              const int64_t v = static_cast<int64_t>(rng() % 5);
              src.set(i, isFloatT(t) ? encodeFloat(t, static_cast<float>(v))
                                     : encodeInt(t, static_cast<uint64_t>(v)));
            }
          }
          Row dst(arg ? DType::I64 : t, 1, 1);
          reduce(r, t, dst.data(), src.data(), n);
          uint64_t want;
          if (arg) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; ++i) {
              if (isFloatT(t)) {
                const long double v = src.value(i);
                if (best >= 0 && std::isnan(src.value(best))) break;
                if (best < 0 || std::isnan(v) ||
                    (r == ReduceOp::ArgMax ? v > src.value(best) : v < src.value(best))) {
                  best = i;
                }
              } else {
                const int64_t v = src.integer(i);
                if (best < 0 ||
                    (r == ReduceOp::ArgMax ? v > src.integer(best) : v < src.integer(best))) {
                  best = i;
                }
              }
            }
            want = static_cast<uint64_t>(best);
          } else if (isFloatT(t)) {
            std::vector<float> x(n);
            for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(src.value(i));
            float v;
            if (r == ReduceOp::Sum) {
              v = refSum16(x);
            } else {
              v = r == ReduceOp::Max ? -kInf : kInf;
              for (float e : x) v = r == ReduceOp::Max ? refMax(v, e) : refMin(v, e);
            }
            want = roundTo(t, v);
          } else {
            uint64_t v = r == ReduceOp::Sum   ? 0
                         : r == ReduceOp::Max ? static_cast<uint64_t>(minOf(t))
                                              : static_cast<uint64_t>(maxOf(t));
            for (int64_t i = 0; i < n; ++i) {
              const int64_t e = src.integer(i);
              if (r == ReduceOp::Sum) v += static_cast<uint64_t>(e);
              if (r == ReduceOp::Max) v = static_cast<uint64_t>(std::max(decodeInt(t, v), e));
              if (r == ReduceOp::Min) v = static_cast<uint64_t>(std::min(decodeInt(t, v), e));
              v = encodeInt(t, v);
            }
            want = encodeInt(t, v);
          }
          const DType rt = arg ? DType::I64 : t;
          const bool ok = isFloatT(rt) ? floatMatches(rt, dst.get(0), want) : dst.get(0) == want;
          EXPECT_TRUE(ok) << "reduce " << op << " " << typeName(t) << " n=" << n << " data " << data
                          << ": " << show(rt, dst.get(0)) << ", want " << show(rt, want);
          EXPECT_TRUE(dst.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, ReduceEdgeCases) {
  // Sum accuracy: the 16-way partial sums stay close to the exact sum.
  std::vector<float> x(100000);
  std::mt19937_64 rng(10);
  long double exact = 0;
  for (float& v : x) {
    v = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
    exact += v;
  }
  float s = 0;
  reduce(ReduceOp::Sum, DType::F32, &s, x.data(), static_cast<int64_t>(x.size()));
  EXPECT_NEAR(s, static_cast<double>(exact), 1e-5 * static_cast<double>(exact));

  const float ties[] = {-0.0f, 0.0f, -1.0f, 0.0f};
  int64_t idx = 7;
  reduce(ReduceOp::ArgMax, DType::F32, &idx, ties, 4);
  EXPECT_EQ(idx, 0);  // -0 == +0: the first of the tied maxima
  const float withNaN[] = {1.0f, 5.0f, kNaN, 9.0f, kNaN};
  reduce(ReduceOp::ArgMin, DType::F32, &idx, withNaN, 5);
  EXPECT_EQ(idx, 2);
  reduce(ReduceOp::ArgMax, DType::F32, &idx, withNaN, 0);
  EXPECT_EQ(idx, -1);
  float m = 0;
  reduce(ReduceOp::Max, DType::F32, &m, withNaN, 5);
  EXPECT_TRUE(std::isnan(m));
  reduce(ReduceOp::Max, DType::F32, &m, withNaN, 0);
  EXPECT_EQ(m, -kInf);
  const uint8_t bytes[] = {200, 100, 7};
  uint8_t sum8 = 0;
  reduce(ReduceOp::Sum, DType::U8, &sum8, bytes, 3);
  EXPECT_EQ(sum8, 51);  // 307 mod 256
  // f16 sums accumulate in f32: 4096 + 1 + 1 + ... would stall at 2048 in f16 arithmetic.
  std::vector<uint16_t> h(3000, f32ToF16(1.0f));
  uint16_t hs = 0;
  reduce(ReduceOp::Sum, DType::F16, &hs, h.data(), 3000);
  EXPECT_EQ(f16ToF32(hs), 3000.0f);
}

// ---- Matrix multiply ------------------------------------------------------------------------

// Whether the build's multiply-adds are fused (the library documents: with hardware FMA).
bool fusedBuild() {
  return std::string(simdArchName()).find("fma") != std::string::npos;
}

// Runs `multiply` on C's elements [1, 1 + m * n) of a buffer with guards on both sides and
// checks every bit against the ordered reference: each element adds its k products in order of
// k to its old value.
template <class Multiply>
void checkMma(DType t, int m, int n, int k, std::mt19937_64& rng, const std::string& kernel,
              Multiply multiply) {
  Row a(t, int64_t{m} * k), b(t, int64_t{k} * n, 3);
  fillInputs({&a}, rng, 4.0f, false);
  fillInputs({&b}, rng, 4.0f, false);
  std::vector<float> c(static_cast<size_t>(m) * n + 1 + 32);
  for (float& v : c) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  std::vector<float> want(c);
  const bool fused = fusedBuild();
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = want[1 + i * n + j];
      for (int p = 0; p < k; ++p) {
        const float x = static_cast<float>(a.value(int64_t{i} * k + p));
        const float y = static_cast<float>(b.value(int64_t{p} * n + j));
        if (fused) {
          acc = std::fma(x, y, acc);
        } else {
          const float prod = x * y;
          acc = acc + prod;
        }
      }
      want[1 + i * n + j] = acc;
    }
  }
  multiply(c.data() + 1, a.data(), b.data());  // c + 1: not SIMD aligned
  Mismatches mm(kernel + " mma " + typeName(t) + " " + std::to_string(m) + "x" + std::to_string(n) +
                "x" + std::to_string(k));
  for (size_t i = 0; i < c.size(); ++i) {
    mm.check(floatToBits(c[i]) == floatToBits(want[i]), static_cast<int64_t>(i),
             std::to_string(c[i]) + ", want " + std::to_string(want[i]));
  }
}

TEST(Matrix, MmaMatchesOrderedReference) {
  std::mt19937_64 rng(13);
  const int shapes[][3] = {{1, 1, 1},    {1, 17, 3},  {7, 9, 5},    {6, 16, 256}, {13, 37, 300},
                           {64, 64, 64}, {5, 3, 600}, {33, 100, 7}, {2, 1, 513}};
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (const auto& s : shapes) {
      const int m = s[0], n = s[1], k = s[2];
      checkMma(t, m, n, k, rng, "best",
               [&](float* c, const void* a, const void* b) { mma(t, c, a, b, m, n, k); });
    }
  }
  // k == 0 and empty shapes leave C alone.
  float c = 2.0f;
  mma(DType::F32, &c, nullptr, nullptr, 1, 1, 0);
  EXPECT_EQ(c, 2.0f);
}

// Every kernel mma may choose gives the reference's bits, so results do not depend on the host's
// instruction set. The shapes cover each kernel's edges: rows and columns short of a micro-tile,
// k across blocks, and B wide enough to be packed.
class MmaKernelTest : public ::testing::TestWithParam<MmaKernel> {};

TEST_P(MmaKernelTest, MatchesOrderedReference) {
  const MmaKernel kernel = GetParam();
  const std::string name = mmaKernelName(kernel);
  if (!mmaKernelAvailable(kernel)) {
    GTEST_SKIP() << "the " << name << " kernel needs AVX-512F on the host and a fused build ("
                 << simdArchName() << ")";
  }
  std::mt19937_64 rng(15);
  const int shapes[][3] = {{1, 1, 1},      {8, 32, 128},  {7, 31, 129}, {9, 33, 257},
                           {16, 17, 1},    {64, 64, 64},  {3, 300, 40}, {17, 256, 130},
                           {12, 513, 200}, {40, 16, 700}, {1, 1000, 3}, {100, 5, 9}};
  for (const auto& s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    checkMma(DType::F32, m, n, k, rng, name, [&](float* c, const void* a, const void* b) {
      mmaF32(kernel, c, static_cast<const float*>(a), static_cast<const float*>(b), m, n, k);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Matrix, MmaKernelTest,
                         ::testing::Values(MmaKernel::Simd, MmaKernel::Avx512),
                         [](const auto& info) { return std::string(mmaKernelName(info.param)); });

TEST(Matrix, Mma256IsFast) {
  const int s = 256;
  std::vector<float> a(s * s), b(s * s), c(s * s, 0.0f);
  std::mt19937_64 rng(14);
  for (float& v : a) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  for (float& v : b) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  double best = 1e9;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    mma(DType::F32, c.data(), a.data(), b.data(), s, s, s);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
  }
  const double gflops = 2.0 * s * s * s / (best * 1e6);
  std::printf("mma f32 256x256x256: %.3f ms, %.1f GFLOP/s (%s, %s kernel)\n", best, gflops,
              simdArchName(), mmaKernelName(bestMmaKernel()));
  RecordProperty("mma256_gflops", static_cast<int>(gflops));
#ifdef NDEBUG
  EXPECT_LT(best, 10.0);
#endif
}

}  // namespace
}  // namespace mimic::exec::vector_math_test
