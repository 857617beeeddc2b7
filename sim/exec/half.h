// IEEE binary16 (f16) and bfloat16 (bf16) conversions to and from f32.
//
// Both formats are stored as raw uint16_t bits. Narrowing rounds to nearest, ties to even;
// values too large for the format become +-inf; f16 subnormals are produced and read exactly.
// NaNs stay NaN with their sign and the top payload bits, and come out quiet (the quiet bit is
// set), which is what the x86 F16C instructions do: the scalar functions here match them bit for
// bit, so a value converts the same whether it goes through the bulk or the scalar path.
// Widening is exact.
#pragma once

#include <cstdint>
#include <cstring>

namespace mimic::exec {

inline uint32_t floatToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float f16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1Fu;
  const uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) {  // inf, or NaN made quiet
    return bitsToFloat(sign | 0x7F800000u | (mant << 13) | (mant ? 0x00400000u : 0u));
  }
  if (exp != 0) return bitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
  // Zero or subnormal: mant * 2^-24, exact in f32.
  return bitsToFloat(sign | floatToBits(static_cast<float>(mant) * 0x1p-24f));
}

inline uint16_t f32ToF16(float f) {
  const uint32_t x = floatToBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t ax = x & 0x7FFFFFFFu;
  if (ax > 0x7F800000u) return sign | 0x7E00u | ((ax >> 13) & 0x3FFu);  // NaN: quiet, payload kept
  if (ax >= 0x477FF000u) return sign | 0x7C00u;  // >= 65520 (the tie above 65504) rounds to inf
  if (ax >= 0x38800000u) {                       // normal f16 (>= 2^-14): rebias, round the 13 bits
    uint32_t r = ax - 0x38000000u;
    r += 0xFFFu + ((r >> 13) & 1u);
    return sign | static_cast<uint16_t>(r >> 13);
  }
  const uint32_t e = ax >> 23;
  if (e < 102) return sign;  // below 2^-25 (half the smallest subnormal): rounds to zero
  // Subnormal: the result counts units of 2^-24. Integer rounding keeps this independent of the
  // FPU rounding mode.
  const uint32_t m = (ax & 0x7FFFFFu) | 0x800000u;
  const uint32_t shift = 126 - e;  // 14..24
  uint32_t q = m >> shift;
  const uint32_t rem = m & ((1u << shift) - 1);
  const uint32_t half = 1u << (shift - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;  // may carry into the smallest normal: right
  return sign | static_cast<uint16_t>(q);
}

inline float bf16ToF32(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) u |= 0x00400000u;  // quiet a signalling NaN, like f16
  return bitsToFloat(u);
}

inline uint16_t f32ToBf16(float f) {
  uint32_t x = floatToBits(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((x >> 16) | 0x0040u);
  // Round the low 16 bits to nearest even; a carry out of the mantissa bumps the exponent,
  // and past the largest finite value that gives inf, as it should.
  x += 0x7FFFu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

// Bulk converters, n elements, dst and src not overlapping. They use F16C/SSE2 when the
// library is built with them (sim/exec/half.cpp) and give exactly the scalar results above.
void convertF16ToF32(float* dst, const uint16_t* src, int64_t n);
void convertF32ToF16(uint16_t* dst, const float* src, int64_t n);
void convertBf16ToF32(float* dst, const uint16_t* src, int64_t n);
void convertF32ToBf16(uint16_t* dst, const float* src, int64_t n);

}  // namespace mimic::exec
