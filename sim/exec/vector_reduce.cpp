// Reductions of one row to one value (VReduce).
#include <cmath>
#include <limits>

#include "sim/exec/vector_internal.h"
#include "sim/exec/vector_math.h"

namespace mimic::exec {
namespace {

using namespace detail;
using isa::ReduceOp;
using FB = Batch<float>;

constexpr float kInf = std::numeric_limits<float>::infinity();

// f32 sum as 16 interleaved partial sums (partial j adds the elements i with i % 16 == j) that
// are combined pairwise at the end. The grouping does not depend on the SIMD width, so every
// build gives the same bits; it is also more accurate than one running sum.
class F32Sum {
 public:
  F32Sum() {
    // -0 is the identity of IEEE addition (+0 would turn a sum of -0s into +0).
    for (auto& a : acc_) a = FB(-0.0f);
  }
  // Adds n values; n must be a multiple of 16 except in the last call.
  void add(const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + kParts <= n; i += kParts) {
      for (int g = 0; g < kGroups; ++g) acc_[g] += FB::load_unaligned(x + i + g * kLanes<float>);
    }
    if (i == n) return;
    alignas(64) float t[kParts];
    std::fill(t, t + kParts, -0.0f);
    std::copy(x + i, x + n, t);
    for (int g = 0; g < kGroups; ++g) acc_[g] += FB::load_aligned(t + g * kLanes<float>);
  }
  float result() const {
    alignas(64) float p[kParts];
    for (int g = 0; g < kGroups; ++g) acc_[g].store_aligned(p + g * kLanes<float>);
    for (int w = kParts / 2; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) p[j] += p[j + w];
    }
    return p[0];
  }

 private:
  static constexpr int kParts = 16;
  static constexpr int kGroups = kParts / static_cast<int>(kLanes<float>);
  static_assert(kParts % kLanes<float> == 0);
  FB acc_[kGroups];
};

// The scalar twins of nanMax/nanMin, for folding lanes.
float maxScalar(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return bitsToFloat(floatToBits(a) & floatToBits(b));
  return a > b ? a : b;
}
float minScalar(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  if (a == b) return bitsToFloat(floatToBits(a) | floatToBits(b));
  return a < b ? a : b;
}

// Running max or min of f32 chunks.
class F32Extreme {
 public:
  explicit F32Extreme(bool isMax) : isMax_(isMax), acc_(isMax ? -kInf : kInf) {}
  void add(const float* x, int64_t n) {
    int64_t i = 0;
    for (; i + kLanes<float> <= n; i += kLanes<float>) {
      const FB v = FB::load_unaligned(x + i);
      acc_ = isMax_ ? nanMax(acc_, v) : nanMin(acc_, v);
    }
    for (; i < n; ++i) tail_ = isMax_ ? maxScalar(tail_, x[i]) : minScalar(tail_, x[i]);
  }
  float result() const {
    alignas(64) float lanes[kLanes<float>];
    acc_.store_aligned(lanes);
    float r = tail_;
    for (float v : lanes) r = isMax_ ? maxScalar(r, v) : minScalar(r, v);
    return r;
  }

 private:
  bool isMax_;
  FB acc_;
  float tail_ = isMax_ ? -kInf : kInf;
};

// Index of the first element equal to m (or the first NaN if m is NaN) in x[0..n), or -1.
int64_t findFirst(const float* x, int64_t n, float m) {
  const bool nan = std::isnan(m);
  int64_t i = 0;
  for (; i + kLanes<float> <= n; i += kLanes<float>) {
    const FB v = FB::load_unaligned(x + i);
    if (xsimd::any(nan ? xsimd::isnan(v) : v == FB(m))) break;
  }
  for (; i < n; ++i) {
    if (nan ? std::isnan(x[i]) : x[i] == m) return i;
  }
  return -1;
}

void reduceFloat(ReduceOp op, DType t, void* dst, const void* src, int64_t n) {
  float r = 0.0f;
  if (op == ReduceOp::Sum) {
    F32Sum sum;
    stagedVisit(t, src, nullptr, n,
                [&](int64_t, int64_t c, const float* x, const float*) { sum.add(x, c); });
    r = n > 0 ? sum.result() : 0.0f;
  } else {
    F32Extreme ext(op == ReduceOp::Max || op == ReduceOp::ArgMax);
    stagedVisit(t, src, nullptr, n,
                [&](int64_t, int64_t c, const float* x, const float*) { ext.add(x, c); });
    r = ext.result();
    if (op == ReduceOp::ArgMax || op == ReduceOp::ArgMin) {
      int64_t index = -1;
      stagedVisit(t, src, nullptr, n, [&](int64_t off, int64_t c, const float* x, const float*) {
        if (index >= 0) return;
        const int64_t k = findFirst(x, c, r);
        if (k >= 0) index = off + k;
      });
      std::memcpy(dst, &index, sizeof index);
      return;
    }
  }
  if (t == DType::F32) {
    std::memcpy(dst, &r, sizeof r);
  } else {
    const uint16_t h = floatToHalf(t, r);
    std::memcpy(dst, &h, sizeof h);
  }
}

// f64: 16 interleaved partial sums combined pairwise, as the f32 sum (so the grouping is
// fixed); max/min/arg with the same NaN and signed-zero rules.
void reduceDouble(ReduceOp op, double* dst, const double* x, int64_t n) {
  if (op == ReduceOp::Sum) {
    constexpr int kParts = 16;
    double p[kParts];
    std::fill(p, p + kParts, -0.0);
    for (int64_t i = 0; i < n; ++i) p[i % kParts] += x[i];
    for (int w = kParts / 2; w >= 1; w /= 2) {
      for (int j = 0; j < w; ++j) p[j] += p[j + w];
    }
    *dst = n > 0 ? p[0] : 0.0;
    return;
  }
  const bool isMax = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  const double inf = std::numeric_limits<double>::infinity();
  double m = isMax ? -inf : inf;
  for (int64_t i = 0; i < n; ++i) {
    const double v = x[i];
    if (std::isnan(m) || std::isnan(v)) {
      m = m + v;
    } else if (m == v) {
      uint64_t a, b;
      std::memcpy(&a, &m, sizeof a);
      std::memcpy(&b, &v, sizeof b);
      a = isMax ? a & b : a | b;
      std::memcpy(&m, &a, sizeof m);
    } else if (isMax ? v > m : v < m) {
      m = v;
    }
  }
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    *dst = m;
    return;
  }
  int64_t index = -1;
  for (int64_t i = 0; i < n; ++i) {
    if (std::isnan(m) ? std::isnan(x[i]) : x[i] == m) {
      index = i;
      break;
    }
  }
  std::memcpy(dst, &index, sizeof index);
}

template <class T>
void reduceInt(ReduceOp op, T* dst, const T* x, int64_t n) {
  using B = Batch<T>;
  using U = std::make_unsigned_t<T>;
  constexpr int64_t kW = kLanes<T>;
  alignas(64) T lanes[kW];
  int64_t i = 0;
  if (op == ReduceOp::Sum) {
    B acc(T(0));  // SIMD integer adds wrap, as the result must
    for (; i + kW <= n; i += kW) acc += B::load_unaligned(x + i);
    acc.store_aligned(lanes);
    U s = 0;
    for (T v : lanes) s = static_cast<U>(s + static_cast<U>(v));
    for (; i < n; ++i) s = static_cast<U>(s + static_cast<U>(x[i]));
    *dst = static_cast<T>(s);
    return;
  }
  const bool isMax = op == ReduceOp::Max || op == ReduceOp::ArgMax;
  const T identity = isMax ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
  B acc(identity);
  for (; i + kW <= n; i += kW) {
    const B v = B::load_unaligned(x + i);
    acc = isMax ? xsimd::max(acc, v) : xsimd::min(acc, v);
  }
  acc.store_aligned(lanes);
  T m = identity;
  for (T v : lanes) m = isMax ? std::max(m, v) : std::min(m, v);
  for (; i < n; ++i) m = isMax ? std::max(m, x[i]) : std::min(m, x[i]);
  if (op == ReduceOp::Max || op == ReduceOp::Min) {
    *dst = m;
    return;
  }
  int64_t index = -1;
  for (i = 0; i + kW <= n; i += kW) {
    if (xsimd::any(B::load_unaligned(x + i) == B(m))) break;
  }
  for (; i < n; ++i) {
    if (x[i] == m) {
      index = i;
      break;
    }
  }
  std::memcpy(dst, &index, sizeof index);
}

}  // namespace

bool supportsReduce(ReduceOp op, DType t) {
  return validType(t) && static_cast<int>(op) <= static_cast<int>(ReduceOp::ArgMin);
}

void reduce(ReduceOp op, DType t, void* dst, const void* src, int64_t n) {
  if (!supportsReduce(op, t)) return;
  n = std::max<int64_t>(n, 0);
  if (t == DType::F64) {
    reduceDouble(op, static_cast<double*>(dst), static_cast<const double*>(src), n);
    return;
  }
  if (isFloatType(t)) {
    reduceFloat(op, t, dst, src, n);
    return;
  }
  withIntType(t, [&](auto tag) {
    using T = decltype(tag);
    reduceInt(op, static_cast<T*>(dst), static_cast<const T*>(src), n);
  });
}

}  // namespace mimic::exec
