// The FFT (torch_backend/ops/fft.h) against a double-precision DFT on the host: complex
// transforms both ways, real input (one-sided and full outputs), Hermitian input to a real
// output, lanes along C and along G (a transform along the last dim), strided views,
// normalization, determinism, and the errors.
//
// Bound: radix-2 FFT in floating point with twiddles accurate to u (Higham, Accuracy and
// Stability of Numerical Algorithms, 24.1) has ||y' - y||_2 <= log2(n) * eta * ||y||_2 with
// eta = u + gamma_4 * (sqrt(2) + u), about 7u; ||y||_2 = sqrt(n) * ||x||_2 unnormalized, and
// every element's error is at most the vector's. The scale and the final rounding add 2u.
#include <cmath>
#include <complex>
#include <cstring>
#include <stdexcept>

#include "strided_host.h"
#include "torch_backend/ops/fft.h"

namespace {

using namespace stridedtest;
using mimic::ops::FftInput;
using mimic::ops::FftOperands;
using mimic::ops::TensorView;
using Cx = std::complex<double>;

constexpr double kU32 = 0x1p-24;
constexpr double kPi = 3.14159265358979323846;

class FftTest : public OpsTest {};

// A [G, rows, C] complex operand as pairs (trailing dim of 2), optionally with C outermost in
// memory; re and im are its part views.
struct Pairs {
  Strided s;
  Pairs(int64_t g, int64_t rows, int64_t c, bool strided)
      : s(DType::F32, {g, rows, c, 2},
          strided ? std::vector<int64_t>{rows * 2, 2, g * rows * 2, 1} : std::vector<int64_t>{}) {}
  TensorView part(int p) const {
    TensorView v = s.view();
    v.data = static_cast<uint8_t*>(v.data) + p * 4;
    v.sizes.pop_back();
    v.strides.pop_back();
    return v;
  }
  double& at(int64_t g, int64_t r, int64_t c, int p) {
    return s.storage[s.base + g * s.strides[0] + r * s.strides[1] + c * s.strides[2] +
                     p * s.strides[3]];
  }
};

struct Case {
  FftInput input = FftInput::Complex;
  bool forward = true, realOut = false, strided = false;
  int64_t g = 1, n = 8, c = 1, outRows = 0;  // outRows 0: n
  double scale = 1.0;
};

std::string describe(const Case& k) {
  static const char* const kInputs[] = {"complex", "real", "hermitian"};
  return std::string(kInputs[static_cast<int>(k.input)]) + (k.forward ? " forward" : " inverse") +
         (k.realOut ? " real out" : "") + " n=" + std::to_string(k.n) + " [" + std::to_string(k.g) +
         ", " + std::to_string(k.c) + "]" + (k.strided ? " strided" : "") + " rows " +
         std::to_string(k.outRows);
}

struct Twiddles {
  void* device = nullptr;
  TensorView view;
  Twiddles(int64_t n, bool forward) {
    const std::vector<float> table = mimic::ops::fftTwiddles(n, forward);
    device = deviceAlloc(table.size() * 4 + 8);
    if (!table.empty()) {  // n = 1 has no stage, hence no factor
      EXPECT_EQ(mimicMemcpy(device, table.data(), table.size() * 4), MIMIC_SUCCESS);
    }
    view = {device, DType::F32, {static_cast<int64_t>(table.size())}, {1}};
  }
  ~Twiddles() { mimicMemFree(device); }
};

// Runs the case and returns the output pairs; expects every element within the bound.
std::vector<double> expectFft(const Case& k, uint32_t seed = 1) {
  SCOPED_TRACE(describe(k));
  const int64_t n = k.n, inRows = k.input == FftInput::Hermitian ? n / 2 + 1 : n;
  const int64_t outRows = k.outRows ? k.outRows : n;
  Pairs x(k.g, inRows, k.c, k.strided), y(k.g, outRows, k.c, false);
  std::mt19937 rng(seed);
  fillRandom(x.s, rng, -1, 1);
  x.s.upload();
  Twiddles tw(n, k.forward);
  FftOperands o;
  o.inRe = x.part(0);
  o.inIm = x.part(1);
  o.outRe = y.part(0);
  if (!k.realOut) o.outIm = y.part(1);
  o.twiddles = tw.view;
  o.input = k.input;
  o.n = n;
  o.scale = k.scale;
  mimic::ops::fft({}, o);
  y.s.download();
  const double sign = k.forward ? -1.0 : 1.0;
  const double stages = std::log2(static_cast<double>(n));
  int failures = 0;
  for (int64_t g = 0; g < k.g; ++g) {
    for (int64_t c = 0; c < k.c; ++c) {
      std::vector<Cx> in(n);
      for (int64_t r = 0; r < n; ++r) {
        if (k.input == FftInput::Hermitian) {
          const int64_t from = r <= n / 2 ? r : n - r;
          in[r] = {x.at(g, from, c, 0), (r <= n / 2 ? 1 : -1) * x.at(g, from, c, 1)};
        } else {
          in[r] = {x.at(g, r, c, 0), k.input == FftInput::Real ? 0.0 : x.at(g, r, c, 1)};
        }
      }
      double norm = 0;
      for (const Cx& v : in) norm += std::norm(v);
      norm = std::sqrt(norm);
      for (int64_t j = 0; j < outRows && failures < 5; ++j) {
        Cx sum = 0;
        for (int64_t r = 0; r < n; ++r) {
          sum += in[r] * std::polar(1.0, sign * 2 * kPi * static_cast<double>((j * r) % n) / n);
        }
        sum *= k.scale;
        const double bound =
            (7 * stages * std::sqrt(static_cast<double>(n)) * norm + 2 * std::abs(sum)) * kU32 *
            std::max(1.0, std::fabs(k.scale));
        const double gotRe = y.at(g, j, c, 0), gotIm = k.realOut ? 0 : y.at(g, j, c, 1);
        const double expectIm = k.realOut ? 0 : sum.imag();
        if (!(std::fabs(gotRe - sum.real()) <= bound && std::fabs(gotIm - expectIm) <= bound)) {
          ++failures;
          ADD_FAILURE() << "at [" << g << ", " << j << ", " << c << "]: got (" << gotRe << ", "
                        << gotIm << "), expected (" << sum.real() << ", " << expectIm << ") +- "
                        << bound;
        }
      }
    }
  }
  return y.s.storage;
}

TEST_F(FftTest, ComplexBothWaysAllPowersOfTwo) {
  for (int64_t n : {1, 2, 4, 8, 16, 64, 256, 1024}) {
    for (bool forward : {true, false})
      expectFft({FftInput::Complex, forward, false, false, 2, n, 3});
  }
}

TEST_F(FftTest, LanesAlongGAndStridedViews) {
  expectFft({FftInput::Complex, true, false, false, 5, 32, 1});   // along the last dim
  expectFft({FftInput::Complex, true, false, true, 3, 16, 4});    // C outermost in memory
  expectFft({FftInput::Complex, false, false, false, 1, 8, 70});  // more lanes than one group
}

TEST_F(FftTest, RealInputOneSidedAndFull) {
  for (int64_t n : {1, 2, 8, 128}) {
    expectFft({FftInput::Real, true, false, false, 2, n, 3, n / 2 + 1});
    expectFft({FftInput::Real, true, false, false, 3, n, 1});
  }
}

TEST_F(FftTest, HermitianInputToRealOutput) {
  for (int64_t n : {1, 2, 4, 16, 512}) {
    expectFft({FftInput::Hermitian, false, true, false, 2, n, 2, 0, 1.0 / n});
    expectFft({FftInput::Hermitian, false, true, true, 3, n, 2});
  }
}

TEST_F(FftTest, Normalization) {
  expectFft({FftInput::Complex, true, false, false, 1, 64, 2, 0, 0.125});
  expectFft({FftInput::Complex, false, false, false, 1, 64, 2, 0, 1.0 / 64});
}

TEST_F(FftTest, SameBitsEveryRun) {
  const Case k{FftInput::Complex, true, false, false, 3, 256, 5};
  EXPECT_EQ(expectFft(k, 7), expectFft(k, 7));
}

TEST_F(FftTest, LongestLengthFitsTheScratchpad) {
  const int64_t n = mimic::ops::fftMaxLength(0);
  EXPECT_GE(n, 1024);  // the tiny preset's 64 KiB scratchpad
  expectFft({FftInput::Complex, true, false, false, 1, n, 1});
}

TEST_F(FftTest, Errors) {
  Pairs x(1, 6, 1, false), y(1, 6, 1, false);
  Twiddles tw(8, true);
  FftOperands o;
  o.inRe = x.part(0);
  o.inIm = x.part(1);
  o.outRe = y.part(0);
  o.outIm = y.part(1);
  o.twiddles = tw.view;
  o.n = 6;
  EXPECT_THROW(mimic::ops::fft({}, o), std::invalid_argument);  // not a power of two
  o.n = 2 * mimic::ops::fftMaxLength(0);
  EXPECT_THROW(mimic::ops::fft({}, o), std::invalid_argument);  // too long
  o.n = 8;
  EXPECT_THROW(mimic::ops::fft({}, o), std::invalid_argument);  // in has 6 rows, not 8
  try {
    mimic::ops::fft({}, o);
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("inRe has sizes [1, 6, 1]"), std::string::npos)
        << e.what();
  }
  Pairs x8(1, 8, 1, false), y9(1, 9, 1, false);
  o.inRe = x8.part(0);
  o.inIm = x8.part(1);
  o.outRe = y9.part(0);
  o.outIm = y9.part(1);
  EXPECT_THROW(mimic::ops::fft({}, o), std::invalid_argument);  // 9 output rows of 8
  o.outRe = x8.part(0);
  o.outIm = x8.part(1);
  o.twiddles.sizes = {3};
  EXPECT_THROW(mimic::ops::fft({}, o), std::invalid_argument);  // the table of another length
  EXPECT_THROW(mimic::ops::fftTwiddles(12, true), std::invalid_argument);
}

}  // namespace
