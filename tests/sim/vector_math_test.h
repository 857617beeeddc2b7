// Shared helpers of the vector/matrix math tests (tests/sim/test_vector_*.cpp): type facts,
// reference float formats, guarded rows, inputs with specials, and the references used by more
// than one test file.
//
// The references are independent of the code under test: f16/bf16/f32 rounding is done by a
// binary search over the format's values in long double (rounding to nearest even by
// definition), integer results are computed in 64-bit unsigned arithmetic and truncated.
//
// Header-only (inline), as every tests/sim/test_*.cpp is an executable of its own.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "sim/exec/vector_math.h"

namespace mimic::exec::vector_math_test {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::ReduceOp;
using isa::UnaryOp;

inline constexpr DType kTypes[] = {DType::F32, DType::F16, DType::BF16,
                                   DType::I32, DType::I64, DType::U8};
inline constexpr int64_t kLengths[] = {0, 1, 7, 8, 9, 33, 1000};
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Local type facts (isa.cpp's helpers are not part of this library).
inline const char* typeName(DType t) {
  static const char* const kNames[] = {"f32", "f16", "bf16", "i32", "i64", "u8"};
  return kNames[static_cast<int>(t)];
}
inline int typeSize(DType t) {
  static const int kSizes[] = {4, 2, 2, 4, 8, 1};
  return kSizes[static_cast<int>(t)];
}
inline bool isFloatT(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// ---- Reference float formats ----------------------------------------------------------------

struct Format {
  int mant, exp;
  int signShift() const { return mant + exp; }
  uint32_t infBits() const { return ((1u << exp) - 1) << mant; }
};
inline Format formatOf(DType t) {
  if (t == DType::F16) return {10, 5};
  if (t == DType::BF16) return {7, 8};
  return {23, 8};
}

// The magnitude of a non-negative pattern. The inf pattern decodes as 2^(emax+1), the value at
// which rounding overflows, which makes the search below handle overflow like any other value.
inline long double magnitude(const Format& f, uint32_t bits) {
  const int bias = (1 << (f.exp - 1)) - 1;
  const uint32_t e = bits >> f.mant;
  const uint32_t m = bits & ((1u << f.mant) - 1);
  if (e == 0) return std::ldexp(static_cast<long double>(m), 1 - bias - f.mant);
  return std::ldexp(static_cast<long double>((1u << f.mant) + m),
                    static_cast<int>(e) - bias - f.mant);
}

inline long double decodeFloat(DType t, uint64_t bits) {
  const Format f = formatOf(t);
  const uint32_t mag = static_cast<uint32_t>(bits) & ((1u << f.signShift()) - 1);
  const bool neg = (bits >> f.signShift()) & 1;
  long double v;
  if (mag > f.infBits()) {
    v = std::numeric_limits<long double>::quiet_NaN();
  } else if (mag == f.infBits()) {
    v = std::numeric_limits<long double>::infinity();
  } else {
    v = magnitude(f, mag);
  }
  return neg ? -v : v;
}

inline bool isNaNBits(DType t, uint64_t bits) {
  const Format f = formatOf(t);
  return (static_cast<uint32_t>(bits) & ((1u << f.signShift()) - 1)) > f.infBits();
}

// Rounds an exact value to the format, nearest even; NaN becomes the canonical quiet NaN.
inline uint64_t roundTo(DType t, long double v) {
  const Format f = formatOf(t);
  const uint32_t sign = std::signbit(v) ? 1u << f.signShift() : 0u;
  if (std::isnan(v)) return sign | f.infBits() | (1u << (f.mant - 1));
  const long double a = std::fabs(v);
  uint32_t lo = 0, hi = f.infBits();
  if (a >= magnitude(f, hi)) return sign | hi;
  while (hi - lo > 1) {  // invariant: magnitude(lo) <= a < magnitude(hi)
    const uint32_t mid = lo + (hi - lo) / 2;
    (magnitude(f, mid) <= a ? lo : hi) = mid;
  }
  const long double below = a - magnitude(f, lo), above = magnitude(f, hi) - a;
  const uint32_t r = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
  return sign | r;
}

inline uint64_t encodeFloat(DType t, float f) {
  return roundTo(t, f);
}

inline int64_t decodeInt(DType t, uint64_t bits) {
  if (t == DType::I32) return static_cast<int32_t>(static_cast<uint32_t>(bits));
  if (t == DType::U8) return static_cast<uint8_t>(bits);
  return static_cast<int64_t>(bits);
}
inline uint64_t encodeInt(DType t, uint64_t v) {  // keeps the low bits: two's complement wrapping
  return typeSize(t) == 8 ? v : v & ((uint64_t{1} << (8 * typeSize(t))) - 1);
}
inline int64_t minOf(DType t) {
  return t == DType::I32 ? INT32_MIN : t == DType::I64 ? INT64_MIN : 0;
}
inline int64_t maxOf(DType t) {
  return t == DType::I32 ? INT32_MAX : t == DType::I64 ? INT64_MAX : 255;
}

// Distance in units in the last place of the format (NaN to NaN is 0).
inline int64_t ulpDistance(DType t, uint64_t x, uint64_t y) {
  if (isNaNBits(t, x) || isNaNBits(t, y)) {
    return isNaNBits(t, x) && isNaNBits(t, y) ? 0 : INT64_MAX;
  }
  const Format f = formatOf(t);
  auto ordinal = [&](uint64_t b) {
    const int64_t mag = static_cast<int64_t>(b & ((uint64_t{1} << f.signShift()) - 1));
    return ((b >> f.signShift()) & 1) ? -mag : mag;
  };
  return std::abs(ordinal(x) - ordinal(y));
}

// ---- Rows -----------------------------------------------------------------------------------

// A row of n elements of type t placed `offset` elements past a 64-byte boundary (so not SIMD
// aligned unless offset is 0), surrounded by guard bytes that no call may touch.
class Row {
 public:
  Row(DType t, int64_t n, int offset = 1) : t_(t), n_(n), size_(typeSize(t)) {
    buf_.assign(static_cast<size_t>((n + offset) * size_ + 64 + kGuard), kPattern);
    const uintptr_t base = reinterpret_cast<uintptr_t>(buf_.data());
    start_ = static_cast<size_t>((64 - base % 64) % 64 + offset * size_);
  }
  DType type() const { return t_; }
  int64_t size() const { return n_; }
  void* data() { return buf_.data() + start_; }
  const void* data() const { return buf_.data() + start_; }
  uint64_t get(int64_t i) const {
    uint64_t v = 0;
    std::memcpy(&v, buf_.data() + start_ + i * size_, size_);
    return v;
  }
  void set(int64_t i, uint64_t bits) {
    std::memcpy(buf_.data() + start_ + i * size_, &bits, size_);
  }
  long double value(int64_t i) const { return decodeFloat(t_, get(i)); }
  int64_t integer(int64_t i) const { return decodeInt(t_, get(i)); }
  bool guardsIntact() const {
    const size_t end = start_ + n_ * size_;
    for (size_t j = 0; j < buf_.size(); ++j) {
      if ((j < start_ || j >= end) && buf_[j] != kPattern) return false;
    }
    return true;
  }

 private:
  static constexpr size_t kGuard = 64;
  static constexpr uint8_t kPattern = 0xCD;
  DType t_;
  int64_t n_;
  int size_;
  size_t start_;
  std::vector<uint8_t> buf_;
};

// Collects mismatches and reports the first few.
class Mismatches {
 public:
  explicit Mismatches(std::string what) : what_(std::move(what)) {}
  ~Mismatches() { EXPECT_EQ(count_, 0) << what_ << ": " << count_ << " mismatches" << first_; }
  void check(bool ok, int64_t i, const std::string& detail) {
    if (ok) return;
    if (count_++ < 5) first_ += "\n  [" + std::to_string(i) + "] " + detail;
  }

 private:
  std::string what_, first_;
  int64_t count_ = 0;
};

inline std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}
inline std::string show(DType t, uint64_t bits) {
  if (!isFloatT(t)) return std::to_string(decodeInt(t, bits));
  char s[64];
  std::snprintf(s, sizeof s, "%.9Lg (%s)", decodeFloat(t, bits), hex(bits).c_str());
  return s;
}

// ---- Inputs ---------------------------------------------------------------------------------

inline const std::vector<float>& floatSpecials() {
  static const std::vector<float> v = {0.0f,
                                       -0.0f,
                                       1.0f,
                                       -1.0f,
                                       0.5f,
                                       -0.5f,
                                       1.5f,
                                       -1.5f,
                                       2.5f,
                                       -2.5f,
                                       3.0f,
                                       0.001f,
                                       -7.25f,
                                       100.0f,
                                       -100.0f,
                                       65504.0f,
                                       65520.0f,
                                       1e30f,
                                       -1e30f,
                                       std::numeric_limits<float>::max(),
                                       std::numeric_limits<float>::min(),
                                       std::numeric_limits<float>::denorm_min(),
                                       -1e-40f,
                                       6e-8f,
                                       8388609.0f,
                                       0.49999997f,
                                       kInf,
                                       -kInf,
                                       kNaN,
                                       -kNaN};
  return v;
}

inline std::vector<int64_t> intSpecials(DType t) {
  if (t == DType::U8) return {0, 1, 2, 3, 7, 100, 127, 128, 200, 254, 255};
  return {0, 1, -1, 2, -2, 3, -7, 7, 100, -100, minOf(t), maxOf(t), minOf(t) + 1, maxOf(t) - 1};
}

// Special values (as bits of t); in pairs mode the row is the first or second coordinate of
// the specials' cross product.
inline std::vector<uint64_t> specialBits(DType t) {
  std::vector<uint64_t> v;
  if (isFloatT(t)) {
    for (float f : floatSpecials()) v.push_back(encodeFloat(t, f));
  } else {
    for (int64_t x : intSpecials(t)) v.push_back(encodeInt(t, static_cast<uint64_t>(x)));
  }
  return v;
}

inline uint64_t randomBits(DType t, std::mt19937_64& rng, float range) {
  if (isFloatT(t)) {
    float f;
    if (rng() % 2) {
      f = std::uniform_real_distribution<float>(-range, range)(rng);
    } else {  // any magnitude up to the range, log-uniformly
      const float e = std::uniform_real_distribution<float>(-30.0f, std::log2(range))(rng);
      f = std::exp2(e) * (rng() % 2 ? 1.0f : -1.0f);
    }
    return encodeFloat(t, f);
  }
  if (rng() % 2) return encodeInt(t, rng());
  return encodeInt(t, static_cast<uint64_t>(static_cast<int64_t>(rng() % 201) - 100));
}

// Fills rows with random values, then with the specials (their cross product for several rows)
// scattered over random positions, so that they land in both bulk and tail.
inline void fillInputs(std::vector<Row*> rows, std::mt19937_64& rng, float range = 100.0f,
                       bool specials = true) {
  const int64_t n = rows[0]->size();
  for (Row* r : rows) {
    for (int64_t i = 0; i < n; ++i) r->set(i, randomBits(r->type(), rng, range));
  }
  if (!specials || n == 0) return;
  std::vector<int64_t> pos(n);
  for (int64_t i = 0; i < n; ++i) pos[i] = i;
  std::shuffle(pos.begin(), pos.end(), rng);
  std::vector<std::vector<uint64_t>> sp;
  int64_t combos = 1;
  for (Row* r : rows) {
    sp.push_back(specialBits(r->type()));
    combos *= static_cast<int64_t>(sp.back().size());
  }
  for (int64_t c = 0; c < std::min(n, combos); ++c) {
    int64_t k = c;
    for (size_t j = 0; j < rows.size(); ++j) {
      rows[j]->set(pos[c], sp[j][k % sp[j].size()]);
      k /= static_cast<int64_t>(sp[j].size());
    }
  }
}

// ---- References -----------------------------------------------------------------------------

// Float results are computed in f32 and rounded to the type, as the library documents.
inline float refMax(float x, float y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  if (x == y) return std::signbit(x) ? y : x;  // +0 wins
  return x > y ? x : y;
}
inline float refMin(float x, float y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  if (x == y) return std::signbit(x) ? x : y;  // -0 wins
  return x < y ? x : y;
}

// Compares a float-typed result: NaN matches any NaN, otherwise bits within `ulps`.
inline bool floatMatches(DType t, uint64_t got, uint64_t want, int64_t ulps = 0) {
  return ulpDistance(t, got, want) <= ulps;
}

}  // namespace mimic::exec::vector_math_test
