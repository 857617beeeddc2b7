// Host side of the FFT: the twiddle table, checks, the plan (lanes per workgroup) and the launch.
#include "torch_backend/ops/fft.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

#include "torch_backend/ops/fft_kernel.h"
#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops {
namespace {

using detail::FftShape;

// Lanes per workgroup at most: enough to amortise a stage's instructions.
constexpr int64_t kMaxLanes = 64;
constexpr double kPi = 3.14159265358979323846;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("fft: " + what);
}

std::string sizesText(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

bool powerOfTwo(int64_t n) {
  return n > 0 && (n & (n - 1)) == 0;
}

void checkOperand(const char* name, const TensorView& v, int64_t g, int64_t rows, int64_t c) {
  if (v.dtype != isa::DType::F32) {
    fail(std::string(name) + " must be f32, got " + isa::dtypeName(v.dtype));
  }
  const std::vector<int64_t> expected{g, rows, c};
  if (v.sizes != expected || v.strides.size() != 3) {
    fail(std::string(name) + " has sizes " + sizesText(v.sizes) + " and " +
         std::to_string(v.strides.size()) + " strides; expected sizes " + sizesText(expected));
  }
}

// Lanes along G instead (a transform along the last dim): the kernel's lanes lie along C.
TensorView lanesAlongG(TensorView v) {
  if (v.data == nullptr) return v;
  std::swap(v.sizes[0], v.sizes[2]);
  std::swap(v.strides[0], v.strides[2]);
  return v;
}

// As many lanes per workgroup as spread the lanes over two workgroups per compute unit, at most
// kMaxLanes and as many as two workgroups' scratchpads hold on one unit (a power of two, so
// that few kernels are built); one lane may take the whole scratchpad.
int64_t lanesPerGroup(int64_t n, int64_t g, int64_t c, int device) {
  const int64_t budget = static_cast<int64_t>(scratchpadBytes(device)) * 15 / 32;
  const int64_t perG = std::max<int64_t>(1, (2 * computeUnits(device) + g - 1) / g);
  const int64_t wanted = std::min<int64_t>(kMaxLanes, (c + perG - 1) / perG);
  int64_t kb = 1;
  while (kb * 2 <= wanted && FftShape{n, kb * 2}.scratchpadBytes() <= budget) kb *= 2;
  return kb;
}

void addOperand(std::vector<int64_t>& args, int slot, const TensorView& v) {
  if (v.data == nullptr) return;
  args[slot + detail::kFtAddr] = reinterpret_cast<int64_t>(v.data);
  args[slot + detail::kFtG] = v.strides[0] * 4;
  args[slot + detail::kFtN] = v.strides[1] * 4;
  args[slot + detail::kFtC] = v.strides[2] * 4;
}

}  // namespace

std::vector<float> fftTwiddles(int64_t n, bool forward) {
  if (!powerOfTwo(n)) fail("length " + std::to_string(n) + " is not a power of two");
  const int64_t m = n - 1;
  std::vector<float> table(3 * m);
  const double sign = forward ? -1.0 : 1.0;
  for (int64_t half = 1; half < n; half *= 2) {
    for (int64_t k = 0; k < half; ++k) {
      const double angle = sign * kPi * static_cast<double>(k) / half;
      const int64_t at = half - 1 + k;
      table[at] = static_cast<float>(std::cos(angle));
      table[m + at] = static_cast<float>(std::sin(angle));
      table[2 * m + at] = -table[m + at];
    }
  }
  return table;
}

int64_t fftMaxLength(int device) {
  const int64_t bytes = static_cast<int64_t>(scratchpadBytes(device));
  int64_t n = 1;
  while (FftShape{n * 2, 1}.scratchpadBytes() <= bytes) n *= 2;
  return n;
}

void fft(const LaunchContext& ctx, const FftOperands& o) {
  const int64_t n = o.n;
  if (!powerOfTwo(n)) fail("length " + std::to_string(n) + " is not a power of two");
  if (n > fftMaxLength(ctx.device)) {
    fail("length " + std::to_string(n) + " does not fit the scratchpad (at most " +
         std::to_string(fftMaxLength(ctx.device)) + ")");
  }
  if (o.inRe.sizes.size() != 3)
    fail("operands must be 3-D [G, N, C], got " + sizesText(o.inRe.sizes));
  const int64_t g = o.inRe.sizes[0], c = o.inRe.sizes[2];
  const int64_t inRows = o.input == FftInput::Hermitian ? n / 2 + 1 : n;
  checkOperand("inRe", o.inRe, g, inRows, c);
  if (o.input != FftInput::Real) checkOperand("inIm", o.inIm, g, inRows, c);
  if (o.outRe.sizes.size() != 3) fail("outRe must be 3-D, got " + sizesText(o.outRe.sizes));
  const int64_t outRows = o.outRe.sizes[1];
  if (outRows < 1 || outRows > n) {
    fail("out has " + std::to_string(outRows) + " rows for a transform of length " +
         std::to_string(n));
  }
  checkOperand("outRe", o.outRe, g, outRows, c);
  const bool realOut = o.outIm.data == nullptr;
  if (!realOut) checkOperand("outIm", o.outIm, g, outRows, c);
  if (o.twiddles.dtype != isa::DType::F32 || o.twiddles.numel() != 3 * (n - 1)) {
    fail("twiddles must be the f32 table of " + std::to_string(3 * (n - 1)) + " floats");
  }
  if (g * c == 0) return;
  FftOperands v = o;
  if (c == 1 && g > 1) {
    for (TensorView* t : {&v.inRe, &v.inIm, &v.outRe, &v.outIm}) *t = lanesAlongG(*t);
  }
  const int64_t lanesG = v.inRe.sizes[0], lanesC = v.inRe.sizes[2];
  const FftShape shape{n, lanesPerGroup(n, lanesG, lanesC, ctx.device), o.input, realOut};
  std::vector<int64_t> args(detail::kFftArgCount, 0);
  args[detail::kFftC] = lanesC;
  args[detail::kFftOutRows] = outRows;
  const float scale = static_cast<float>(o.scale);
  uint32_t bits = 0;
  std::memcpy(&bits, &scale, sizeof bits);
  args[detail::kFftScale] = bits;
  args[detail::kFftTwiddles] = reinterpret_cast<int64_t>(o.twiddles.data);
  addOperand(args, detail::kFftInRe, v.inRe);
  if (o.input != FftInput::Real) addOperand(args, detail::kFftInIm, v.inIm);
  addOperand(args, detail::kFftOutRe, v.outRe);
  addOperand(args, detail::kFftOutIm, v.outIm);
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildFftKernel(shape); });
  const int64_t groups = (lanesC + shape.kb - 1) / shape.kb;
  launch(ctx, fn, {static_cast<uint32_t>(groups), static_cast<uint32_t>(lanesG), 1}, args);
}

}  // namespace mimic::ops
