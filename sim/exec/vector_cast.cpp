// Type conversion (VCast), fill (VFill) and iota (VIota).
#include <limits>

#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::exec {
namespace {

using namespace detail;

// float -> integer: truncation toward zero, NaN -> 0, saturation outside the type's range.
template <class T, class F>
T floatToInt(F x) {
  if (!(x == x)) return 0;
  if constexpr (std::is_same_v<T, uint8_t>) {
    if (x <= F(0)) return 0;
    if (x >= F(255)) return 255;
    return static_cast<uint8_t>(x);
  } else {
    // -2^(bits-1) and 2^(bits-1) are exact in F; the cast is defined in between.
    const F kLimit = static_cast<F>(std::numeric_limits<T>::max()) + F(1);
    if (x >= kLimit) return std::numeric_limits<T>::max();
    if (x < -kLimit) return std::numeric_limits<T>::min();
    return static_cast<T>(x);
  }
}

// An integer to bf16, correctly rounded. Going through f32 would round twice for |v| > 2^24
// (e.g. 2^24 + 2^16 + 1 would become 2^24 instead of 2^24 + 2^17).
uint16_t intToBf16(int64_t v) {
  if (v > -(int64_t{1} << 24) && v < (int64_t{1} << 24)) return f32ToBf16(static_cast<float>(v));
  const uint16_t sign = v < 0 ? 0x8000u : 0u;
  const uint64_t u = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  int exp = 63 - __builtin_clzll(u);  // >= 24 here
  const int shift = exp - 7;          // bf16 keeps 8 significant bits
  uint64_t mant = u >> shift;
  const uint64_t rem = u & ((uint64_t{1} << shift) - 1);
  const uint64_t half = uint64_t{1} << (shift - 1);
  if (rem > half || (rem == half && (mant & 1u))) {
    if (++mant == 0x100u) {
      mant = 0x80u;
      ++exp;
    }
  }
  return static_cast<uint16_t>(sign | ((exp + 127) << 7) | (mant & 0x7Fu));
}

void f32ToI32(int32_t* d, const float* s, int64_t n) {
  using FB = Batch<float>;
  using IB = Batch<int32_t>;
  constexpr int64_t kW = kLanes<float>;
  static_assert(kLanes<int32_t> == kW);
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    const FB x = FB::load_unaligned(s + i);
    IB r = xsimd::batch_cast<int32_t>(x);  // truncates; out of range and NaN give INT_MIN
    r = xsimd::select(xsimd::bool_cast(x >= FB(2147483648.0f)), IB(INT32_MAX), r);
    r = xsimd::select(xsimd::bool_cast(xsimd::isnan(x)), IB(0), r);
    r.store_unaligned(d + i);
  }
  for (; i < n; ++i) d[i] = floatToInt<int32_t>(s[i]);  // exact: the same as the bulk
}

// Clamped in f32 first (x > 0 is false for NaN, which becomes 0), then truncated: the same
// values as floatToInt<uint8_t>.
void f32ToU8(uint8_t* d, const float* s, int64_t n) {
  using FB = Batch<float>;
  constexpr int64_t kW = kLanes<float>;
  int64_t i = 0;
  alignas(64) int32_t lanes[kW];
  for (; i + kW <= n; i += kW) {
    const FB x = FB::load_unaligned(s + i);
    const FB clamped = xsimd::min(xsimd::select(x > FB(0.0f), x, FB(0.0f)), FB(255.0f));
    xsimd::batch_cast<int32_t>(clamped).store_aligned(lanes);
    for (int64_t j = 0; j < kW; ++j) d[i + j] = static_cast<uint8_t>(lanes[j]);
  }
  for (; i < n; ++i) d[i] = floatToInt<uint8_t>(s[i]);
}

// Converts n f32 values to type `to` at dst.
void castFromF32(DType to, void* dst, const float* s, int64_t n) {
  switch (to) {
    case DType::F32:
      std::memcpy(dst, s, static_cast<size_t>(n) * sizeof(float));
      return;
    case DType::F16:
    case DType::BF16:
      return floatToHalf(to, static_cast<uint16_t*>(dst), s, n);
    case DType::I32:
      return f32ToI32(static_cast<int32_t*>(dst), s, n);
    case DType::I64:
      for (int64_t i = 0; i < n; ++i) static_cast<int64_t*>(dst)[i] = floatToInt<int64_t>(s[i]);
      return;
    case DType::U8:
      return f32ToU8(static_cast<uint8_t*>(dst), s, n);
    case DType::I8:
      for (int64_t i = 0; i < n; ++i) static_cast<int8_t*>(dst)[i] = floatToInt<int8_t>(s[i]);
      return;
    case DType::I16:
      for (int64_t i = 0; i < n; ++i) static_cast<int16_t*>(dst)[i] = floatToInt<int16_t>(s[i]);
      return;
    case DType::F64:
      for (int64_t i = 0; i < n; ++i) static_cast<double*>(dst)[i] = s[i];  // exact
      return;
  }
}

template <class T>
void doublesToInt(void* dst, const double* s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) static_cast<T*>(dst)[i] = floatToInt<T>(s[i]);
}

// Converts n f64 values to type `to` at dst, each correctly rounded once (f64 -> f16 through f32
// would round twice).
void castFromF64(DType to, void* dst, const double* s, int64_t n) {
  switch (to) {
    case DType::F64:
      std::memcpy(dst, s, static_cast<size_t>(n) * sizeof(double));
      return;
    case DType::F32:
      for (int64_t i = 0; i < n; ++i) static_cast<float*>(dst)[i] = static_cast<float>(s[i]);
      return;
    case DType::F16:
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) {
        static_cast<uint16_t*>(dst)[i] = static_cast<uint16_t>(isa::floatToBits(s[i], to));
      }
      return;
    case DType::I32:
      return doublesToInt<int32_t>(dst, s, n);
    case DType::I64:
      return doublesToInt<int64_t>(dst, s, n);
    case DType::U8:
      return doublesToInt<uint8_t>(dst, s, n);
    case DType::I8:
      return doublesToInt<int8_t>(dst, s, n);
    case DType::I16:
      return doublesToInt<int16_t>(dst, s, n);
  }
}

// Converts n integers of type T to type `to` at dst.
template <class T>
void castFromInt(DType to, void* dst, const T* s, int64_t n) {
  switch (to) {
    case DType::F32: {
      auto* d = static_cast<float*>(dst);
      if constexpr (std::is_same_v<T, int32_t>) {
        using IB = Batch<int32_t>;
        int64_t i = 0;
        for (; i + kLanes<int32_t> <= n; i += kLanes<int32_t>) {
          xsimd::batch_cast<float>(IB::load_unaligned(s + i)).store_unaligned(d + i);
        }
        for (; i < n; ++i) d[i] = static_cast<float>(s[i]);
      } else {
        // int64 -> float is one correctly rounded conversion (cvtsi2ss), not via double.
        for (int64_t i = 0; i < n; ++i) d[i] = static_cast<float>(s[i]);
      }
      return;
    }
    case DType::F16: {
      // Through f32 is exact here: below 2^24 the f32 value is exact, above it f16 is inf anyway.
      alignas(64) float buf[kChunk];
      auto* d = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; i += kChunk) {
        const int64_t c = std::min(kChunk, n - i);
        castFromInt(DType::F32, buf, s + i, c);
        convertF32ToF16(d + i, buf, c);
      }
      return;
    }
    case DType::BF16:
      for (int64_t i = 0; i < n; ++i) static_cast<uint16_t*>(dst)[i] = intToBf16(s[i]);
      return;
    // Integer to integer: sign or zero extension, or the low bits (wrapping).
    case DType::I32:
      for (int64_t i = 0; i < n; ++i) static_cast<int32_t*>(dst)[i] = static_cast<int32_t>(s[i]);
      return;
    case DType::I64:
      for (int64_t i = 0; i < n; ++i) static_cast<int64_t*>(dst)[i] = static_cast<int64_t>(s[i]);
      return;
    case DType::U8:
      for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(dst)[i] = static_cast<uint8_t>(s[i]);
      return;
    case DType::I8:
      for (int64_t i = 0; i < n; ++i) static_cast<int8_t*>(dst)[i] = static_cast<int8_t>(s[i]);
      return;
    case DType::I16:
      for (int64_t i = 0; i < n; ++i) static_cast<int16_t*>(dst)[i] = static_cast<int16_t>(s[i]);
      return;
    case DType::F64:
      // Correctly rounded for i64 (one cvtsi2sd), exact for the narrower types.
      for (int64_t i = 0; i < n; ++i) static_cast<double*>(dst)[i] = static_cast<double>(s[i]);
      return;
  }
}

template <class U>
void fillBits(U* d, U v, int64_t n) {
  const Batch<U> b(v);
  int64_t i = 0;
  for (; i + kLanes<U> <= n; i += kLanes<U>) b.store_unaligned(d + i);
  for (; i < n; ++i) d[i] = v;
}

}  // namespace

bool supportsCast(DType from, DType to) {
  return validType(from) && validType(to);
}
bool supportsFill(DType t) {
  return validType(t);
}
bool supportsIota(DType t) {
  return validType(t);
}

void cast(DType from, DType to, void* dst, const void* src, int64_t n) {
  if (!supportsCast(from, to) || n <= 0) return;
  if (from == to) {
    std::memmove(dst, src, static_cast<size_t>(n) * elemSize(from));
    return;
  }
  if (from == DType::F32) {
    castFromF32(to, dst, static_cast<const float*>(src), n);
  } else if (from == DType::F64) {
    castFromF64(to, dst, static_cast<const double*>(src), n);
  } else if (isHalfType(from)) {
    // Widening f16/bf16 to f32 is exact, so every conversion from them goes through f32.
    auto* out = static_cast<uint8_t*>(dst);
    stagedVisit(from, src, nullptr, n, [&](int64_t off, int64_t c, const float* f, const float*) {
      castFromF32(to, out + off * elemSize(to), f, c);
    });
  } else {
    withIntType(from, [&](auto tag) {
      using T = decltype(tag);
      castFromInt(to, dst, static_cast<const T*>(src), n);
    });
  }
}

void fill(DType t, void* dst, uint64_t scalarBits, int64_t n) {
  if (!supportsFill(t) || n <= 0) return;
  switch (elemSize(t)) {
    case 1:
      return fillBits(static_cast<uint8_t*>(dst), scalarAs<uint8_t>(scalarBits), n);
    case 2:
      return fillBits(static_cast<uint16_t*>(dst), scalarAs<uint16_t>(scalarBits), n);
    case 4:
      return fillBits(static_cast<uint32_t*>(dst), scalarAs<uint32_t>(scalarBits), n);
    default:
      return fillBits(static_cast<uint64_t*>(dst), scalarBits, n);
  }
}

void iota(DType t, void* dst, int64_t n) {
  if (!supportsIota(t) || n <= 0) return;
  // The indices as i64, converted chunk by chunk with the cast rules.
  alignas(64) int64_t idx[kChunk];
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t c = std::min(kChunk, n - i);
    for (int64_t j = 0; j < c; ++j) idx[j] = i + j;
    castFromInt<int64_t>(t, out + i * elemSize(t), idx, c);
  }
}

}  // namespace mimic::exec
