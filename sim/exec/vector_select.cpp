// Compare (VCmp, VCmpS), select (VSelect) and fused multiply-add (VFma).
#include <cmath>

#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"

namespace mimic::exec {
namespace {

using namespace detail;
using isa::Cond;

// dst[i] = f(a[i], b[i]) ? 1 : 0, the tail through one padded batch.
template <class T, class Src, class F>
void compareMap(uint8_t* d, const T* a, const Src& b, int64_t n, F f) {
  constexpr int64_t kW = kLanes<T>;
  int64_t i = 0;
  for (; i + kW <= n; i += kW) storeBools<T>(d + i, f(Batch<T>::load_unaligned(a + i), b.batch(i)));
  if (i == n) return;
  alignas(64) T ta[kW] = {};
  alignas(64) T tb[kW] = {};
  for (int64_t j = 0; i + j < n; ++j) {
    ta[j] = a[i + j];
    tb[j] = b.at(i + j);
  }
  storeBools<T>(d + i, f(Batch<T>::load_aligned(ta), Batch<T>::load_aligned(tb)), n - i);
}

template <class T, class Src>
void compareTyped(Cond c, uint8_t* d, const T* a, const Src& b, int64_t n) {
  using B = Batch<T>;
  switch (c) {
    case Cond::Eq:
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return x == y; });
    case Cond::Ne:
      // Not x != y: xsimd's AVX float != is the ordered compare, false for NaN.
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return ~(x == y); });
    case Cond::Lt:
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return x < y; });
    case Cond::Le:
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return x <= y; });
    case Cond::Gt:
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return x > y; });
    case Cond::Ge:
      return compareMap(d, a, b, n, [](const B& x, const B& y) { return x >= y; });
  }
}

// One batch of u8 mask bytes widened to U lanes. xsimd's generic widening load goes through a
// scalar loop; AVX2 has one-instruction zero extensions.
template <class U>
Batch<U> loadMask(const uint8_t* m) {
#if defined(__AVX2__)
  if constexpr (sizeof(typename Batch<U>::register_type) == 32 && sizeof(U) > 1) {
    if constexpr (sizeof(U) == 2) {
      return Batch<U>(_mm256_cvtepu8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(m))));
    } else if constexpr (sizeof(U) == 4) {
      return Batch<U>(_mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(m))));
    } else {
      int32_t four;
      std::memcpy(&four, m, sizeof four);
      return Batch<U>(_mm256_cvtepu8_epi64(_mm_cvtsi32_si128(four)));
    }
  }
#endif
  return xsimd::load_as<U, Arch>(m, xsimd::unaligned_mode{});
}

// Select moves bits only, so it works on unsigned integers of the element's size.
template <class U>
void selectBits(U* d, const uint8_t* m, const U* a, const U* b, int64_t n) {
  using B = Batch<U>;
  constexpr int64_t kW = kLanes<U>;
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    const B mask = loadMask<U>(m + i);
    xsimd::select(mask != B(U(0)), B::load_unaligned(a + i), B::load_unaligned(b + i))
        .store_unaligned(d + i);
  }
  for (; i < n; ++i) d[i] = m[i] ? a[i] : b[i];  // exact, so a scalar tail matches the bulk
}

template <class T, class F>
void map3(T* d, const T* a, const T* b, const T* c, int64_t n, F f) {
  using B = Batch<T>;
  constexpr int64_t kW = kLanes<T>;
  int64_t i = 0;
  for (; i + kW <= n; i += kW) {
    f(B::load_unaligned(a + i), B::load_unaligned(b + i), B::load_unaligned(c + i))
        .store_unaligned(d + i);
  }
  if (i == n) return;
  alignas(64) T ta[kW] = {};
  alignas(64) T tb[kW] = {};
  alignas(64) T tc[kW] = {};
  std::copy(a + i, a + n, ta);
  std::copy(b + i, b + n, tb);
  std::copy(c + i, c + n, tc);
  f(B::load_aligned(ta), B::load_aligned(tb), B::load_aligned(tc)).store_aligned(ta);
  std::copy(ta, ta + (n - i), d + i);
}

// a * b + c with one rounding. Without hardware FMA (MIMIC_SIMD=portable) xsimd's fma would be
// an unfused multiply and add, so that build uses libm's exact fmaf instead: the results are the
// same in every build.
void fmaF32(float* d, const float* a, const float* b, const float* c, int64_t n) {
#if defined(__FMA__)
  using B = Batch<float>;
  map3(d, a, b, c, n, [](const B& x, const B& y, const B& z) { return xsimd::fma(x, y, z); });
#else
  for (int64_t i = 0; i < n; ++i) d[i] = std::fma(a[i], b[i], c[i]);
#endif
}

}  // namespace

bool supportsCompare(Cond c, DType t) {
  return validType(t) && static_cast<int>(c) <= static_cast<int>(Cond::Ge);
}
bool supportsSelect(DType t) {
  return validType(t);
}
bool supportsFma(DType t) {
  return validType(t);
}

void compare(Cond c, DType t, uint8_t* dst, const void* a, const void* b, int64_t n) {
  if (!supportsCompare(c, t) || n <= 0) return;
  if (t == DType::F64) {
    compareTyped(c, dst, static_cast<const double*>(a),
                 ArraySrc<double>{static_cast<const double*>(b)}, n);
    return;
  }
  if (isFloatType(t)) {
    stagedVisit(t, a, b, n, [&](int64_t off, int64_t cnt, const float* fa, const float* fb) {
      compareTyped(c, dst + off, fa, ArraySrc<float>{fb}, cnt);
    });
    return;
  }
  withIntType(t, [&](auto tag) {
    using T = decltype(tag);
    compareTyped(c, dst, static_cast<const T*>(a), ArraySrc<T>{static_cast<const T*>(b)}, n);
  });
}

void compareScalar(Cond c, DType t, uint8_t* dst, const void* a, uint64_t scalarBits, int64_t n) {
  if (!supportsCompare(c, t) || n <= 0) return;
  if (t == DType::F64) {
    compareTyped(c, dst, static_cast<const double*>(a),
                 ScalarSrc<double>{scalarAs<double>(scalarBits)}, n);
    return;
  }
  if (isFloatType(t)) {
    const ScalarSrc<float> s{floatScalar(t, scalarBits)};
    stagedVisit(t, a, nullptr, n, [&](int64_t off, int64_t cnt, const float* fa, const float*) {
      compareTyped(c, dst + off, fa, s, cnt);
    });
    return;
  }
  withIntType(t, [&](auto tag) {
    using T = decltype(tag);
    compareTyped(c, dst, static_cast<const T*>(a), ScalarSrc<T>{scalarAs<T>(scalarBits)}, n);
  });
}

void select(DType t, void* dst, const uint8_t* mask, const void* a, const void* b, int64_t n) {
  if (!supportsSelect(t) || n <= 0) return;
  switch (elemSize(t)) {
    case 1:
      return selectBits(static_cast<uint8_t*>(dst), mask, static_cast<const uint8_t*>(a),
                        static_cast<const uint8_t*>(b), n);
    case 2:
      return selectBits(static_cast<uint16_t*>(dst), mask, static_cast<const uint16_t*>(a),
                        static_cast<const uint16_t*>(b), n);
    case 4:
      return selectBits(static_cast<uint32_t*>(dst), mask, static_cast<const uint32_t*>(a),
                        static_cast<const uint32_t*>(b), n);
    default:
      return selectBits(static_cast<uint64_t*>(dst), mask, static_cast<const uint64_t*>(a),
                        static_cast<const uint64_t*>(b), n);
  }
}

void fma(DType t, void* dst, const void* a, const void* b, const void* c, int64_t n) {
  if (!supportsFma(t) || n <= 0) return;
  if (t == DType::F32) {
    fmaF32(static_cast<float*>(dst), static_cast<const float*>(a), static_cast<const float*>(b),
           static_cast<const float*>(c), n);
  } else if (t == DType::F64) {
    auto* d = static_cast<double*>(dst);
    const auto *x = static_cast<const double*>(a), *y = static_cast<const double*>(b),
               *z = static_cast<const double*>(c);
    for (int64_t i = 0; i < n; ++i) d[i] = std::fma(x[i], y[i], z[i]);
  } else if (isHalfType(t)) {
    alignas(64) float fa[kChunk], fb[kChunk], fc[kChunk];
    for (int64_t i = 0; i < n; i += kChunk) {
      const int64_t cnt = std::min(kChunk, n - i);
      halfToFloat(t, fa, static_cast<const uint16_t*>(a) + i, cnt);
      halfToFloat(t, fb, static_cast<const uint16_t*>(b) + i, cnt);
      halfToFloat(t, fc, static_cast<const uint16_t*>(c) + i, cnt);
      fmaF32(fa, fa, fb, fc, cnt);
      floatToHalf(t, static_cast<uint16_t*>(dst) + i, fa, cnt);
    }
  } else {
    withIntType(t, [&](auto tag) {
      using T = decltype(tag);
      using B = Batch<T>;
      map3(static_cast<T*>(dst), static_cast<const T*>(a), static_cast<const T*>(b),
           static_cast<const T*>(c), n,
           [](const B& x, const B& y, const B& z) { return wrappingMul(x, y) + z; });
    });
  }
}

}  // namespace mimic::exec
