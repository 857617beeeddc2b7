// Host side of gemm: checks, the tiles for the device (gemm_plan.h), and the launch.
#include "torch_backend/ops/gemm.h"

#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include "torch_backend/ops/gemm_kernel.h"
#include "torch_backend/ops/gemm_plan.h"
#include "torch_backend/ops/kernel_cache.h"

namespace mimic::ops {
namespace {

using isa::DType;

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("gemm: " + what);
}

std::string shapeText(const TensorView& v) {
  std::string text = "[";
  for (size_t i = 0; i < v.sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(v.sizes[i]);
  return text + "]";
}

void check(const TensorView& c, const TensorView& a, const TensorView& b) {
  for (auto [v, name] : {std::pair{&a, "a"}, {&b, "b"}, {&c, "c"}}) {
    if (v->sizes.size() != 3 || v->strides.size() != 3) {
      fail(std::string(name) + " must be 3-D [batch, rows, cols] with 3 strides, not " +
           shapeText(*v));
    }
    if (v->dtype != DType::F32 && v->dtype != DType::F16 && v->dtype != DType::BF16) {
      fail(std::string(name) + " has dtype " + isa::dtypeName(v->dtype) +
           "; only f32, f16 and bf16 are supported");
    }
  }
  if (a.dtype != c.dtype || b.dtype != c.dtype) {
    fail(std::string("dtypes differ: a ") + isa::dtypeName(a.dtype) + ", b " +
         isa::dtypeName(b.dtype) + ", c " + isa::dtypeName(c.dtype));
  }
  const bool sizesMatch = a.sizes[0] == c.sizes[0] && b.sizes[0] == c.sizes[0] &&
                          a.sizes[1] == c.sizes[1] && b.sizes[2] == c.sizes[2] &&
                          a.sizes[2] == b.sizes[1];
  if (!sizesMatch) {
    fail("sizes do not match: a " + shapeText(a) + " @ b " + shapeText(b) + " into c " +
         shapeText(c) + " (expected [batch, M, K] @ [batch, K, N] -> [batch, M, N])");
  }
  for (int64_t s : c.sizes) {
    if (s < 0) fail("negative size in c " + shapeText(c));
  }
  if (a.sizes[2] < 0) fail("negative K in a " + shapeText(a));
}

int64_t roundUp8(int64_t bytes) {
  return (bytes + 7) / 8 * 8;
}

int64_t ceilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t f32Bits(double v) {
  return scalarBits(v, DType::F32);
}

void checkBias(const TensorView& bias, const TensorView& c) {
  if (bias.sizes != c.sizes || bias.strides.size() != 3) {
    fail("bias must have c's sizes " + shapeText(c) + " (strides 0 to broadcast), not " +
         shapeText(bias));
  }
  if (bias.dtype != c.dtype) {
    fail(std::string("bias has dtype ") + isa::dtypeName(bias.dtype) + ", c " +
         isa::dtypeName(c.dtype));
  }
}

}  // namespace

void gemm(const LaunchContext& ctx, const TensorView& c, const TensorView& a, const TensorView& b,
          double alpha, double beta, const TensorView* biasView) {
  check(c, a, b);
  if (biasView != nullptr) checkBias(*biasView, c);
  // A bias scaled by 0 is ignored, as C's old contents are.
  const bool withBias = biasView != nullptr && beta != 0.0;
  TensorView ca = a, cb = b, cc = c, cbias = withBias ? *biasView : TensorView{};
  // With both operands transposed, C^T = B^T A^T reads them along contiguous rows.
  if (a.strides[2] != 1 && a.strides[1] == 1 && b.strides[2] != 1 && b.strides[1] == 1) {
    auto transposed = [](const TensorView& v) {
      TensorView t = v;
      std::swap(t.sizes[1], t.sizes[2]);
      std::swap(t.strides[1], t.strides[2]);
      return t;
    };
    ca = transposed(b);
    cb = transposed(a);
    cc = transposed(c);
    if (withBias) cbias = transposed(cbias);
  }
  const int64_t batch = cc.sizes[0], m = cc.sizes[1], n = cc.sizes[2], k = ca.sizes[2];
  if (batch == 0 || m == 0 || n == 0) return;
  const int64_t e = isa::dtypeSize(c.dtype);
  const bool readC = beta != 0.0 && !withBias;
  const bool readOld = readC || withBias;  // the epilogue loads a tile: C's old one or the bias
  const detail::GemmTiles t =
      detail::planGemm(deviceProperties(ctx.device), batch, m, n, k, e, readOld);

  std::vector<int64_t> args(withBias ? detail::kGemmBiasArgCount : detail::kGemmArgCount, 0);
  if (withBias) {
    args[detail::kGemmBias] = reinterpret_cast<int64_t>(cbias.data);
    for (int d = 0; d < 3; ++d) args[detail::kGemmBiasBatch + d] = cbias.strides[d] * e;
  }
  args[detail::kGemmC] = reinterpret_cast<int64_t>(cc.data);
  args[detail::kGemmA] = reinterpret_cast<int64_t>(ca.data);
  args[detail::kGemmB] = reinterpret_cast<int64_t>(cb.data);
  args[detail::kGemmM] = m;
  args[detail::kGemmN] = n;
  args[detail::kGemmK] = k;
  const TensorView* views[] = {&ca, &cb, &cc};
  const int firstStride[] = {detail::kGemmABatch, detail::kGemmBBatch, detail::kGemmCBatch};
  for (int v = 0; v < 3; ++v) {
    for (int d = 0; d < 3; ++d) args[firstStride[v] + d] = views[v]->strides[d] * e;
  }
  args[detail::kGemmTileM] = t.m;
  args[detail::kGemmTileN] = t.n;
  args[detail::kGemmTileK] = t.k;
  args[detail::kGemmAlpha] = f32Bits(alpha);
  args[detail::kGemmBeta] = f32Bits(beta);
  const int64_t accBytes = roundUp8(t.m * t.n * 4);
  const int64_t aBytes = roundUp8(t.m * t.k * e), bBytes = roundUp8(t.k * t.n * e);
  args[detail::kGemmSpAcc] = 0;
  for (int s = 0; s < t.stages; ++s) {
    args[detail::kGemmSpA0 + s] = accBytes + s * aBytes;
    args[detail::kGemmSpB0 + s] = accBytes + t.stages * aBytes + s * bBytes;
  }
  args[detail::kGemmSpOld] = accBytes;
  args[detail::kGemmSpOldF32] = accBytes + roundUp8(t.m * t.n * e);
  args[detail::kGemmSpOut] = readOld ? args[detail::kGemmSpOldF32] + accBytes : accBytes;
  const int64_t tilesM = ceilDiv(m, t.m), tilesN = ceilDiv(n, t.n);
  args[detail::kGemmTilesM] = tilesM;
  args[detail::kGemmTilesN] = tilesN;
  args[detail::kGemmGroupM] = t.groupM;

  detail::GemmShape shape{c.dtype, readC, withBias, t.stages};
  for (int v = 0; v < 3; ++v) {
    shape.columnWalk[v] = std::llabs(views[v]->strides[1]) < std::llabs(views[v]->strides[2]);
  }
  const KernelRef fn =
      cachedKernel(ctx.device, shape.key(), [&] { return detail::buildGemmKernel(shape); });
  const mimicDim3 grid{static_cast<uint32_t>(tilesM * tilesN), 1, static_cast<uint32_t>(batch)};
  launch(ctx, fn, grid, args);
}

}  // namespace mimic::ops
