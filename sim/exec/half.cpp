// Bulk f16/bf16 conversions. These live in a .cpp (not inline in half.h) so that the F16C code is
// compiled once with the library's ISA flags: an inline definition would differ between
// translation units built with and without -mf16c.
#include "sim/exec/half.h"

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace mimic::exec {

void convertF16ToF32(float* dst, const uint16_t* src, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) dst[i] = f16ToF32(src[i]);
}

void convertF32ToF16(uint16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8) {
    const __m128i h =
        _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), h);
  }
#endif
  for (; i < n; ++i) dst[i] = f32ToF16(src[i]);
}

#if defined(__SSE2__)
namespace {

// Four bf16 values (already in the high halves of 32-bit lanes) to f32, NaNs made quiet.
inline __m128 quietNaNs(__m128i bits) {
  const __m128 v = _mm_castsi128_ps(bits);
  const __m128 nan = _mm_cmpunord_ps(v, v);
  return _mm_or_ps(v, _mm_and_ps(nan, _mm_castsi128_ps(_mm_set1_epi32(0x00400000))));
}

// Four f32 to bf16 bits, rounded to nearest even, sign-extended in 32-bit lanes so that
// _mm_packs_epi32 (SSE2 has no unsigned 32->16 pack) keeps the low 16 bits exactly.
inline __m128i roundToBf16(__m128 v) {
  const __m128i x = _mm_castps_si128(v);
  const __m128i lsb = _mm_and_si128(_mm_srli_epi32(x, 16), _mm_set1_epi32(1));
  const __m128i rounded = _mm_add_epi32(_mm_add_epi32(x, _mm_set1_epi32(0x7FFF)), lsb);
  const __m128i quiet = _mm_or_si128(x, _mm_set1_epi32(0x00400000));
  const __m128i nan = _mm_castps_si128(_mm_cmpunord_ps(v, v));
  const __m128i r = _mm_or_si128(_mm_and_si128(nan, quiet), _mm_andnot_si128(nan, rounded));
  return _mm_srai_epi32(r, 16);
}

}  // namespace
#endif

void convertBf16ToF32(float* dst, const uint16_t* src, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  const __m128i zero = _mm_setzero_si128();
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    _mm_storeu_ps(dst + i, quietNaNs(_mm_unpacklo_epi16(zero, h)));
    _mm_storeu_ps(dst + i + 4, quietNaNs(_mm_unpackhi_epi16(zero, h)));
  }
#endif
  for (; i < n; ++i) dst[i] = bf16ToF32(src[i]);
}

void convertF32ToBf16(uint16_t* dst, const float* src, int64_t n) {
  int64_t i = 0;
#if defined(__SSE2__)
  for (; i + 8 <= n; i += 8) {
    const __m128i lo = roundToBf16(_mm_loadu_ps(src + i));
    const __m128i hi = roundToBf16(_mm_loadu_ps(src + i + 4));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i), _mm_packs_epi32(lo, hi));
  }
#endif
  for (; i < n; ++i) dst[i] = f32ToBf16(src[i]);
}

}  // namespace mimic::exec
