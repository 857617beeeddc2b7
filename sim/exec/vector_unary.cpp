// Elementwise unary ops (VUnary).
#include <cmath>

#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"
#include "sim/isa/validate.h"

namespace mimic::exec {
namespace {

using namespace detail;
using isa::UnaryOp;
using FB = Batch<float>;

// xsimd's exp flushes results that would be subnormal (x < -87.34) to 0 and overflows from
// x > 88.38, although f32 goes up to e^88.72. Lanes in those two windows (rare in practice)
// take libm's double exp, correctly rounded to f32. Beyond them xsimd's 0 and inf are right, so
// -inf (masked softmax) stays on the fast path. The decision depends on the value only, so an
// element's result does not depend on its neighbours.
bool needsLibmExp(float x) {
  return (x > -104.0f && x < -87.0f) || (x > 88.0f && x < 89.0f);
}

// xsimd reduces arguments beyond its medium range (a few hundred) element by element with a
// routine that left-shifts negative values (undefined in C++17; UBSan stops the fuzzer on it).
// Those lanes, and NaN and infinities, take libm's double sin or cos rounded to f32; the others
// keep xsimd's result, computed as if the large lanes were 0 so that they do not change it.
template <typename VectorFn>
FB trig(const FB& x, VectorFn vector, double (*scalar)(double)) {
  const auto large = !(xsimd::abs(x) <= xsimd::constants::mediumpi<FB>());
  if (!xsimd::any(large)) return vector(x);
  alignas(64) float in[kLanes<float>], out[kLanes<float>], flag[kLanes<float>];
  x.store_aligned(in);
  vector(xsimd::select(large, FB(0.0f), x)).store_aligned(out);
  xsimd::select(large, FB(1.0f), FB(0.0f)).store_aligned(flag);
  for (size_t i = 0; i < kLanes<float>; ++i) {
    if (flag[i] != 0.0f) out[i] = static_cast<float>(scalar(static_cast<double>(in[i])));
  }
  return FB::load_aligned(out);
}

FB exp(const FB& x) {
  FB r = xsimd::exp(x);
  const auto low = (x > FB(-104.0f)) && (x < FB(-87.0f));
  const auto high = (x > FB(88.0f)) && (x < FB(89.0f));
  if (xsimd::any(low || high)) {
    alignas(64) float in[kLanes<float>], out[kLanes<float>];
    x.store_aligned(in);
    r.store_aligned(out);
    for (int64_t j = 0; j < kLanes<float>; ++j) {
      if (needsLibmExp(in[j])) out[j] = static_cast<float>(std::exp(double{in[j]}));
    }
    r = FB::load_aligned(out);
  }
  return r;
}

// Sigmoid as 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: exp only ever sees
// -|x| <= 0, so it cannot overflow, and tiny results for very negative x stay accurate.
FB sigmoid(const FB& x) {
  const FB e = exp(-xsimd::abs(x));
  const FB one(1.0f);
  return xsimd::select(x < FB(0.0f), e, one) / (one + e);
}

template <class F>
void mapF32(float* dst, const float* src, int64_t n, F f) {
  map1(dst, src, n, f);
}

// The f32 kernel of op over n elements (f16/bf16 arrive here through staging).
void floatUnary(UnaryOp op, float* d, const float* s, int64_t n) {
  // Rounding results take the input's sign so that -0.3 -> -0 and floor(-0) = -0 in every build
  // (xsimd's SSE2 fallback truncates through an int conversion, which drops the sign of zero).
  switch (op) {
    case UnaryOp::Neg:
      return mapF32(d, s, n, [](const FB& x) { return -x; });
    case UnaryOp::Abs:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::abs(x); });
    case UnaryOp::Exp:
      return mapF32(d, s, n, [](const FB& x) { return exp(x); });
    case UnaryOp::Log:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::log(x); });
    case UnaryOp::Sqrt:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::sqrt(x); });
    case UnaryOp::Rsqrt:
      // Not xsimd::rsqrt: that is the 12-bit hardware estimate.
      return mapF32(d, s, n, [](const FB& x) { return FB(1.0f) / xsimd::sqrt(x); });
    case UnaryOp::Tanh:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::tanh(x); });
    case UnaryOp::Sigmoid:
      return mapF32(d, s, n, [](const FB& x) { return sigmoid(x); });
    case UnaryOp::Erf:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::erf(x); });
    case UnaryOp::Sin:
      return mapF32(d, s, n, [](const FB& x) {
        return trig(
            x, [](const FB& v) { return xsimd::sin(v); }, std::sin);
      });
    case UnaryOp::Cos:
      return mapF32(d, s, n, [](const FB& x) {
        return trig(
            x, [](const FB& v) { return xsimd::cos(v); }, std::cos);
      });
    case UnaryOp::Floor:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::copysign(xsimd::floor(x), x); });
    case UnaryOp::Ceil:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::copysign(xsimd::ceil(x), x); });
    case UnaryOp::Round:
      // nearbyint rounds in the current mode, which is nearest-even (the simulator never
      // changes it).
      return mapF32(d, s, n, [](const FB& x) { return xsimd::copysign(xsimd::nearbyint(x), x); });
    case UnaryOp::Trunc:
      return mapF32(d, s, n, [](const FB& x) { return xsimd::copysign(xsimd::trunc(x), x); });
    case UnaryOp::Recip:
      // Not xsimd::reciprocal: that is the 12-bit hardware estimate.
      return mapF32(d, s, n, [](const FB& x) { return FB(1.0f) / x; });
    case UnaryOp::Relu:
      // x <= 0 is false for NaN, which therefore passes through; -0 becomes +0.
      return mapF32(d, s, n, [](const FB& x) { return xsimd::select(x <= FB(0.0f), FB(0.0f), x); });
    case UnaryOp::Not:
      return;
  }
}

// f64 element by element through libm (correctly rounded or within 1 ULP for the basic
// functions, glibc's documented bounds for the others); f64 kernels are rare, so plain loops.
double doubleUnaryOne(UnaryOp op, double x) {
  switch (op) {
    case UnaryOp::Neg:
      return -x;
    case UnaryOp::Abs:
      return std::fabs(x);
    case UnaryOp::Exp:
      return std::exp(x);
    case UnaryOp::Log:
      return std::log(x);
    case UnaryOp::Sqrt:
      return std::sqrt(x);
    case UnaryOp::Rsqrt:
      return 1.0 / std::sqrt(x);
    case UnaryOp::Tanh:
      return std::tanh(x);
    case UnaryOp::Sigmoid: {
      // As the f32 form: exp only sees -|x|, so it cannot overflow.
      const double e = std::exp(-std::fabs(x));
      return (x < 0.0 ? e : 1.0) / (1.0 + e);
    }
    case UnaryOp::Erf:
      return std::erf(x);
    case UnaryOp::Sin:
      return std::sin(x);
    case UnaryOp::Cos:
      return std::cos(x);
    case UnaryOp::Floor:
      return std::floor(x);
    case UnaryOp::Ceil:
      return std::ceil(x);
    case UnaryOp::Round:
      return std::nearbyint(x);  // the rounding mode is nearest-even (never changed)
    case UnaryOp::Trunc:
      return std::trunc(x);
    case UnaryOp::Recip:
      return 1.0 / x;
    case UnaryOp::Relu:
      return x <= 0.0 ? 0.0 : x;
    case UnaryOp::Not:
      break;
  }
  return x;
}

template <class T>
void intUnary(UnaryOp op, T* d, const T* s, int64_t n) {
  using B = Batch<T>;
  constexpr bool kSigned = std::is_signed_v<T>;
  switch (op) {
    case UnaryOp::Neg:
      return map1(d, s, n, [](const B& x) { return B(T(0)) - x; });
    case UnaryOp::Abs:
      if constexpr (kSigned) {
        return map1(d, s, n, [](const B& x) { return xsimd::select(x < B(T(0)), B(T(0)) - x, x); });
      }
      break;  // the identity for u8
    case UnaryOp::Relu:
      if constexpr (kSigned)
        return map1(d, s, n, [](const B& x) { return xsimd::max(x, B(T(0))); });
      break;  // the identity for u8
    case UnaryOp::Not:
      if constexpr (kSigned) {
        return map1(d, s, n, [](const B& x) { return ~x; });
      } else {  // u8 is a bool here: logical not
        return map1(d, s, n,
                    [](const B& x) { return xsimd::select(x == B(T(0)), B(T(1)), B(T(0))); });
      }
    case UnaryOp::Floor:
    case UnaryOp::Ceil:
    case UnaryOp::Round:
    case UnaryOp::Trunc:
      break;
    default:
      return;  // float-only
  }
  if (d != s) std::memmove(d, s, static_cast<size_t>(n) * sizeof(T));
}

}  // namespace

// Which types an operation is defined for is the ISA's rule (sim/isa/validate.h).
bool supportsUnary(UnaryOp op, DType t) {
  return static_cast<int>(op) <= static_cast<int>(UnaryOp::Not) &&
         isa::typeAllowed(isa::Opcode::VUnary, static_cast<uint8_t>(op), t);
}

void unary(UnaryOp op, DType t, void* dst, const void* src, int64_t n) {
  if (!supportsUnary(op, t) || n <= 0) return;
  if (t == DType::F64) {
    auto* d = static_cast<double*>(dst);
    const auto* x = static_cast<const double*>(src);
    for (int64_t i = 0; i < n; ++i) d[i] = doubleUnaryOne(op, x[i]);
    return;
  }
  if (isFloatType(t)) {
    stagedMap1(t, dst, src, n,
               [op](float* d, const float* s, int64_t c) { floatUnary(op, d, s, c); });
    return;
  }
  withIntType(t, [&](auto tag) {
    using T = decltype(tag);
    intUnary(op, static_cast<T*>(dst), static_cast<const T*>(src), n);
  });
}

}  // namespace mimic::exec
