// The AVX-512 Mma kernel: the blocking of matrix.cpp on 512-bit registers, twice the multiply-
// adds per instruction of AVX2, for hosts that have AVX-512F.
//
// The library is built for AVX2, so only the functions here that carry the target attribute
// use AVX-512, and mma calls them only after asking the CPU. They are raw intrinsics, not
// xsimd: xsimd's instruction set is fixed per translation unit, and an inline function
// compiled for AVX-512 here could stand in for the AVX2 copy elsewhere at link time.
//
// Each C element is one lane that adds its products in order of k with fused multiply-adds,
// as the AVX2 kernel does, so both give the same bits.
#include <immintrin.h>

#include <algorithm>
#include <vector>

#include "sim/exec/matrix_kernels.h"

namespace mimic::exec::detail {
namespace {

constexpr int kLanes = 16;
constexpr int kMr = 8;           // rows per micro-tile: 16 accumulators + 2 B + 1 A of 32
constexpr int kNr = 2 * kLanes;  // columns per micro-tile
constexpr int kKc = 128;         // k per block: a packed panel is 16 KiB
constexpr int kPackFrom = 256;   // columns of B from which its panels are packed

// 16 columns, or those in `mask` (the others read as 0).
template <bool kFull>
__attribute__((target("avx512f"), always_inline)) inline __m512 loadColumns(const float* p,
                                                                            __mmask16 mask) {
  return kFull ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask, p);
}

// C[R x kNr] += A[R x kc] (row stride lda) * B[kc x kNr] (row stride ldb). Lanes outside
// `mask` (the columns past n) are neither read nor written.
template <int R, bool kFull>
__attribute__((target("avx512f"))) void microKernel(int kc, const float* a, int lda, const float* b,
                                                    int ldb, float* c, int ldc, __mmask16 mask0,
                                                    __mmask16 mask1) {
  __m512 acc[R][2];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc[r][0] = loadColumns<kFull>(c + r * ldc, mask0);
    acc[r][1] = loadColumns<kFull>(c + r * ldc + kLanes, mask1);
  }
  for (int p = 0; p < kc; ++p) {
    const __m512 b0 = loadColumns<kFull>(b + p * ldb, mask0);
    const __m512 b1 = loadColumns<kFull>(b + p * ldb + kLanes, mask1);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * lda + p]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if (kFull) {
      _mm512_storeu_ps(c + r * ldc, acc[r][0]);
      _mm512_storeu_ps(c + r * ldc + kLanes, acc[r][1]);
    } else {
      _mm512_mask_storeu_ps(c + r * ldc, mask0, acc[r][0]);
      _mm512_mask_storeu_ps(c + r * ldc + kLanes, mask1, acc[r][1]);
    }
  }
}

template <int R>
__attribute__((target("avx512f"))) void rowsKernel(int kc, const float* a, int lda, const float* b,
                                                   int ldb, float* c, int ldc, int cols) {
  if (cols == kNr) return microKernel<R, true>(kc, a, lda, b, ldb, c, ldc, 0, 0);
  const auto bits = [](int n) {
    return static_cast<__mmask16>(n >= kLanes ? 0xffff : n <= 0 ? 0 : (1u << n) - 1);
  };
  microKernel<R, false>(kc, a, lda, b, ldb, c, ldc, bits(cols), bits(cols - kLanes));
}

// Rows [i, i + rows) with rows < kMr.
void edgeRows(int rows, int kc, const float* a, int lda, const float* b, int ldb, float* c, int ldc,
              int cols) {
  switch (rows) {
    case 1:
      return rowsKernel<1>(kc, a, lda, b, ldb, c, ldc, cols);
    case 2:
      return rowsKernel<2>(kc, a, lda, b, ldb, c, ldc, cols);
    case 3:
      return rowsKernel<3>(kc, a, lda, b, ldb, c, ldc, cols);
    case 4:
      return rowsKernel<4>(kc, a, lda, b, ldb, c, ldc, cols);
    case 5:
      return rowsKernel<5>(kc, a, lda, b, ldb, c, ldc, cols);
    case 6:
      return rowsKernel<6>(kc, a, lda, b, ldb, c, ldc, cols);
    case 7:
      return rowsKernel<7>(kc, a, lda, b, ldb, c, ldc, cols);
    default:
      return;
  }
}

}  // namespace

bool avx512Supported() {
  // Also checks that the OS saves the 512-bit registers. The explicit init makes the answer
  // right even when asked from a static constructor that runs before libgcc's.
  static const bool supported = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return supported;
}

void mmaAvx512(float* c, const float* a, const float* b, int m, int n, int k) {
  // B's rows are read kNr columns at a time. Far apart, they alias in L1 (and cross pages): then
  // each panel is copied out first, its rows contiguous.
  const bool pack = n >= kPackFrom;
  thread_local std::vector<float> packed;
  if (pack) packed.resize(static_cast<size_t>(kKc) * kNr);
  for (int p0 = 0; p0 < k; p0 += kKc) {
    const int kc = std::min(kKc, k - p0);
    for (int j0 = 0; j0 < n; j0 += kNr) {
      const int cols = std::min(kNr, n - j0);
      const float* panel = b + static_cast<size_t>(p0) * n + j0;
      int ldb = n;
      if (pack) {
        for (int p = 0; p < kc; ++p) {
          std::copy(panel + static_cast<size_t>(p) * n, panel + static_cast<size_t>(p) * n + cols,
                    packed.data() + p * kNr);
        }
        panel = packed.data();
        ldb = kNr;
      }
      int i = 0;
      for (; i + kMr <= m; i += kMr) {
        rowsKernel<kMr>(kc, a + static_cast<size_t>(i) * k + p0, k, panel, ldb,
                        c + static_cast<size_t>(i) * n + j0, n, cols);
      }
      edgeRows(m - i, kc, a + static_cast<size_t>(i) * k + p0, k, panel, ldb,
               c + static_cast<size_t>(i) * n + j0, n, cols);
    }
  }
}

}  // namespace mimic::exec::detail
