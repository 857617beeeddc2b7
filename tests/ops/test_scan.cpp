// The scans (torch_backend/ops/scan.h) against host references: exact results for integer
// scans and for max/min (values and indices, ties and NaNs as PyTorch's CPU cummax/cummin give
// them), error bounds for float sums, products and logcumsumexp; rows that fit the scratchpad
// and rows streamed in chunks (the tiny preset's scratchpad holds a few hundred steps of one
// lane), lanes along C and along G (a scan along the last dim), strided views, and errors.
// Bounds: a running sum of j terms in f32 is off by at most j units of roundoff of the sum of
// their magnitudes, a product by j units relative; each output is rounded once to its dtype.
#include <cmath>
#include <limits>
#include <stdexcept>

#include "strided_host.h"
#include "torch_backend/ops/scan.h"

namespace {

using namespace stridedtest;
using mimic::ops::ScanKind;

constexpr double kU32 = 0x1p-24;

double unitOf(DType t) {
  return t == DType::F32 ? kU32 : t == DType::F16 ? 0x1p-11 : t == DType::BF16 ? 0x1p-8 : 0;
}

struct Case {
  ScanKind kind = ScanKind::Sum;
  DType in = DType::F32, out = DType::F32;
  int64_t g = 1, n = 1, c = 1;
  bool strided = false;  // in with C outermost in memory
};

std::string describe(const Case& k) {
  static const char* const kKinds[] = {"sum", "prod", "logsumexp", "max", "min"};
  return std::string(kKinds[static_cast<int>(k.kind)]) + " " + mimic::isa::dtypeName(k.in) + "->" +
         mimic::isa::dtypeName(k.out) + " [" + std::to_string(k.g) + ", " + std::to_string(k.n) +
         ", " + std::to_string(k.c) + "]" + (k.strided ? " strided" : "");
}

double& at(Strided& s, int64_t g, int64_t n, int64_t c) {
  return s.storage[s.base + g * s.strides[0] + n * s.strides[1] + c * s.strides[2]];
}

class ScanTest : public OpsTest {};

// Runs the case on values from `fill` and checks every output against the host fold.
template <typename Fill>
void expectScan(const Case& k, const Fill& fill) {
  SCOPED_TRACE(describe(k));
  const std::vector<int64_t> sizes{k.g, k.n, k.c};
  Strided x(k.in, sizes,
            k.strided ? std::vector<int64_t>{k.n, 1, k.g * k.n} : std::vector<int64_t>{});
  Strided y(k.out, sizes);
  Strided idx(DType::I64, sizes);
  fill(x);
  x.upload();
  const bool withIndex = k.kind == ScanKind::Max || k.kind == ScanKind::Min;
  mimic::ops::scan({}, y.view(), withIndex ? idx.view() : mimic::ops::TensorView{}, x.view(),
                   k.kind);
  y.download();
  if (withIndex) idx.download();
  const bool floatIn = mimic::isa::isFloat(k.in);
  int failures = 0;
  for (int64_t g = 0; g < k.g; ++g) {
    for (int64_t c = 0; c < k.c; ++c) {
      double acc = 0, magnitude = 0;
      int64_t iacc = k.kind == ScanKind::Prod ? 1 : 0, best = 0;
      for (int64_t n = 0; n < k.n && failures < 5; ++n) {
        const double v = at(x, g, n, c);
        const double got = at(y, g, n, c);
        double expected = 0, bound = 0;
        switch (k.kind) {
          case ScanKind::Sum:
            acc += v;
            magnitude += std::fabs(v);
            iacc += static_cast<int64_t>(v);
            expected = floatIn ? acc : static_cast<double>(iacc);
            bound = floatIn ? (n + 1) * kU32 * magnitude : 0;
            break;
          case ScanKind::Prod:
            acc = n == 0 ? v : acc * v;
            iacc *= static_cast<int64_t>(v);
            expected = floatIn ? acc : static_cast<double>(iacc);
            bound = floatIn ? (n + 1) * kU32 * std::fabs(acc) : 0;
            break;
          case ScanKind::LogSumExp:
            if (n == 0) {
              acc = v;
            } else {  // PyTorch's CPU step, equal infinities kept as they are
              const double lo = std::isnan(v) ? v : std::min(acc, v);
              const double hi = std::isnan(v) ? v : std::max(acc, v);
              if (lo != hi || std::isfinite(lo)) acc = std::log1p(std::exp(lo - hi)) + hi;
            }
            expected = acc;
            // The carry is kept exactly (a two-sum); each step adds the error of its
            // log(1 + exp(d)), a few units of roundoff of a value below 1 (log(1 + e) in
            // place of log1p), and the output is rounded once.
            bound = std::isfinite(acc) ? (n + 1) * 4 * kU32 + kU32 * std::fabs(acc) : 0;
            break;
          case ScanKind::Max:
          case ScanKind::Min: {
            const bool take = n == 0 || std::isnan(v) ||
                              (!std::isnan(acc) && (k.kind == ScanKind::Max ? v >= acc : v <= acc));
            if (take) {
              acc = v;
              best = n;
            }
            expected = acc;
            EXPECT_EQ(at(idx, g, n, c), best) << "index at [" << g << ", " << n << ", " << c << "]";
            break;
          }
        }
        if (std::isfinite(expected)) bound += unitOf(k.out) * std::fabs(expected);
        if (k.out != DType::F32 && k.out != DType::I64) expected = roundTo(expected, k.out);
        const bool ok = std::isnan(expected)
                            ? std::isnan(got)
                            : got == expected || std::fabs(got - expected) <= bound;
        if (!ok) {
          ++failures;
          ADD_FAILURE() << "at [" << g << ", " << n << ", " << c << "]: got " << got
                        << ", expected " << expected << " +- " << bound;
        }
      }
    }
  }
}

void randomIn(Strided& x, double lo, double hi, uint32_t seed = 1) {
  std::mt19937 rng(seed);
  fillRandom(x, rng, lo, hi);
}

TEST_F(ScanTest, IntegerSumsAndProductsAreExact) {
  for (DType in : {DType::I32, DType::I64, DType::U8}) {
    expectScan({ScanKind::Sum, in, DType::I64, 3, 37, 5}, [](Strided& x) { randomIn(x, 0, 100); });
    expectScan({ScanKind::Prod, in, DType::I64, 2, 9, 7}, [](Strided& x) { randomIn(x, 1, 5); });
  }
  // int32 out wraps as PyTorch's int32 cumsum does (computed in i64, stored modulo 2^32).
  expectScan({ScanKind::Sum, DType::I32, DType::I32, 1, 40, 3},
             [](Strided& x) { randomIn(x, 0, 1000); });
}

TEST_F(ScanTest, FloatSumsWithinTheirBound) {
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    expectScan({ScanKind::Sum, t, t, 2, 50, 33}, [](Strided& x) { randomIn(x, -2, 2); });
  }
  expectScan({ScanKind::Sum, DType::F16, DType::F32, 1, 64, 1},
             [](Strided& x) { randomIn(x, -2, 2); });
}

TEST_F(ScanTest, LongRowsStreamInChunks) {
  // Half of 64 KiB holds about 5000 f32 steps of one lane stored as bf16 (an f32 output would
  // take the blocked scan), 64 steps of 40 i32 lanes computed in
  // i64, 700 steps of 3 f16 lanes with their indices, 2500 steps of 3 f32 lanes.
  expectScan({ScanKind::Sum, DType::F32, DType::BF16, 1, 20000, 1},
             [](Strided& x) { randomIn(x, -1, 1); });
  expectScan({ScanKind::Sum, DType::I32, DType::I64, 2, 900, 40},
             [](Strided& x) { randomIn(x, -50, 50); });
  expectScan({ScanKind::Max, DType::F16, DType::F16, 1, 2500, 3},
             [](Strided& x) { randomIn(x, -100, 100); });
  expectScan({ScanKind::LogSumExp, DType::F32, DType::F32, 3, 4000, 1},
             [](Strided& x) { randomIn(x, -5, 5); });
}

TEST_F(ScanTest, LongFewLanesScanInBlocks) {
  // 5000 steps: rows of 71 steps and a tail of 30; 4900 steps: 70 rows of 70, no tail.
  expectScan({ScanKind::Sum, DType::I32, DType::I64, 3, 5000, 1},
             [](Strided& x) { randomIn(x, -1000, 1000); });
  expectScan({ScanKind::Sum, DType::U8, DType::I64, 1, 4900, 1},
             [](Strided& x) { randomIn(x, 0, 1); });
  expectScan({ScanKind::Sum, DType::F32, DType::F32, 2, 5000, 1, true},
             [](Strided& x) { randomIn(x, -1, 1); });
  expectScan({ScanKind::Prod, DType::I64, DType::I64, 1, 5000, 1}, [](Strided& x) {
    randomIn(x, 0, 1);
    for (double& v : x.storage) v = v == 0 ? -1 : 1;
  });
  expectScan({ScanKind::Prod, DType::F32, DType::F32, 2, 4500, 1},
             [](Strided& x) { randomIn(x, 0.999, 1.001); });
}

TEST_F(ScanTest, LanesAlongGAndStridedViews) {
  // C = 1: the last dim is scanned, the rows are the lanes.
  expectScan({ScanKind::Prod, DType::F32, DType::F32, 70, 12, 1},
             [](Strided& x) { randomIn(x, 0.5, 1.5); });
  expectScan({ScanKind::Sum, DType::BF16, DType::F32, 4, 30, 9, true},
             [](Strided& x) { randomIn(x, -3, 3); });
}

TEST_F(ScanTest, MaxAndMinTakeTheLastTieAndStickyNaNs) {
  for (ScanKind kind : {ScanKind::Max, ScanKind::Min}) {
    for (DType t : {DType::I32, DType::I64, DType::U8, DType::BF16}) {
      expectScan({kind, t, t, 2, 40, 6}, [](Strided& x) { randomIn(x, 0, 3); });  // many ties
    }
    expectScan({kind, DType::F32, DType::F32, 1, 30, 4}, [](Strided& x) {
      randomIn(x, -2, 2);
      for (int64_t i : {3, 17, 50, 51, 90}) x.storage[i] = std::nan("");
      x.storage[7] = x.storage[11] = INFINITY;
      x.storage[8] = -INFINITY;
    });
  }
}

TEST_F(ScanTest, LogSumExpHandlesInfinities) {
  expectScan({ScanKind::LogSumExp, DType::F32, DType::F32, 1, 8, 6}, [](Strided& x) {
    randomIn(x, -3, 3);
    for (int64_t i : {0, 1, 6, 20}) x.storage[i] = -INFINITY;
    for (int64_t i : {13, 14, 30}) x.storage[i] = INFINITY;
    x.storage[40] = std::nan("");
  });
  expectScan({ScanKind::LogSumExp, DType::BF16, DType::BF16, 2, 20, 3},
             [](Strided& x) { randomIn(x, -3, 3); });
}

TEST_F(ScanTest, LogSumExpCarriesItsRoundingError) {
  // Near 1e4 a unit of f32 is 1e-3, far above each step's addend error: an f32 carry would
  // drift by half a unit a step, the two-sum carry stays within a unit of the exact result,
  // across chunks too (about 3800 steps of two lanes fit).
  expectScan({ScanKind::LogSumExp, DType::F32, DType::F32, 1, 6000, 2},
             [](Strided& x) { randomIn(x, 9990, 10000); });
}

TEST_F(ScanTest, EmptyViewsLaunchNothing) {
  Strided x(DType::F32, {2, 0, 3}), y(DType::F32, {2, 0, 3});
  EXPECT_NO_THROW(mimic::ops::scan({}, y.view(), {}, x.view(), ScanKind::Sum));
}

TEST_F(ScanTest, ErrorsNameTheOperand) {
  Strided x(DType::F32, {1, 4, 2}), y(DType::F32, {1, 4, 3}), i32(DType::I32, {1, 4, 2});
  EXPECT_THROW(mimic::ops::scan({}, y.view(), {}, x.view(), ScanKind::Sum), std::invalid_argument);
  EXPECT_THROW(mimic::ops::scan({}, i32.view(), {}, i32.view(), ScanKind::LogSumExp),
               std::invalid_argument);
  Strided out(DType::F32, {1, 4, 2});
  EXPECT_THROW(mimic::ops::scan({}, out.view(), i32.view(), x.view(), ScanKind::Max),
               std::invalid_argument);
  try {
    mimic::ops::scan({}, out.view(), {}, x.view(), ScanKind::Min);
    ADD_FAILURE() << "no error for missing indices";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("indices"), std::string::npos) << e.what();
  }
}

}  // namespace
