// Tile matrix multiply-accumulate (Mma): C[m x n] += A[m x k] * B[k x n], f32 accumulation.
//
// A small GEMM in the usual shape: B is packed into panels of kNr columns (contiguous per k, so
// the inner loop reads it sequentially), and a register-blocked micro-kernel keeps a kMr x kNr
// block of C in registers while it walks k. Each C element still adds its products in order of
// k, starting from its old value, so the result does not depend on the blocking, nor on which
// kernel runs it (matrix_kernels.h).
#include <vector>

#include "sim/exec/matrix_kernels.h"
#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/validate.h"

namespace mimic::exec {
namespace {

using namespace detail;
using FB = Batch<float>;

constexpr int kW = static_cast<int>(kLanes<float>);
constexpr int kMr = 6;       // rows per micro-tile: 12 accumulators + 2 B + 1 A of 16 registers
constexpr int kNr = 2 * kW;  // columns per micro-tile
constexpr int kKc = 256;     // k per packed block: one panel is kKc * kNr floats (16 KiB on AVX2)

// C[R x cols] += A[R x kc] (row stride lda) * panel[kc x kNr]; cols <= kNr, the panel's
// columns past `cols` are zero.
template <int R>
void microKernel(int kc, const float* a, int lda, const float* panel, float* c, int ldc, int cols) {
  FB acc[R][2];
  alignas(64) float edge[R][kNr];
  if (cols < kNr) {
    for (int r = 0; r < R; ++r) {
      std::fill(edge[r], edge[r] + kNr, 0.0f);
      std::copy(c + r * ldc, c + r * ldc + cols, edge[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    const float* row = cols < kNr ? edge[r] : c + r * ldc;
    acc[r][0] = FB::load_unaligned(row);
    acc[r][1] = FB::load_unaligned(row + kW);
  }
  for (int p = 0; p < kc; ++p) {
    const FB b0 = FB::load_unaligned(panel + p * kNr);
    const FB b1 = FB::load_unaligned(panel + p * kNr + kW);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const FB av(a[r * lda + p]);
      // Fused with hardware FMA; a separate multiply and add in the portable build.
      acc[r][0] = xsimd::fma(av, b0, acc[r][0]);
      acc[r][1] = xsimd::fma(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* row = cols < kNr ? edge[r] : c + r * ldc;
    acc[r][0].store_unaligned(row);
    acc[r][1].store_unaligned(row + kW);
  }
  if (cols < kNr) {
    for (int r = 0; r < R; ++r) std::copy(edge[r], edge[r] + cols, c + r * ldc);
  }
}

// Rows [i, i + rows) with rows < kMr.
void edgeRows(int rows, int kc, const float* a, int lda, const float* panel, float* c, int ldc,
              int cols) {
  switch (rows) {
    case 1:
      return microKernel<1>(kc, a, lda, panel, c, ldc, cols);
    case 2:
      return microKernel<2>(kc, a, lda, panel, c, ldc, cols);
    case 3:
      return microKernel<3>(kc, a, lda, panel, c, ldc, cols);
    case 4:
      return microKernel<4>(kc, a, lda, panel, c, ldc, cols);
    case 5:
      return microKernel<5>(kc, a, lda, panel, c, ldc, cols);
    default:
      return;
  }
}

// Packs rows [p0, p0 + kc) of B (k x n) into panels of kNr columns, zero-padded on the right.
void packB(const float* b, int n, int p0, int kc, float* packed) {
  for (int j0 = 0; j0 < n; j0 += kNr) {
    const int cols = std::min(kNr, n - j0);
    float* panel = packed + static_cast<size_t>(j0 / kNr) * kc * kNr;
    for (int p = 0; p < kc; ++p) {
      const float* src = b + static_cast<size_t>(p0 + p) * n + j0;
      float* dst = panel + p * kNr;
      std::copy(src, src + cols, dst);
      std::fill(dst + cols, dst + kNr, 0.0f);
    }
  }
}

// A or B as f32: the data itself, or a conversion into a reused per-thread buffer.
const float* asF32(DType t, const void* src, size_t count, std::vector<float>& buf) {
  if (t == DType::F32) return static_cast<const float*>(src);
  buf.resize(count);
  halfToFloat(t, buf.data(), static_cast<const uint16_t*>(src), static_cast<int64_t>(count));
  return buf.data();
}

// The xsimd kernel: B packed per kKc rows, panel outer and rows inner.
void mmaSimd(float* c, const float* fa, const float* fb, int m, int n, int k) {
  thread_local std::vector<float> packed;
  const int panels = (n + kNr - 1) / kNr;
  packed.resize(static_cast<size_t>(panels) * kNr * std::min(k, kKc));
  for (int p0 = 0; p0 < k; p0 += kKc) {
    const int kc = std::min(kKc, k - p0);
    packB(fb, n, p0, kc, packed.data());
    // Panel outer, rows inner: the 16 KiB panel stays in L1 while A streams from L2.
    for (int j0 = 0; j0 < n; j0 += kNr) {
      const int cols = std::min(kNr, n - j0);
      const float* panel = packed.data() + static_cast<size_t>(j0 / kNr) * kc * kNr;
      int i = 0;
      for (; i + kMr <= m; i += kMr) {
        microKernel<kMr>(kc, fa + static_cast<size_t>(i) * k + p0, k, panel,
                         c + static_cast<size_t>(i) * n + j0, n, cols);
      }
      edgeRows(m - i, kc, fa + static_cast<size_t>(i) * k + p0, k, panel,
               c + static_cast<size_t>(i) * n + j0, n, cols);
    }
  }
}

}  // namespace

const char* mmaKernelName(MmaKernel kernel) {
  return kernel == MmaKernel::Simd ? "simd" : "avx512";
}

bool mmaKernelAvailable(MmaKernel kernel) {
  switch (kernel) {
    case MmaKernel::Simd:
      return true;
    case MmaKernel::Avx512:
#ifdef MIMIC_MMA_AVX512
      return detail::avx512Supported();
#else
      return false;  // the portable build's contract is a separate multiply and add
#endif
  }
  return false;
}

MmaKernel bestMmaKernel() {
  static const MmaKernel best =
      mmaKernelAvailable(MmaKernel::Avx512) ? MmaKernel::Avx512 : MmaKernel::Simd;
  return best;
}

void mmaF32(MmaKernel kernel, float* c, const float* a, const float* b, int m, int n, int k) {
  if (m <= 0 || n <= 0 || k <= 0) return;
#ifdef MIMIC_MMA_AVX512
  if (kernel == MmaKernel::Avx512) return detail::mmaAvx512(c, a, b, m, n, k);
#endif
  mmaSimd(c, a, b, m, n, k);
}

bool supportsMma(DType t) {
  return isa::typeAllowed(isa::Opcode::Mma, 0, t);
}

void mma(DType abType, float* c, const void* a, const void* b, int m, int n, int k) {
  if (!supportsMma(abType) || m <= 0 || n <= 0 || k <= 0) return;
  thread_local std::vector<float> bufA, bufB;
  const float* fa = asF32(abType, a, static_cast<size_t>(m) * k, bufA);
  const float* fb = asF32(abType, b, static_cast<size_t>(k) * n, bufB);
  mmaF32(bestMmaKernel(), c, fa, fb, m, n, k);
}

}  // namespace mimic::exec
