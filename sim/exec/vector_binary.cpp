// Elementwise binary ops against an array (VBinary) or a scalar (VBinaryS).
#include <cmath>

#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/validate.h"

namespace mimic::exec {
namespace {

using namespace detail;
using isa::BinaryOp;

// Pow and Rem run per element through libm: xsimd 8.1's pow is exp(y * log|x|), which loses
// tens of ULPs for large results and gets pow(0, 0), pow(NaN, 0), pow(1, NaN) and pow(0, -y)
// wrong; its fmod is x - trunc(x / y) * y, which is not exact. powf/fmodf are (near) correctly
// rounded and handle every IEEE special case. Both ops are rare in kernels. F is float (f32,
// f16, bf16) or double (f64).
template <class F, class Src>
void floatBinary(BinaryOp op, F* d, const F* a, const Src& b, int64_t n) {
  using FB = Batch<F>;
  switch (op) {
    case BinaryOp::Add:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return x + y; });
    case BinaryOp::Sub:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return x - y; });
    case BinaryOp::Mul:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return x * y; });
    case BinaryOp::Div:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return x / y; });
    case BinaryOp::Max:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return nanMax(x, y); });
    case BinaryOp::Min:
      return map2(d, a, b, n, [](const FB& x, const FB& y) { return nanMin(x, y); });
    case BinaryOp::Pow:
      for (int64_t i = 0; i < n; ++i) d[i] = std::pow(a[i], b.at(i));
      return;
    case BinaryOp::Rem:
      for (int64_t i = 0; i < n; ++i) d[i] = std::fmod(a[i], b.at(i));
      return;
    default:
      return;  // And/Or/Xor: integer-only
  }
}

template <class T>
using Unsigned = std::make_unsigned_t<T>;

// Division by zero gives 0 (the device does not trap); INT_MIN / -1 wraps to INT_MIN.
template <class T>
T intDiv(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return static_cast<T>(Unsigned<T>(0) - static_cast<Unsigned<T>>(a));
  }
  return static_cast<T>(a / b);
}

template <class T>
T intRem(T a, T b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // also INT_MIN % -1, which would trap in C
  }
  return static_cast<T>(a % b);
}

template <class T>
T intPow(T base, T e) {
  if constexpr (std::is_signed_v<T>) {
    if (e < 0) {
      if (base == 1) return 1;
      if (base == -1) return (e & 1) ? T(-1) : T(1);
      return 0;  // |base^e| < 1 truncates to 0 (also for base 0, which has no value)
    }
  }
  // Unsigned arithmetic wraps by definition; u8 multiplies in 32 bits and keeps the low byte.
  using U = std::conditional_t<(sizeof(T) < 4), uint32_t, Unsigned<T>>;
  U result = 1;
  U b = static_cast<U>(base);
  for (uint64_t k = static_cast<uint64_t>(e); k != 0; k >>= 1) {
    if (k & 1) result *= b;
    b *= b;
  }
  return static_cast<T>(result);
}

template <class T, class Src>
void intBinary(BinaryOp op, T* d, const T* a, const Src& b, int64_t n) {
  using B = Batch<T>;
  switch (op) {
    case BinaryOp::Add:
      return map2(d, a, b, n, [](const B& x, const B& y) { return x + y; });
    case BinaryOp::Sub:
      return map2(d, a, b, n, [](const B& x, const B& y) { return x - y; });
    case BinaryOp::Mul:
      return map2(d, a, b, n, [](const B& x, const B& y) { return wrappingMul(x, y); });
    case BinaryOp::Max:
      return map2(d, a, b, n, [](const B& x, const B& y) { return xsimd::max(x, y); });
    case BinaryOp::Min:
      return map2(d, a, b, n, [](const B& x, const B& y) { return xsimd::min(x, y); });
    case BinaryOp::And:
      return map2(d, a, b, n, [](const B& x, const B& y) { return x & y; });
    case BinaryOp::Or:
      return map2(d, a, b, n, [](const B& x, const B& y) { return x | y; });
    case BinaryOp::Xor:
      return map2(d, a, b, n, [](const B& x, const B& y) { return x ^ y; });
    // No SIMD integer division on x86: these are scalar.
    case BinaryOp::Div:
      for (int64_t i = 0; i < n; ++i) d[i] = intDiv(a[i], b.at(i));
      return;
    case BinaryOp::Rem:
      for (int64_t i = 0; i < n; ++i) d[i] = intRem(a[i], b.at(i));
      return;
    case BinaryOp::Pow:
      for (int64_t i = 0; i < n; ++i) d[i] = intPow(a[i], b.at(i));
      return;
  }
}

}  // namespace

bool supportsBinary(BinaryOp op, DType t) {
  return static_cast<int>(op) <= static_cast<int>(BinaryOp::Rem) &&
         isa::typeAllowed(isa::Opcode::VBinary, static_cast<uint8_t>(op), t);
}

void binary(BinaryOp op, DType t, void* dst, const void* a, const void* b, int64_t n) {
  if (!supportsBinary(op, t) || n <= 0) return;
  if (t == DType::F32) {
    floatBinary(op, static_cast<float*>(dst), static_cast<const float*>(a),
                ArraySrc<float>{static_cast<const float*>(b)}, n);
  } else if (t == DType::F64) {
    floatBinary(op, static_cast<double*>(dst), static_cast<const double*>(a),
                ArraySrc<double>{static_cast<const double*>(b)}, n);
  } else if (isHalfType(t)) {
    auto* out = static_cast<uint16_t*>(dst);
    stagedVisit(t, a, b, n, [&](int64_t off, int64_t c, const float* fa, const float* fb) {
      alignas(64) float r[kChunk];
      floatBinary(op, r, fa, ArraySrc<float>{fb}, c);
      floatToHalf(t, out + off, r, c);
    });
  } else {
    withIntType(t, [&](auto tag) {
      using T = decltype(tag);
      intBinary(op, static_cast<T*>(dst), static_cast<const T*>(a),
                ArraySrc<T>{static_cast<const T*>(b)}, n);
    });
  }
}

void binaryScalar(BinaryOp op, DType t, void* dst, const void* a, uint64_t scalarBits, int64_t n) {
  if (!supportsBinary(op, t) || n <= 0) return;
  if (t == DType::F64) {
    floatBinary(op, static_cast<double*>(dst), static_cast<const double*>(a),
                ScalarSrc<double>{scalarAs<double>(scalarBits)}, n);
  } else if (isFloatType(t)) {
    const ScalarSrc<float> s{floatScalar(t, scalarBits)};
    stagedMap1(t, dst, a, n,
               [&](float* d, const float* x, int64_t c) { floatBinary(op, d, x, s, c); });
  } else {
    withIntType(t, [&](auto tag) {
      using T = decltype(tag);
      intBinary(op, static_cast<T*>(dst), static_cast<const T*>(a),
                ScalarSrc<T>{scalarAs<T>(scalarBits)}, n);
    });
  }
}

}  // namespace mimic::exec
