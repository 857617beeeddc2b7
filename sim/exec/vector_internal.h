// Shared building blocks of the vector math implementation (not a public header: it pulls in
// xsimd, whose instruction set is fixed by this library's compile flags).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xsimd/xsimd.hpp>

#include "sim/exec/half.h"
#include "sim/isa/isa.h"

namespace mimic::exec::detail {

using isa::DType;
using Arch = xsimd::default_arch;
template <class T>
using Batch = xsimd::batch<T, Arch>;
template <class T>
using BatchBool = xsimd::batch_bool<T, Arch>;
template <class T>
constexpr int64_t kLanes = static_cast<int64_t>(Batch<T>::size);

// f16/bf16 rows are converted to f32 in chunks of this many elements (2 KiB per operand, so the
// staged operands stay in L1).
constexpr int64_t kChunk = 512;

inline bool validType(DType t) {
  return static_cast<int>(t) < isa::kNumDTypes;
}
inline bool isFloatType(DType t) {
  return isa::isFloat(t);
}
// f32, f16 and bf16: the types computed in f32 (f64 has paths of its own).
inline bool isF32Family(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
inline bool isHalfType(DType t) {
  return t == DType::F16 || t == DType::BF16;
}
inline int elemSize(DType t) {
  return isa::dtypeSize(t);
}

inline float halfToFloat(DType t, uint16_t h) {
  return t == DType::F16 ? f16ToF32(h) : bf16ToF32(h);
}
inline uint16_t floatToHalf(DType t, float f) {
  return t == DType::F16 ? f32ToF16(f) : f32ToBf16(f);
}
inline void halfToFloat(DType t, float* dst, const uint16_t* src, int64_t n) {
  if (t == DType::F16) {
    convertF16ToF32(dst, src, n);
  } else {
    convertBf16ToF32(dst, src, n);
  }
}
inline void floatToHalf(DType t, uint16_t* dst, const float* src, int64_t n) {
  if (t == DType::F16) {
    convertF32ToF16(dst, src, n);
  } else {
    convertF32ToBf16(dst, src, n);
  }
}

// The scalar operand of a *Scalar instruction: the low bits of `bits` read as T.
template <class T>
T scalarAs(uint64_t bits) {
  T v;
  std::memcpy(&v, &bits, sizeof v);  // little-endian: the low bytes come first
  return v;
}
// A float-typed scalar operand as the f32 value the computation uses.
inline float floatScalar(DType t, uint64_t bits) {
  if (t == DType::F32) return scalarAs<float>(bits);
  return halfToFloat(t, static_cast<uint16_t>(bits));
}

// A second operand: an array, or one scalar broadcast to every element.
template <class T>
struct ArraySrc {
  const T* p;
  Batch<T> batch(int64_t i) const { return Batch<T>::load_unaligned(p + i); }
  T at(int64_t i) const { return p[i]; }
};
template <class T>
struct ScalarSrc {
  T v;
  Batch<T> batch(int64_t) const { return Batch<T>(v); }
  T at(int64_t) const { return v; }
};

// dst[i] = f(a[i], b[i]) over batches. The tail goes through one zero-padded batch rather than
// scalar code, so every element gets the same instruction sequence wherever it sits in the row
// (bit-identical results for approximated functions).
template <class T, class Src, class F>
void map2(T* dst, const T* a, const Src& b, int64_t n, F f) {
  constexpr int64_t kW = kLanes<T>;
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    f(Batch<T>::load_unaligned(a + i), b.batch(i)).store_unaligned(dst + i);
  }
  if (i == n) return;
  alignas(64) T ta[kW] = {};
  alignas(64) T tb[kW] = {};
  for (int64_t j = 0; i + j < n; ++j) {
    ta[j] = a[i + j];
    tb[j] = b.at(i + j);
  }
  f(Batch<T>::load_aligned(ta), Batch<T>::load_aligned(tb)).store_aligned(ta);
  std::copy(ta, ta + (n - i), dst + i);
}

template <class T, class F>
void map1(T* dst, const T* a, int64_t n, F f) {
  map2(dst, a, ScalarSrc<T>{T(0)}, n, [&](const Batch<T>& x, const Batch<T>&) { return f(x); });
}

// Writes a batch of compare results as u8 1/0.
template <class T>
void storeBools(uint8_t* dst, const BatchBool<T>& m, int64_t count = kLanes<T>) {
  using Int = std::conditional_t<std::is_floating_point_v<T>,
                                 std::conditional_t<sizeof(T) == 8, int64_t, int32_t>, T>;
  using U = std::make_unsigned_t<Int>;
  static_assert(sizeof(U) == sizeof(T));
  alignas(64) U tmp[kLanes<T>];
  // Only bits are moved: a float mask turns into an integer lane of all ones or zero.
  xsimd::bitwise_cast<Batch<U>>(xsimd::bitwise_cast(m)).store_aligned(tmp);
  for (int64_t j = 0; j < count; ++j) dst[j] = static_cast<uint8_t>(tmp[j] & 1u);
}

// Runs a float kernel over n elements of float type t: directly on f32 data, through f32
// chunks for f16/bf16. kernel(float* out, const float* in, int64_t count) may work in place.
template <class K>
void stagedMap1(DType t, void* dst, const void* src, int64_t n, K kernel) {
  if (t == DType::F32) {
    kernel(static_cast<float*>(dst), static_cast<const float*>(src), n);
    return;
  }
  alignas(64) float buf[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t c = std::min(kChunk, n - i);
    halfToFloat(t, buf, static_cast<const uint16_t*>(src) + i, c);
    kernel(buf, buf, c);
    floatToHalf(t, static_cast<uint16_t*>(dst) + i, buf, c);
  }
}

// Calls visit(offset, count, const float* a, const float* b) over f32 views of float-typed
// inputs (b may be null).
template <class V>
void stagedVisit(DType t, const void* a, const void* b, int64_t n, V visit) {
  if (t == DType::F32) {
    visit(int64_t{0}, n, static_cast<const float*>(a), static_cast<const float*>(b));
    return;
  }
  alignas(64) float fa[kChunk];
  alignas(64) float fb[kChunk];
  for (int64_t i = 0; i < n; i += kChunk) {
    const int64_t c = std::min(kChunk, n - i);
    halfToFloat(t, fa, static_cast<const uint16_t*>(a) + i, c);
    if (b) halfToFloat(t, fb, static_cast<const uint16_t*>(b) + i, c);
    visit(i, c, static_cast<const float*>(fa), b ? static_cast<const float*>(fb) : nullptr);
  }
}

// Float max/min with NaN propagation (either NaN gives NaN) and a symmetric signed zero:
// max(-0, +0) = +0, min(-0, +0) = -0. The x86 max/min instructions return their second operand
// for both cases, which would make the result depend on operand order.
template <class F>
Batch<F> nanMax(const Batch<F>& a, const Batch<F>& b) {
  Batch<F> r = xsimd::select(a > b, a, b);
  r = xsimd::select(a == b, a & b, r);
  return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, r);
}
template <class F>
Batch<F> nanMin(const Batch<F>& a, const Batch<F>& b) {
  Batch<F> r = xsimd::select(a < b, a, b);
  r = xsimd::select(a == b, a | b, r);
  return xsimd::select(xsimd::isnan(a) || xsimd::isnan(b), a + b, r);
}

// Integer multiply that wraps: on unsigned lanes, because xsimd's scalar fallback (used for
// 64-bit lanes) multiplies signed values, and signed overflow is undefined in C++.
template <class T>
Batch<T> wrappingMul(const Batch<T>& x, const Batch<T>& y) {
  if constexpr (std::is_signed_v<T>) {
    using UB = Batch<std::make_unsigned_t<T>>;
    return xsimd::bitwise_cast<Batch<T>>(xsimd::bitwise_cast<UB>(x) * xsimd::bitwise_cast<UB>(y));
  } else {
    return x * y;
  }
}

// Calls f(T{}) with T the element type of integer dtype t (i8, i16, i32, i64, u8).
template <class F>
void withIntType(DType t, F f) {
  switch (t) {
    case DType::I8:
      f(int8_t{});
      break;
    case DType::I16:
      f(int16_t{});
      break;
    case DType::I32:
      f(int32_t{});
      break;
    case DType::I64:
      f(int64_t{});
      break;
    case DType::U8:
      f(uint8_t{});
      break;
    default:
      break;
  }
}

}  // namespace mimic::exec::detail
