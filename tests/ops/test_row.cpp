// The row ops (torch_backend/ops/row.h) against double-precision host references: softmax and
// log_softmax with their backward, layer norm with its backward; whole rows and long rows (the
// chunked passes: on the tiny preset a row of a few thousand f32 elements no longer fits),
// strided and transposed views, every float dtype, and errors. Bounds come from the error of
// f32 arithmetic: a sum of n terms is off by at most about n units of roundoff of the sum of
// their magnitudes, and each output is rounded once to its dtype.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "reduce_test.h"
#include "strided_host.h"
#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/ops/row.h"

namespace {

using namespace stridedtest;
using reducetest::DeviceWorkspace;

constexpr double kU32 = 0x1p-24;

double unitOf(DType t) {
  return t == DType::F32 ? kU32 : t == DType::F16 ? 0x1p-11 : 0x1p-8;
}

// Half the spacing of t's subnormals: the absolute error of rounding a tiny value to t.
double tinyOf(DType t) {
  return t == DType::F16 ? 0x1p-25 : 0x1p-134;
}

// Element [g][c][n] of a 3-D view, [g][c] of a 2-D one, [n] of a 1-D one.
double& at3(Strided& s, int64_t g, int64_t c, int64_t n) {
  return s.storage[s.base + g * s.strides[0] + c * s.strides[1] + n * s.strides[2]];
}
double& at2(Strided& s, int64_t g, int64_t c) {
  return s.storage[s.base + g * s.strides[0] + c * s.strides[1]];
}
double& at1(Strided& s, int64_t n) {
  return s.storage[s.base + n * s.strides[0]];
}

// A [G, C, N] view: contiguous, or with N outermost in memory (a softmax over dim 1 of a
// [G, N, C] tensor: the rows are strided).
std::vector<int64_t> rowStrides(int64_t g, int64_t c, int64_t n, bool strided) {
  if (!strided) return {c * n, n, 1};
  return {n * c, 1, c};
}

struct Case {
  DType in = DType::F32, out = DType::F32;
  int64_t g = 1, c = 1, n = 1;
  bool strided = false;
};

std::string describe(const Case& k) {
  return std::string(mimic::isa::dtypeName(k.in)) + "->" + mimic::isa::dtypeName(k.out) + " [" +
         std::to_string(k.g) + ", " + std::to_string(k.c) + ", " + std::to_string(k.n) + "]" +
         (k.strided ? " strided" : "");
}

class RowTest : public OpsTest {};

void expectSoftmax(const Case& k, bool log, uint32_t seed = 1) {
  SCOPED_TRACE(std::string(log ? "log_softmax " : "softmax ") + describe(k));
  std::mt19937 rng(seed);
  Strided x(k.in, {k.g, k.c, k.n}, rowStrides(k.g, k.c, k.n, k.strided));
  Strided y(k.out, {k.g, k.c, k.n});
  fillRandom(x, rng, -4, 4);
  x.upload();
  mimic::ops::softmax({}, y.view(), x.view(), log);
  y.download();
  for (int64_t g = 0; g < k.g; ++g) {
    for (int64_t c = 0; c < k.c; ++c) {
      double m = -INFINITY, s = 0;
      for (int64_t n = 0; n < k.n; ++n) m = std::max(m, at3(x, g, c, n));
      for (int64_t n = 0; n < k.n; ++n) s += std::exp(at3(x, g, c, n) - m);
      for (int64_t n = 0; n < k.n; ++n) {
        const double t = at3(x, g, c, n) - m;
        const double expected = log ? t - std::log(s) : std::exp(t) / s;
        // exp amplifies the argument's rounding by |t|; the sum adds n roundoffs.
        const double relative = (std::fabs(t) + 16 + k.n) * kU32;
        const double bound = log ? (std::fabs(t) + std::fabs(std::log(s)) + 16 + k.n) * kU32 +
                                       unitOf(k.out) * std::fabs(expected)
                                 : (relative + unitOf(k.out)) * expected + tinyOf(k.out);
        ASSERT_NEAR(at3(y, g, c, n), expected, bound) << "[" << g << "][" << c << "][" << n << "]";
      }
    }
  }
}

TEST_F(RowTest, SoftmaxWholeRows) {
  for (bool log : {false, true}) {
    expectSoftmax({DType::F32, DType::F32, 1, 1, 1}, log);
    expectSoftmax({DType::F32, DType::F32, 1, 37, 10}, log);
    expectSoftmax({DType::F32, DType::F32, 3, 50, 129}, log);
    expectSoftmax({DType::F32, DType::F32, 2, 5, 700}, log);  // more columns than rows
    expectSoftmax({DType::F32, DType::F32, 2, 300, 3}, log);  // more rows than columns
  }
}

TEST_F(RowTest, SoftmaxStridedRows) {
  for (bool log : {false, true}) {
    expectSoftmax({DType::F32, DType::F32, 2, 9, 33, true}, log);
    expectSoftmax({DType::BF16, DType::BF16, 3, 40, 7, true}, log);
  }
}

TEST_F(RowTest, SoftmaxHalfTypes) {
  for (bool log : {false, true}) {
    expectSoftmax({DType::F16, DType::F16, 2, 17, 100}, log);
    expectSoftmax({DType::BF16, DType::BF16, 1, 64, 64}, log);
    expectSoftmax({DType::F16, DType::F32, 2, 3, 50}, log);  // half_to_float
  }
}

TEST_F(RowTest, SoftmaxLongRowsTakeTheChunkedPasses) {
  for (bool log : {false, true}) {
    // Rows that fit the tiny preset's scratchpad only whole (one workgroup per unit), for
    // softmax (4 bytes an element) and log_softmax (8); then rows that fit nowhere.
    expectSoftmax({DType::F32, DType::F32, 1, 5, log ? 6000 : 12000}, log);
    expectSoftmax({DType::F32, DType::F32, 1, 3, 20000}, log);
    expectSoftmax({DType::BF16, DType::F32, 2, 1, 9000, true}, log);
  }
}

TEST_F(RowTest, SoftmaxOfMinusInfinityEntries) {
  // A row whose first chunk is all -inf (masked): the online rescale must not make NaN.
  for (int64_t n : {40, 20000}) {
    SCOPED_TRACE(n);
    Strided x(DType::F32, {1, 1, n}), y(DType::F32, {1, 1, n});
    for (int64_t i = 0; i < n; ++i) x.storage[i] = i < n - 2 ? -INFINITY : 0.0;
    x.upload();
    mimic::ops::softmax({}, y.view(), x.view(), false);
    y.download();
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y.storage[i], i < n - 2 ? 0.0 : 0.5) << i;
  }
}

void expectSoftmaxBackward(const Case& k, bool log, uint32_t seed = 2) {
  SCOPED_TRACE(std::string(log ? "log_softmax_backward " : "softmax_backward ") + describe(k));
  std::mt19937 rng(seed);
  Strided dy(k.in, {k.g, k.c, k.n}, rowStrides(k.g, k.c, k.n, k.strided));
  Strided y(k.in, {k.g, k.c, k.n});
  Strided dx(k.out, {k.g, k.c, k.n}, rowStrides(k.g, k.c, k.n, k.strided));
  fillRandom(dy, rng, -1, 1);
  fillRandom(y, rng, log ? -5 : 0, log ? 0 : 1);
  dy.upload();
  y.upload();
  mimic::ops::softmaxBackward({}, dx.view(), dy.view(), y.view(), log);
  dx.download();
  for (int64_t g = 0; g < k.g; ++g) {
    for (int64_t c = 0; c < k.c; ++c) {
      double s = 0, mag = 0;
      for (int64_t n = 0; n < k.n; ++n) {
        const double term = log ? at3(dy, g, c, n) : at3(dy, g, c, n) * at3(y, g, c, n);
        s += term;
        mag += std::fabs(term);
      }
      for (int64_t n = 0; n < k.n; ++n) {
        const double d = at3(dy, g, c, n), v = at3(y, g, c, n);
        const double expected = log ? d - std::exp(v) * s : v * (d - s);
        const double scale =
            log ? std::fabs(d) + std::exp(v) * mag : std::fabs(v) * (std::fabs(d) + mag);
        const double bound = (16 + k.n + (log ? std::fabs(v) : 0)) * kU32 * scale +
                             unitOf(k.out) * std::fabs(expected);
        ASSERT_NEAR(at3(dx, g, c, n), expected, bound) << "[" << g << "][" << c << "][" << n << "]";
      }
    }
  }
}

TEST_F(RowTest, SoftmaxBackward) {
  for (bool log : {false, true}) {
    expectSoftmaxBackward({DType::F32, DType::F32, 2, 30, 50}, log);
    expectSoftmaxBackward({DType::F32, DType::F32, 1, 200, 2}, log);
    expectSoftmaxBackward({DType::BF16, DType::BF16, 3, 5, 77, true}, log);
    expectSoftmaxBackward({DType::F16, DType::F16, 1, 9, 300}, log);
    expectSoftmaxBackward({DType::F32, DType::F32, 1, 2, 15000}, log);  // chunked
  }
}

struct NormCase {
  Case rows;
  DType stat = DType::F32, param = DType::F32;
  bool weight = true, bias = true;
};

// y, mean and rstd of a layer norm of x (host values) against double-precision references.
void checkLayerNorm(const Case& r, Strided& x, Strided& y, Strided& mean, Strided& rstd, Strided* w,
                    Strided* b, DType stat, double eps) {
  const double slack = (32 + r.n) * kU32;
  for (int64_t g = 0; g < r.g; ++g) {
    for (int64_t c = 0; c < r.c; ++c) {
      double sum = 0, mag = 0, var = 0;
      for (int64_t n = 0; n < r.n; ++n) {
        sum += at3(x, g, c, n);
        mag += std::fabs(at3(x, g, c, n));
      }
      const double mu = sum / r.n;
      for (int64_t n = 0; n < r.n; ++n) var += (at3(x, g, c, n) - mu) * (at3(x, g, c, n) - mu);
      var /= r.n;
      const double inv = 1 / std::sqrt(var + eps);
      ASSERT_NEAR(at2(mean, g, c), mu, slack * mag / r.n + unitOf(stat) * std::fabs(mu));
      ASSERT_NEAR(at2(rstd, g, c), inv, (slack + unitOf(stat)) * inv);
      for (int64_t n = 0; n < r.n; ++n) {
        const double xhat = (at3(x, g, c, n) - mu) * inv;
        const double wn = w ? at1(*w, n) : 1, bn = b ? at1(*b, n) : 0;
        const double expected = xhat * wn + bn;
        // The mean's error, relative to the spread, and the variance's, relative to itself.
        const double bound = slack * (mag / r.n * inv + std::fabs(xhat) + 1) * std::fabs(wn) +
                             kU32 * std::fabs(bn) + unitOf(r.out) * std::fabs(expected);
        ASSERT_NEAR(at3(y, g, c, n), expected, bound) << "[" << g << "][" << c << "][" << n << "]";
      }
    }
  }
}

void expectLayerNorm(const NormCase& k, uint32_t seed = 3) {
  const Case& r = k.rows;
  SCOPED_TRACE("layer_norm " + describe(r) + (k.weight ? " w" : "") + (k.bias ? " b" : ""));
  std::mt19937 rng(seed);
  Strided x(r.in, {r.g, r.c, r.n}, rowStrides(r.g, r.c, r.n, r.strided));
  Strided y(r.out, {r.g, r.c, r.n});
  Strided mean(k.stat, {r.g, r.c}), rstd(k.stat, {r.g, r.c});
  Strided w(k.param, {r.n}), b(k.param, {r.n}, {2});  // a strided bias
  fillRandom(x, rng, -1, 3);
  fillRandom(w, rng, -2, 2);
  fillRandom(b, rng, -2, 2);
  x.upload();
  w.upload();
  b.upload();
  const double eps = 1e-5;
  mimic::ops::layerNorm({}, y.view(), mean.view(), rstd.view(), x.view(),
                        k.weight ? w.view() : mimic::ops::TensorView{},
                        k.bias ? b.view() : mimic::ops::TensorView{}, eps);
  y.download();
  mean.download();
  rstd.download();
  checkLayerNorm(r, x, y, mean, rstd, k.weight ? &w : nullptr, k.bias ? &b : nullptr, k.stat, eps);
}

TEST_F(RowTest, LayerNorm) {
  expectLayerNorm({{DType::F32, DType::F32, 1, 40, 64}});
  expectLayerNorm({{DType::F32, DType::F32, 2, 3, 1000, true}});
  expectLayerNorm({{DType::F32, DType::F32, 1, 300, 5}, DType::F32, DType::F32, false, true});
  expectLayerNorm({{DType::F32, DType::F32, 1, 7, 33}, DType::F32, DType::F32, true, false});
  expectLayerNorm({{DType::F32, DType::F32, 1, 7, 33}, DType::F32, DType::F32, false, false});
  expectLayerNorm({{DType::BF16, DType::BF16, 2, 20, 96}, DType::BF16, DType::BF16});
  expectLayerNorm({{DType::F16, DType::F16, 1, 10, 130}, DType::F16, DType::F32});
  expectLayerNorm({{DType::F32, DType::F32, 1, 2, 12000}});  // chunked
  expectLayerNorm({{DType::BF16, DType::BF16, 1, 2, 9000}, DType::BF16, DType::BF16});
}

// Layer norm of in + residual against the layer norm of their f32 sum computed on the host:
// the same sum, and for whole rows the same statistics and outputs bit for bit.
// With `dropout`, the residual is first multiplied by a 0/1 mask divided by 0.9.
void expectLayerNormResidual(const Case& r, bool wholeRows = true, bool dropout = false) {
  SCOPED_TRACE("layer_norm residual " + describe(r) + (dropout ? " dropout" : ""));
  std::mt19937 rng(5);
  Strided x(DType::F32, {r.g, r.c, r.n}, rowStrides(r.g, r.c, r.n, r.strided));
  Strided residual(DType::F32, {r.g, r.c, r.n}), sum(DType::F32, {r.g, r.c, r.n});
  Strided expectedSum(DType::F32, {r.g, r.c, r.n}), w(DType::F32, {r.n}), b(DType::F32, {r.n});
  fillRandom(x, rng, -2, 2);
  fillRandom(residual, rng, -2, 2);
  fillRandom(w, rng, -2, 2);
  fillRandom(b, rng, -1, 1);
  Strided mask(DType::F32, {r.g, r.c, r.n});
  for (double& m : mask.storage) m = rng() % 10 == 0 ? 0 : 1;
  const double keep = 0.9;
  for (int64_t g = 0; g < r.g; ++g) {
    for (int64_t c = 0; c < r.c; ++c) {
      for (int64_t n = 0; n < r.n; ++n) {
        double added = at3(residual, g, c, n);
        if (dropout) {
          added = roundTo(added * roundTo(at3(mask, g, c, n) / keep, DType::F32), DType::F32);
        }
        at3(expectedSum, g, c, n) = roundTo(at3(x, g, c, n) + added, DType::F32);
      }
    }
  }
  for (Strided* s : {&x, &residual, &expectedSum, &w, &b, &mask}) s->upload();
  Strided y(DType::F32, {r.g, r.c, r.n}), mean(DType::F32, {r.g, r.c}),
      rstd(DType::F32, {r.g, r.c});
  Strided yRef(DType::F32, {r.g, r.c, r.n}), meanRef(DType::F32, {r.g, r.c});
  Strided rstdRef(DType::F32, {r.g, r.c});
  mimic::ops::layerNorm({}, y.view(), mean.view(), rstd.view(), x.view(), w.view(), b.view(), 1e-5,
                        residual.view(), sum.view(),
                        dropout ? mask.view() : mimic::ops::TensorView{}, keep);
  mimic::ops::layerNorm({}, yRef.view(), meanRef.view(), rstdRef.view(), expectedSum.view(),
                        w.view(), b.view(), 1e-5);
  for (Strided* s : {&y, &mean, &rstd, &sum, &yRef, &meanRef, &rstdRef}) s->download();
  EXPECT_EQ(sum.storage, expectedSum.storage);
  checkLayerNorm(r, expectedSum, y, mean, rstd, &w, &b, DType::F32, 1e-5);
  // Long rows: the residual's tile leaves room for shorter chunks, so the statistics are
  // summed in other parts than without it (within the bounds above).
  if (!wholeRows) return;
  EXPECT_EQ(y.storage, yRef.storage);
  EXPECT_EQ(mean.storage, meanRef.storage);
  EXPECT_EQ(rstd.storage, rstdRef.storage);
}

TEST_F(RowTest, LayerNormWithResidual) {
  expectLayerNormResidual({DType::F32, DType::F32, 1, 40, 64});
  expectLayerNormResidual({DType::F32, DType::F32, 2, 3, 1000, true});
  expectLayerNormResidual({DType::F32, DType::F32, 1, 300, 5});
  expectLayerNormResidual({DType::F32, DType::F32, 1, 2, 12000}, false);  // chunked
  expectLayerNormResidual({DType::F32, DType::F32, 1, 40, 64}, true, true);
  expectLayerNormResidual({DType::F32, DType::F32, 2, 3, 1000, true}, true, true);
  expectLayerNormResidual({DType::F32, DType::F32, 1, 2, 12000}, false, true);
}

TEST_F(RowTest, LayerNormResidualNeedsItsSumInFloat32) {
  Strided x(DType::F32, {1, 4, 5}), out(DType::F32, {1, 4, 5}), sum(DType::F32, {1, 4, 5});
  Strided mean(DType::F32, {1, 4}), rstd(DType::F32, {1, 4}), half(DType::F16, {1, 4, 5});
  EXPECT_THROW(mimic::ops::layerNorm({}, out.view(), mean.view(), rstd.view(), x.view(), {}, {},
                                     1e-5, x.view(), {}),
               std::invalid_argument);
  EXPECT_THROW(mimic::ops::layerNorm({}, out.view(), mean.view(), rstd.view(), x.view(), {}, {},
                                     1e-5, half.view(), sum.view()),
               std::invalid_argument);
  EXPECT_THROW(mimic::ops::layerNorm({}, out.view(), mean.view(), rstd.view(), x.view(), {}, {},
                                     1e-5, x.view(), half.view()),
               std::invalid_argument);
  EXPECT_THROW(mimic::ops::layerNorm({}, out.view(), mean.view(), rstd.view(), x.view(), {}, {},
                                     1e-5, {}, {}, x.view(), 0.9),
               std::invalid_argument);  // a mask without a residual
  EXPECT_THROW(mimic::ops::layerNorm({}, out.view(), mean.view(), rstd.view(), x.view(), {}, {},
                                     1e-5, x.view(), sum.view(), half.view(), 0.9),
               std::invalid_argument);
}

// Where the parameter gradients go: tensors of their own (the bias's strided), or the rows of
// one [2, N] tensor, the weight's first or the bias's (one reduction sums both).
enum class Params { Separate, WeightFirst, BiasFirst };

int64_t launchCount() {
  const mimic::ops::KernelCacheStats stats = mimic::ops::kernelCacheStats();
  return stats.hits + stats.misses;
}

// `launches`, when given, receives the number of kernels the call launched.
void expectLayerNormBackward(const NormCase& k, bool wantInput = true,
                             Params params = Params::Separate, int64_t* launches = nullptr,
                             uint32_t seed = 4) {
  const Case& r = k.rows;
  SCOPED_TRACE("layer_norm_backward " + describe(r) + (k.weight ? " w" : "") +
               (wantInput ? " dx" : "") + " params " + std::to_string(static_cast<int>(params)));
  std::mt19937 rng(seed);
  Strided x(r.in, {r.g, r.c, r.n}, rowStrides(r.g, r.c, r.n, r.strided));
  Strided dy(r.in, {r.g, r.c, r.n});
  Strided dx(r.out, {r.g, r.c, r.n});
  Strided mean(k.stat, {r.g, r.c}), rstd(k.stat, {r.g, r.c});
  Strided w(k.param, {r.n}), ownDw(k.param, {r.n}), ownDb(k.param, {r.n}, {3});
  Strided both(k.param, {2, r.n});
  const bool joint = params != Params::Separate;
  const int64_t weightRow = params == Params::BiasFirst ? 1 : 0;
  auto row = [&](int64_t i) {
    auto* first = static_cast<uint8_t*>(both.view().data) + i * r.n * sizeOf(k.param);
    return mimic::ops::TensorView{first, k.param, {r.n}, {1}};
  };
  auto dwAt = [&](int64_t n) { return joint ? at2(both, weightRow, n) : at1(ownDw, n); };
  auto dbAt = [&](int64_t n) { return joint ? at2(both, 1 - weightRow, n) : at1(ownDb, n); };
  fillRandom(x, rng, -1, 3);
  fillRandom(dy, rng, -1, 1);
  fillRandom(w, rng, -2, 2);
  for (int64_t g = 0; g < r.g; ++g) {  // statistics as the forward saves them
    for (int64_t c = 0; c < r.c; ++c) {
      double sum = 0, var = 0;
      for (int64_t n = 0; n < r.n; ++n) sum += at3(x, g, c, n);
      const double mu = sum / r.n;
      for (int64_t n = 0; n < r.n; ++n) var += (at3(x, g, c, n) - mu) * (at3(x, g, c, n) - mu);
      at2(mean, g, c) = roundTo(mu, k.stat);
      at2(rstd, g, c) = roundTo(1 / std::sqrt(var / r.n + 1e-5), k.stat);
    }
  }
  for (Strided* s : {&x, &dy, &mean, &rstd, &w}) s->upload();
  DeviceWorkspace workspace;
  const int64_t before = launchCount();
  mimic::ops::layerNormBackward(
      {}, wantInput ? dx.view() : mimic::ops::TensorView{}, joint ? row(weightRow) : ownDw.view(),
      joint ? row(1 - weightRow) : ownDb.view(), dy.view(), x.view(), mean.view(), rstd.view(),
      k.weight ? w.view() : mimic::ops::TensorView{}, workspace.get(), joint);
  if (launches != nullptr) *launches = launchCount() - before;
  for (Strided* s : {&dx, &ownDw, &ownDb, &both}) s->download();
  const double slack = (32 + r.n) * kU32;
  std::vector<double> dwRef(r.n, 0), dbRef(r.n, 0), dwMag(r.n, 0), dbMag(r.n, 0);
  for (int64_t g = 0; g < r.g; ++g) {
    for (int64_t c = 0; c < r.c; ++c) {
      const double mu = at2(mean, g, c), inv = at2(rstd, g, c);
      double a = 0, bsum = 0, magA = 0, magB = 0;
      for (int64_t n = 0; n < r.n; ++n) {
        const double xhat = (at3(x, g, c, n) - mu) * inv;
        const double gn = at3(dy, g, c, n) * (k.weight ? at1(w, n) : 1);
        a += gn;
        bsum += gn * xhat;
        magA += std::fabs(gn);
        magB += std::fabs(gn * xhat);
        dwRef[n] += at3(dy, g, c, n) * xhat;
        dbRef[n] += at3(dy, g, c, n);
        dwMag[n] += std::fabs(at3(dy, g, c, n) * xhat);
        dbMag[n] += std::fabs(at3(dy, g, c, n));
      }
      a /= r.n;
      bsum /= r.n;
      if (!wantInput) continue;
      for (int64_t n = 0; n < r.n; ++n) {
        const double xhat = (at3(x, g, c, n) - mu) * inv;
        const double gn = at3(dy, g, c, n) * (k.weight ? at1(w, n) : 1);
        const double expected = inv * (gn - a - xhat * bsum);
        const double scale =
            inv * (std::fabs(gn) + magA / r.n + std::fabs(xhat) * magB / r.n +
                   (std::fabs(at3(x, g, c, n)) + std::fabs(mu)) * inv * std::fabs(bsum));
        ASSERT_NEAR(at3(dx, g, c, n), expected,
                    slack * scale + unitOf(r.out) * std::fabs(expected) + tinyOf(r.out))
            << "[" << g << "][" << c << "][" << n << "]";
      }
    }
  }
  const double rows = static_cast<double>(r.g * r.c);
  for (int64_t n = 0; n < r.n; ++n) {
    const double xs = (rows + r.n + 32) * kU32;
    ASSERT_NEAR(dwAt(n), dwRef[n], xs * dwMag[n] * 4 + unitOf(k.param) * std::fabs(dwRef[n]))
        << "dw[" << n << "]";
    ASSERT_NEAR(dbAt(n), dbRef[n], xs * dbMag[n] + unitOf(k.param) * std::fabs(dbRef[n]))
        << "db[" << n << "]";
  }
}

TEST_F(RowTest, LayerNormBackward) {
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 40, 64}});
  expectLayerNormBackward({{DType::F32, DType::F32, 2, 50, 3, true}});
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 9, 100}, DType::F32, DType::F32, false});
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 9, 100}}, false);
  expectLayerNormBackward({{DType::BF16, DType::BF16, 2, 8, 96}, DType::BF16, DType::BF16});
  expectLayerNormBackward({{DType::F16, DType::F16, 1, 6, 70}, DType::F16, DType::F32});
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 3, 9000}});  // chunked
}

TEST_F(RowTest, LayerNormBackwardParameterGradientsInOneTensor) {
  // One reduction sums both gradients: one launch (or a split reduction's two) fewer.
  int64_t separate = 0, joint = 0;
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 40, 64}}, true, Params::Separate, &separate);
  expectLayerNormBackward({{DType::F32, DType::F32, 1, 40, 64}}, true, Params::WeightFirst, &joint);
  EXPECT_LT(joint, separate);
  for (Params p : {Params::WeightFirst, Params::BiasFirst}) {
    expectLayerNormBackward({{DType::F32, DType::F32, 1, 40, 64}}, true, p);
    expectLayerNormBackward({{DType::F32, DType::F32, 2, 50, 3, true}}, false, p);
    expectLayerNormBackward({{DType::BF16, DType::BF16, 2, 8, 96}, DType::BF16, DType::BF16}, true,
                            p);
    expectLayerNormBackward({{DType::F32, DType::F32, 1, 3, 9000}}, true, p);  // chunked
  }
}

TEST_F(RowTest, EmptyViewsLaunchNothing) {
  Strided x(DType::F32, {2, 0, 5}), y(DType::F32, {2, 0, 5});
  EXPECT_NO_THROW(mimic::ops::softmax({}, y.view(), x.view(), false));
  Strided z(DType::F32, {2, 3, 0}), out(DType::F32, {2, 3, 0});
  EXPECT_NO_THROW(mimic::ops::softmax({}, out.view(), z.view(), true));
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
}

TEST_F(RowTest, BadArgumentsThrowInvalidArgument) {
  Strided x(DType::F32, {1, 4, 5}), y(DType::F32, {1, 4, 6}), flat(DType::F32, {4, 5});
  Strided ints(DType::I32, {1, 4, 5}), ok(DType::F32, {1, 4, 5});
  EXPECT_THROW(mimic::ops::softmax({}, y.view(), x.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::softmax({}, flat.view(), flat.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::softmax({}, ok.view(), ints.view(), false), std::invalid_argument);
  EXPECT_THROW(mimic::ops::softmaxBackward({}, ok.view(), y.view(), x.view(), true),
               std::invalid_argument);
  Strided mean(DType::F32, {1, 4}), rstd(DType::F16, {1, 4}), w(DType::F32, {4});
  EXPECT_THROW(
      mimic::ops::layerNorm({}, ok.view(), mean.view(), rstd.view(), x.view(), {}, {}, 1e-5),
      std::invalid_argument);  // mean and rstd differ in dtype
  EXPECT_THROW(
      mimic::ops::layerNorm({}, ok.view(), mean.view(), mean.view(), x.view(), w.view(), {}, 1e-5),
      std::invalid_argument);  // weight of 4, rows of 5
  Strided dw(DType::F32, {5});
  EXPECT_THROW(mimic::ops::layerNormBackward({}, {}, dw.view(), {}, ok.view(), x.view(),
                                             mean.view(), mean.view(), {}, {}),
               std::invalid_argument);  // no workspace for the weight gradient
}

}  // namespace
