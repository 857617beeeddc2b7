// gemm (torch_backend/ops/gemm.h) against a host reference: transposed and broadcast operands,
// strided C, edge tiles, alpha and beta, K == 0, every dtype, errors; and a throughput figure.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>

#include "strided_host.h"
#include "torch_backend/ops/gemm.h"

namespace {

using namespace stridedtest;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Element [b][r][c] of a 3-D view.
double& elem(Strided& s, int64_t b, int64_t r, int64_t c) {
  return s.storage[s.base + b * s.strides[0] + r * s.strides[1] + c * s.strides[2]];
}

// Strides of a [batch, rows, cols] view: row-major, or column-major within each batch entry
// (a transposed matrix); batch stride 0 broadcasts one matrix.
std::vector<int64_t> layout(int64_t rows, int64_t cols, bool transposed, bool broadcast) {
  return {broadcast ? 0 : rows * cols, transposed ? 1 : cols, transposed ? rows : 1};
}

struct GemmCase {
  DType type = DType::F32;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  bool aT = false, bT = false, aBroadcast = false, bBroadcast = false, cT = false;
  double alpha = 1, beta = 0;
};

// Runs gemm on random data and checks every element of C against a double-precision reference.
void expectGemm(const GemmCase& g, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(mimic::isa::dtypeName(g.type)) + " b" + std::to_string(g.batch) + " m" +
               std::to_string(g.m) + " n" + std::to_string(g.n) + " k" + std::to_string(g.k) +
               (g.aT ? " aT" : "") + (g.bT ? " bT" : "") + (g.cT ? " cT" : "") + " alpha " +
               std::to_string(g.alpha) + " beta " + std::to_string(g.beta));
  std::mt19937 rng(seed);
  Strided a(g.type, {g.batch, g.m, g.k}, layout(g.m, g.k, g.aT, g.aBroadcast));
  Strided b(g.type, {g.batch, g.k, g.n}, layout(g.k, g.n, g.bT, g.bBroadcast));
  Strided c(g.type, {g.batch, g.m, g.n}, layout(g.m, g.n, g.cT, false));
  fillRandom(a, rng, -1, 1);
  fillRandom(b, rng, -1, 1);
  fillRandom(c, rng, -1, 1);
  if (g.beta == 0 && !c.storage.empty()) c.storage[0] = kNaN;  // must be ignored
  const std::vector<double> old = c.storage;
  a.upload();
  b.upload();
  c.upload();
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), g.alpha, g.beta);
  c.download();
  const double eps = g.type == DType::F32 ? 1.2e-7 : g.type == DType::F16 ? 1e-3 : 8e-3;
  for (int64_t bi = 0; bi < g.batch; ++bi) {
    for (int64_t i = 0; i < g.m; ++i) {
      for (int64_t j = 0; j < g.n; ++j) {
        double dot = 0, mag = 0;
        for (int64_t p = 0; p < g.k; ++p) {
          const double x = elem(a, bi, i, p) * elem(b, bi, p, j);
          dot += x;
          mag += std::fabs(x);
        }
        const int64_t at = c.base + bi * c.strides[0] + i * c.strides[1] + j * c.strides[2];
        const double before = g.beta == 0 ? 0 : g.beta * old[at];
        const double expected = g.alpha * dot + before;
        const double bound = 1e-6 * (std::fabs(g.alpha) * mag + std::fabs(before)) +
                             eps * std::fabs(expected) + 1e-30;
        ASSERT_NEAR(elem(c, bi, i, j), expected, bound)
            << "C[" << bi << "][" << i << "][" << j << "]";
      }
    }
  }
}

class GemmTest : public OpsTest {};

TEST_F(GemmTest, EdgeTilesInEveryDimension) {
  // Tiles on the tiny preset are 64 x 64 x 32 for f32: sizes around and across them.
  for (int64_t m : {1, 7, 64, 65, 130}) {
    for (int64_t n : {1, 33, 64, 129}) {
      for (int64_t k : {1, 31, 32, 100}) expectGemm({DType::F32, 1, m, n, k});
    }
  }
  // Skinny products: the long side gets tiles beyond 128.
  expectGemm({DType::F32, 2, 700, 3, 20});
  expectGemm({DType::F32, 1, 2, 1500, 9});
  expectGemm({DType::BF16, 1, 1, 3000, 40, false, true});
}

TEST_F(GemmTest, TransposedOperandsAndOutput) {
  for (bool aT : {false, true}) {
    for (bool bT : {false, true}) {
      for (bool cT : {false, true}) {
        GemmCase g{DType::F32, 2, 70, 45, 77};
        g.aT = aT;
        g.bT = bT;
        g.cT = cT;
        expectGemm(g);
      }
    }
  }
}

TEST_F(GemmTest, BroadcastBatch) {
  GemmCase g{DType::F32, 3, 20, 30, 40};
  g.bBroadcast = true;  // bmm with one weight matrix
  expectGemm(g);
  g.bBroadcast = false;
  g.aBroadcast = true;
  g.aT = true;
  expectGemm(g);
}

TEST_F(GemmTest, AlphaBetaAndEmptyK) {
  expectGemm({DType::F32, 1, 40, 50, 60, false, false, false, false, false, 0.5, 2.0});
  expectGemm({DType::F32, 2, 40, 50, 60, true, false, false, false, false, -1.0, 1.0});
  expectGemm({DType::F32, 1, 40, 50, 60, false, false, false, false, false, 3.0, 0.0});
  expectGemm({DType::F32, 2, 9, 11, 0, false, false, false, false, false, 1.0, 0.5});  // beta*C
  expectGemm({DType::F32, 1, 9, 11, 0, false, false, false, false, false, 1.0, 0.0});  // zeros
  expectGemm({DType::F16, 1, 9, 11, 0, false, false, false, false, false, 1.0, -2.0});
}

TEST_F(GemmTest, HalfTypes) {
  for (DType t : {DType::F16, DType::BF16}) {
    expectGemm({t, 1, 100, 90, 150});
    expectGemm({t, 2, 33, 65, 70, true, true, false, false, false, 0.5, 0.25});
    expectGemm({t, 3, 1, 130, 5, false, true, false, true, true, 1.0, 1.0});
  }
}

// C = alpha * A @ B + beta * bias, the bias read in the epilogue from a view that broadcasts
// (strides 0): a linear layer's bias [N] along rows, a column [M], or a whole matrix.
void expectBiasGemm(DType type, int64_t batch, int64_t m, int64_t n, int64_t k,
                    std::vector<int64_t> biasStrides, bool transposed, double alpha, double beta) {
  SCOPED_TRACE(std::string(mimic::isa::dtypeName(type)) + " bias strides [" +
               std::to_string(biasStrides[0]) + ", " + std::to_string(biasStrides[1]) + ", " +
               std::to_string(biasStrides[2]) + "]" + (transposed ? " transposed" : ""));
  std::mt19937 rng(7);
  Strided a(type, {batch, m, k}, layout(m, k, transposed, false));
  Strided b(type, {batch, k, n}, layout(k, n, transposed, false));
  Strided c(type, {batch, m, n});
  Strided bias(type, {batch, m, n}, biasStrides);
  fillRandom(a, rng, -1, 1);
  fillRandom(b, rng, -1, 1);
  fillRandom(bias, rng, -1, 1);
  for (double& v : c.storage) v = kNaN;  // C's old contents are ignored
  for (Strided* s : {&a, &b, &c, &bias}) s->upload();
  const mimic::ops::TensorView biasView = bias.view();
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), alpha, beta, &biasView);
  c.download();
  const double unit = type == DType::F32 ? 0x1p-24 : type == DType::F16 ? 0x1p-11 : 0x1p-8;
  for (int64_t bi = 0; bi < batch; ++bi) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double dot = 0, mag = 0;
        for (int64_t p = 0; p < k; ++p) {
          dot += elem(a, bi, i, p) * elem(b, bi, p, j);
          mag += std::fabs(elem(a, bi, i, p) * elem(b, bi, p, j));
        }
        const double added = beta * elem(bias, bi, i, j), expected = alpha * dot + added;
        const double bound = (k + 4) * 0x1p-24 * (std::fabs(alpha) * mag + std::fabs(added)) +
                             unit * std::fabs(expected);
        ASSERT_NEAR(elem(c, bi, i, j), expected, bound)
            << "C[" << bi << "][" << i << "][" << j << "]";
      }
    }
  }
}

TEST_F(GemmTest, BiasEpilogue) {
  expectBiasGemm(DType::F32, 1, 70, 45, 33, {0, 0, 1}, false, 1.0, 1.0);     // linear's bias [N]
  expectBiasGemm(DType::F32, 2, 30, 20, 10, {0, 1, 0}, false, 2.0, 0.5);     // a column [M]
  expectBiasGemm(DType::F32, 2, 30, 20, 10, {600, 20, 1}, true, -1.0, 1.0);  // C^T = B^T A^T
  expectBiasGemm(DType::BF16, 1, 65, 130, 40, {0, 0, 1}, false, 1.0, 1.0);
  expectBiasGemm(DType::F16, 3, 9, 11, 0, {0, 0, 1}, false, 1.0, 2.0);  // K == 0: beta * bias
}

TEST_F(GemmTest, EmptyOutputsLaunchNothing) {
  expectGemm({DType::F32, 0, 4, 5, 6});
  expectGemm({DType::F32, 2, 0, 5, 6});
  expectGemm({DType::F32, 2, 4, 0, 6});
}

TEST_F(GemmTest, BadArgumentsThrowInvalidArgument) {
  Strided a(DType::F32, {1, 4, 5}), b(DType::F32, {1, 5, 6}), c(DType::F32, {1, 4, 6});
  Strided wrongK(DType::F32, {1, 6, 6}), wrongBatch(DType::F32, {2, 5, 6});
  Strided half(DType::F16, {1, 5, 6}), ints(DType::I32, {1, 4, 6}), flat(DType::F32, {4, 6});
  auto call = [](const Strided& c, const Strided& a, const Strided& b) {
    mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0);
  };
  EXPECT_THROW(call(c, a, wrongK), std::invalid_argument);
  EXPECT_THROW(call(c, a, wrongBatch), std::invalid_argument);
  EXPECT_THROW(call(c, a, half), std::invalid_argument);
  EXPECT_THROW(call(ints, a, b), std::invalid_argument);
  EXPECT_THROW(call(flat, a, b), std::invalid_argument);
  Strided i32a(DType::I32, {1, 4, 5}), i32b(DType::I32, {1, 5, 6});
  EXPECT_THROW(call(ints, i32a, i32b), std::invalid_argument);
}

// Wall time of one gemm call (kernel already built) and its simulated milliseconds.
struct Timing {
  double seconds;
  float simMs;
};

Timing timeGemm(const Strided& c, const Strided& a, const Strided& b) {
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0);  // builds and loads the kernel
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  mimicEvent start = newEvent(), stop = newEvent();
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(mimicEventRecord(start, nullptr), MIMIC_SUCCESS);
  mimic::ops::gemm({}, c.view(), a.view(), b.view(), 1.0, 0.0);
  EXPECT_EQ(mimicEventRecord(stop, nullptr), MIMIC_SUCCESS);
  EXPECT_EQ(mimicEventSynchronize(stop), MIMIC_SUCCESS);
  Timing t{std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0};
  EXPECT_EQ(mimicEventElapsedTime(&t.simMs, start, stop), MIMIC_SUCCESS);
  mimicEventDestroy(start);
  mimicEventDestroy(stop);
  return t;
}

// Not a pass/fail check of speed: prints how the interpreter's GEMM compares with a plain host
// loop, for row-major and transposed operands, and the simulated rate.
TEST_F(GemmTest, Throughput512) {
  constexpr int64_t n = 512;
  constexpr double flop = 2.0 * n * n * n;
  std::mt19937 rng(3);
  Strided a(DType::F32, {1, n, n}), b(DType::F32, {1, n, n}), c(DType::F32, {1, n, n});
  fillRandom(a, rng, -1, 1);
  fillRandom(b, rng, -1, 1);
  a.upload();
  b.upload();
  const Timing nn = timeGemm(c, a, b);
  c.download();

  std::vector<float> fa(a.storage.begin(), a.storage.end());
  std::vector<float> fb(b.storage.begin(), b.storage.end()), fc(n * n, 0.0f);
  const auto h0 = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t p = 0; p < n; ++p) {
      const float x = fa[i * n + p];
      for (int64_t j = 0; j < n; ++j) fc[i * n + j] += x * fb[p * n + j];
    }
  }
  const double host = std::chrono::duration<double>(std::chrono::steady_clock::now() - h0).count();
  for (int64_t i = 0; i < n * n; i += 997) ASSERT_NEAR(c.storage[i], fc[i], 1e-3);
  std::printf("gemm 512^3 f32: plain host loop %.1f ms (%.1f GFLOP/s)\n", host * 1e3,
              flop / host * 1e-9);
  auto print = [&](const char* name, const Timing& t) {
    std::printf(
        "gemm 512^3 %s: interpreter %.1f ms (%.1f GFLOP/s), simulated %.3f ms "
        "(%.0f GFLOP/s on tiny)\n",
        name, t.seconds * 1e3, flop / t.seconds * 1e-9, t.simMs, flop / (t.simMs * 1e-3) * 1e-9);
  };
  print("f32 A @ B", nn);
  Strided bT(DType::F32, {1, n, n}, {0, 1, n}), aT(DType::F32, {1, n, n}, {0, 1, n});
  print("f32 A @ B^T", timeGemm(c, a, bT));
  print("f32 A^T @ B", timeGemm(c, aT, b));
  Strided ha(DType::BF16, {1, n, n}), hb(DType::BF16, {1, n, n}), hc(DType::BF16, {1, n, n});
  print("bf16 A @ B", timeGemm(hc, ha, hb));
}

}  // namespace
