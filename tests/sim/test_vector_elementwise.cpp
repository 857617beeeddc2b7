// Tests of the functional vector/matrix math (sim/exec) against scalar references.
//
// The references are independent of the code under test: f16/bf16/f32 rounding is done by a
// binary search over the format's values in long double (rounding to nearest even by
// definition), integer results are computed in 64-bit unsigned arithmetic and truncated.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/exec/half.h"
#include "sim/exec/vector_math.h"

namespace mimic::exec {
namespace {

using isa::BinaryOp;
using isa::Cond;
using isa::DType;
using isa::ReduceOp;
using isa::UnaryOp;

constexpr DType kTypes[] = {DType::F32, DType::F16, DType::BF16, DType::I32, DType::I64, DType::U8};
constexpr int64_t kLengths[] = {0, 1, 7, 8, 9, 33, 1000};
constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNaN = std::numeric_limits<float>::quiet_NaN();

// Local type facts (isa.cpp's helpers are not part of this library).
const char* typeName(DType t) {
  static const char* const kNames[] = {"f32", "f16", "bf16", "i32", "i64", "u8"};
  return kNames[static_cast<int>(t)];
}
int typeSize(DType t) {
  static const int kSizes[] = {4, 2, 2, 4, 8, 1};
  return kSizes[static_cast<int>(t)];
}
bool isFloatT(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

// ---- Reference float formats ----------------------------------------------------------------

struct Format {
  int mant, exp;
  int signShift() const { return mant + exp; }
  uint32_t infBits() const { return ((1u << exp) - 1) << mant; }
};
Format formatOf(DType t) {
  if (t == DType::F16) return {10, 5};
  if (t == DType::BF16) return {7, 8};
  return {23, 8};
}

// The magnitude of a non-negative pattern. The inf pattern decodes as 2^(emax+1), the value at
// which rounding overflows, which makes the search below handle overflow like any other value.
long double magnitude(const Format& f, uint32_t bits) {
  const int bias = (1 << (f.exp - 1)) - 1;
  const uint32_t e = bits >> f.mant;
  const uint32_t m = bits & ((1u << f.mant) - 1);
  if (e == 0) return std::ldexp(static_cast<long double>(m), 1 - bias - f.mant);
  return std::ldexp(static_cast<long double>((1u << f.mant) + m),
                    static_cast<int>(e) - bias - f.mant);
}

long double decodeFloat(DType t, uint64_t bits) {
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

bool isNaNBits(DType t, uint64_t bits) {
  const Format f = formatOf(t);
  return (static_cast<uint32_t>(bits) & ((1u << f.signShift()) - 1)) > f.infBits();
}

// Rounds an exact value to the format, nearest even; NaN becomes the canonical quiet NaN.
uint64_t roundTo(DType t, long double v) {
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

uint64_t encodeFloat(DType t, float f) {
  return roundTo(t, f);
}

int64_t decodeInt(DType t, uint64_t bits) {
  if (t == DType::I32) return static_cast<int32_t>(static_cast<uint32_t>(bits));
  if (t == DType::U8) return static_cast<uint8_t>(bits);
  return static_cast<int64_t>(bits);
}
uint64_t encodeInt(DType t, uint64_t v) {  // keeps the low bits: two's complement wrapping
  return typeSize(t) == 8 ? v : v & ((uint64_t{1} << (8 * typeSize(t))) - 1);
}
int64_t minOf(DType t) {
  return t == DType::I32 ? INT32_MIN : t == DType::I64 ? INT64_MIN : 0;
}
int64_t maxOf(DType t) {
  return t == DType::I32 ? INT32_MAX : t == DType::I64 ? INT64_MAX : 255;
}

// Distance in units in the last place of the format (NaN to NaN is 0).
int64_t ulpDistance(DType t, uint64_t x, uint64_t y) {
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

std::string hex(uint64_t v) {
  char s[24];
  std::snprintf(s, sizeof s, "0x%llx", static_cast<unsigned long long>(v));
  return s;
}
std::string show(DType t, uint64_t bits) {
  if (!isFloatT(t)) return std::to_string(decodeInt(t, bits));
  char s[64];
  std::snprintf(s, sizeof s, "%.9Lg (%s)", decodeFloat(t, bits), hex(bits).c_str());
  return s;
}

// ---- Inputs ---------------------------------------------------------------------------------

const std::vector<float>& floatSpecials() {
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

std::vector<int64_t> intSpecials(DType t) {
  if (t == DType::U8) return {0, 1, 2, 3, 7, 100, 127, 128, 200, 254, 255};
  return {0, 1, -1, 2, -2, 3, -7, 7, 100, -100, minOf(t), maxOf(t), minOf(t) + 1, maxOf(t) - 1};
}

// Special values (as bits of t); in pairs mode the row is the first or second coordinate of
// the specials' cross product.
std::vector<uint64_t> specialBits(DType t) {
  std::vector<uint64_t> v;
  if (isFloatT(t)) {
    for (float f : floatSpecials()) v.push_back(encodeFloat(t, f));
  } else {
    for (int64_t x : intSpecials(t)) v.push_back(encodeInt(t, static_cast<uint64_t>(x)));
  }
  return v;
}

uint64_t randomBits(DType t, std::mt19937_64& rng, float range) {
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
void fillInputs(std::vector<Row*> rows, std::mt19937_64& rng, float range = 100.0f,
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
float refMax(float x, float y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  if (x == y) return std::signbit(x) ? y : x;  // +0 wins
  return x > y ? x : y;
}
float refMin(float x, float y) {
  if (std::isnan(x) || std::isnan(y)) return kNaN;
  if (x == y) return std::signbit(x) ? x : y;  // -0 wins
  return x < y ? x : y;
}

bool isApproximate(UnaryOp op) {
  switch (op) {
    case UnaryOp::Exp:
    case UnaryOp::Log:
    case UnaryOp::Rsqrt:
    case UnaryOp::Tanh:
    case UnaryOp::Sigmoid:
    case UnaryOp::Erf:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
      return true;
    default:
      return false;
  }
}

// The largest error (f32 ULPs against the correctly rounded result) the library may have.
// Measured with 25M inputs per function (half uniform in the useful range, half uniform in bit
// pattern over all finite floats), in both SIMD builds: exp 1-2, log 1, tanh 1, sigmoid 2,
// erf 2, sin 2, cos 2, rsqrt 1. TranscendentalAccuracy prints the values for its own sample.
int64_t ulpBound(UnaryOp op) {
  switch (op) {
    case UnaryOp::Rsqrt:
    case UnaryOp::Log:
    case UnaryOp::Tanh:
      return 1;
    case UnaryOp::Exp:
    case UnaryOp::Sigmoid:
    case UnaryOp::Erf:
    case UnaryOp::Sin:
    case UnaryOp::Cos:
      return 2;
    default:
      return 0;
  }
}

// Exact ops in f32; approximate ones as the correctly rounded (double) value.
float refUnaryF32(UnaryOp op, float x) {
  const double d = x;
  switch (op) {
    case UnaryOp::Neg:
      return -x;
    case UnaryOp::Abs:
      return std::fabs(x);
    case UnaryOp::Exp:
      return static_cast<float>(std::exp(d));
    case UnaryOp::Log:
      return static_cast<float>(std::log(d));
    case UnaryOp::Sqrt:
      return std::sqrt(x);
    case UnaryOp::Rsqrt:
      return static_cast<float>(1.0 / std::sqrt(d));
    case UnaryOp::Tanh:
      return static_cast<float>(std::tanh(d));
    case UnaryOp::Sigmoid:
      return static_cast<float>(1.0 / (1.0 + std::exp(-d)));
    case UnaryOp::Erf:
      return static_cast<float>(std::erf(d));
    case UnaryOp::Sin:
      return static_cast<float>(std::sin(d));
    case UnaryOp::Cos:
      return static_cast<float>(std::cos(d));
    case UnaryOp::Floor:
      return std::floor(x);
    case UnaryOp::Ceil:
      return std::ceil(x);
    case UnaryOp::Round:
      return std::nearbyint(x);
    case UnaryOp::Trunc:
      return std::trunc(x);
    case UnaryOp::Recip:
      return 1.0f / x;
    case UnaryOp::Relu:
      return std::isnan(x) ? x : x > 0 ? x : 0.0f;
    case UnaryOp::Not:
      break;
  }
  return kNaN;
}

uint64_t refUnaryInt(UnaryOp op, DType t, int64_t a) {
  const uint64_t u = static_cast<uint64_t>(a);
  switch (op) {
    case UnaryOp::Neg:
      return encodeInt(t, 0 - u);
    case UnaryOp::Abs:
      return encodeInt(t, a < 0 ? 0 - u : u);
    case UnaryOp::Relu:
      return encodeInt(t, a < 0 ? 0 : u);
    case UnaryOp::Not:
      return t == DType::U8 ? (a == 0 ? 1 : 0) : encodeInt(t, ~u);
    default:
      return encodeInt(t, u);  // Floor, Ceil, Round, Trunc
  }
}

float refBinaryF32(BinaryOp op, float x, float y) {
  switch (op) {
    case BinaryOp::Add:
      return x + y;
    case BinaryOp::Sub:
      return x - y;
    case BinaryOp::Mul:
      return x * y;
    case BinaryOp::Div:
      return x / y;
    case BinaryOp::Max:
      return refMax(x, y);
    case BinaryOp::Min:
      return refMin(x, y);
    case BinaryOp::Pow:
      return std::pow(x, y);
    case BinaryOp::Rem:
      return std::fmod(x, y);
    default:
      return kNaN;
  }
}

uint64_t refPow(DType t, int64_t base, int64_t e) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? encodeInt(t, (e % 2) ? ~uint64_t{0} : 1) : 0;
  uint64_t r = 1;
  for (int64_t k = 0; k < e; ++k) r *= static_cast<uint64_t>(base);
  return encodeInt(t, r);
}

uint64_t refBinaryInt(BinaryOp op, DType t, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case BinaryOp::Add:
      return encodeInt(t, ua + ub);
    case BinaryOp::Sub:
      return encodeInt(t, ua - ub);
    case BinaryOp::Mul:
      return encodeInt(t, ua * ub);
    case BinaryOp::Div:
      if (b == 0) return 0;
      if (b == -1) return encodeInt(t, 0 - ua);
      return encodeInt(t, static_cast<uint64_t>(a / b));
    case BinaryOp::Rem:
      if (b == 0 || b == -1) return 0;
      return encodeInt(t, static_cast<uint64_t>(a % b));
    case BinaryOp::Max:
      return encodeInt(t, static_cast<uint64_t>(std::max(a, b)));
    case BinaryOp::Min:
      return encodeInt(t, static_cast<uint64_t>(std::min(a, b)));
    case BinaryOp::Pow:
      return refPow(t, a, b);
    case BinaryOp::And:
      return encodeInt(t, ua & ub);
    case BinaryOp::Or:
      return encodeInt(t, ua | ub);
    case BinaryOp::Xor:
      return encodeInt(t, ua ^ ub);
  }
  return 0;
}

template <class V>
bool refCompare(Cond c, V x, V y) {
  switch (c) {
    case Cond::Eq:
      return x == y;
    case Cond::Ne:
      return !(x == y);
    case Cond::Lt:
      return x < y;
    case Cond::Le:
      return x <= y;
    case Cond::Gt:
      return x > y;
    case Cond::Ge:
      return x >= y;
  }
  return false;
}

// The documented cast rules, from an exact source value.
uint64_t refCast(DType from, DType to, uint64_t bits) {
  if (from == to) return bits;
  if (isFloatT(from)) {
    const long double v = decodeFloat(from, bits);
    if (isFloatT(to)) return roundTo(to, v);
    if (std::isnan(v)) return 0;
    const long double tr = std::trunc(v);
    const long double lo = static_cast<long double>(minOf(to));
    const long double hi = static_cast<long double>(maxOf(to));
    if (tr <= lo) return encodeInt(to, static_cast<uint64_t>(minOf(to)));
    if (tr >= hi) return encodeInt(to, static_cast<uint64_t>(maxOf(to)));
    return encodeInt(to, static_cast<uint64_t>(static_cast<int64_t>(tr)));
  }
  const int64_t v = decodeInt(from, bits);
  if (isFloatT(to)) return roundTo(to, static_cast<long double>(v));  // exact in long double
  return encodeInt(to, static_cast<uint64_t>(v));
}

// The library's documented f32 summation: 16 interleaved partial sums, combined pairwise.
float refSum16(const std::vector<float>& x) {
  if (x.empty()) return 0.0f;
  float p[16];
  std::fill(p, p + 16, -0.0f);
  for (size_t i = 0; i < x.size(); ++i) p[i % 16] += x[i];
  for (int w = 8; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) p[j] += p[j + w];
  }
  return p[0];
}

// Compares a float-typed result: NaN matches any NaN, otherwise bits within `ulps`.
bool floatMatches(DType t, uint64_t got, uint64_t want, int64_t ulps = 0) {
  return ulpDistance(t, got, want) <= ulps;
}

// ---- Tests ----------------------------------------------------------------------------------

TEST(VectorMath, ReportsSimdArch) {
  std::printf("vector math built for %s\n", simdArchName());
  SUCCEED();
}

TEST(VectorMath, SupportMatrix) {
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(UnaryOp::Not); ++op) {
      const auto u = static_cast<UnaryOp>(op);
      const bool floatOnly = (u >= UnaryOp::Exp && u <= UnaryOp::Cos) || u == UnaryOp::Recip;
      const bool expect = isFloatT(t) ? u != UnaryOp::Not : !floatOnly;
      EXPECT_EQ(supportsUnary(u, t), expect) << typeName(t) << " unary " << op;
    }
    for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
      const auto b = static_cast<BinaryOp>(op);
      const bool bitwise = b == BinaryOp::And || b == BinaryOp::Or || b == BinaryOp::Xor;
      EXPECT_EQ(supportsBinary(b, t), !(isFloatT(t) && bitwise)) << typeName(t) << " binary " << op;
    }
    for (DType to : kTypes) EXPECT_TRUE(supportsCast(t, to));
    EXPECT_TRUE(supportsFma(t));
    EXPECT_TRUE(supportsSelect(t));
    EXPECT_TRUE(supportsFill(t));
    EXPECT_TRUE(supportsIota(t));
    EXPECT_TRUE(supportsCompare(Cond::Ge, t));
    EXPECT_TRUE(supportsReduce(ReduceOp::ArgMin, t));
    EXPECT_EQ(supportsMma(t), isFloatT(t));
  }
  // Values outside the enums (as a corrupt instruction could carry) are never supported.
  const auto badType = static_cast<DType>(isa::kNumDTypes);
  EXPECT_FALSE(supportsUnary(static_cast<UnaryOp>(200), DType::F32));
  EXPECT_FALSE(supportsUnary(UnaryOp::Neg, badType));
  EXPECT_FALSE(supportsBinary(static_cast<BinaryOp>(11), DType::I32));
  EXPECT_FALSE(supportsCompare(static_cast<Cond>(6), DType::F32));
  EXPECT_FALSE(supportsReduce(static_cast<ReduceOp>(5), DType::F32));
  EXPECT_FALSE(supportsCast(badType, DType::F32));
  EXPECT_FALSE(supportsCast(DType::F32, badType));
  EXPECT_FALSE(supportsFma(badType));
  EXPECT_FALSE(supportsSelect(badType));
  EXPECT_FALSE(supportsFill(badType));
  EXPECT_FALSE(supportsMma(badType));
}

TEST(VectorMath, UnsupportedCallsDoNothing) {
  Row src(DType::F32, 9), dst(DType::F32, 9), i32(DType::I32, 9);
  std::mt19937_64 rng(1);
  fillInputs({&src}, rng);
  unary(UnaryOp::Not, DType::F32, dst.data(), src.data(), 9);
  binary(BinaryOp::Xor, DType::F32, dst.data(), src.data(), src.data(), 9);
  binaryScalar(BinaryOp::And, DType::BF16, dst.data(), src.data(), 0, 9);
  unary(UnaryOp::Exp, DType::I32, i32.data(), src.data(), 9);
  unary(static_cast<UnaryOp>(99), DType::F32, dst.data(), src.data(), 9);
  cast(static_cast<DType>(17), DType::F32, dst.data(), src.data(), 9);
  fill(static_cast<DType>(6), dst.data(), 0, 9);
  mma(DType::I32, static_cast<float*>(dst.data()), src.data(), src.data(), 3, 3, 1);
  for (int64_t i = 0; i < 9; ++i) {
    EXPECT_EQ(dst.get(i), 0xCDCDCDCDu);
    EXPECT_EQ(i32.get(i), 0xCDCDCDCDu);
  }
  EXPECT_TRUE(dst.guardsIntact());
}

TEST(VectorMath, Unary) {
  std::mt19937_64 rng(2);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(UnaryOp::Not); ++op) {
      const auto u = static_cast<UnaryOp>(op);
      if (!supportsUnary(u, t)) continue;
      for (int64_t n : kLengths) {
        for (bool inPlace : {false, true}) {
          Row src(t, n), dst(t, n, 2);
          fillInputs({&src}, rng);
          const Row in = src;
          Row& out = inPlace ? src : dst;
          unary(u, t, out.data(), src.data(), n);
          Mismatches m(std::string("unary ") + std::to_string(op) + " " + typeName(t) +
                       " n=" + std::to_string(n) + (inPlace ? " in place" : ""));
          for (int64_t i = 0; i < n; ++i) {
            uint64_t want;
            int64_t tol = 0;
            if (isFloatT(t)) {
              want = roundTo(t, refUnaryF32(u, static_cast<float>(in.value(i))));
              // An f32 result within bound ULPs may round to a neighbour in f16/bf16.
              if (isApproximate(u)) tol = t == DType::F32 ? ulpBound(u) : 1;
              m.check(
                  floatMatches(t, out.get(i), want, tol), i,
                  show(t, in.get(i)) + " -> " + show(t, out.get(i)) + ", want " + show(t, want));
            } else {
              want = refUnaryInt(u, t, in.integer(i));
              m.check(
                  out.get(i) == want, i,
                  show(t, in.get(i)) + " -> " + show(t, out.get(i)) + ", want " + show(t, want));
            }
          }
          EXPECT_TRUE(out.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, UnaryEdgeCases) {
  auto one = [](UnaryOp op, float x) {
    float r = 0;
    unary(op, DType::F32, &r, &x, 1);
    return r;
  };
  EXPECT_TRUE(std::signbit(one(UnaryOp::Floor, -0.0f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Trunc, -0.7f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Ceil, -0.7f)));
  EXPECT_TRUE(std::signbit(one(UnaryOp::Round, -0.5f)));
  EXPECT_EQ(one(UnaryOp::Round, 2.5f), 2.0f);
  EXPECT_EQ(one(UnaryOp::Round, 3.5f), 4.0f);
  EXPECT_EQ(one(UnaryOp::Round, -2.5f), -2.0f);
  EXPECT_EQ(one(UnaryOp::Floor, 8388609.0f), 8388609.0f);
  EXPECT_FALSE(std::signbit(one(UnaryOp::Relu, -0.0f)));
  EXPECT_TRUE(std::isnan(one(UnaryOp::Relu, kNaN)));
  EXPECT_EQ(one(UnaryOp::Exp, -kInf), 0.0f);
  EXPECT_EQ(one(UnaryOp::Exp, kInf), kInf);
  EXPECT_EQ(one(UnaryOp::Exp, 100.0f), kInf);
  EXPECT_EQ(one(UnaryOp::Log, 0.0f), -kInf);
  EXPECT_TRUE(std::isnan(one(UnaryOp::Log, -1.0f)));
  EXPECT_TRUE(std::isnan(one(UnaryOp::Sqrt, -1.0f)));
  EXPECT_EQ(one(UnaryOp::Rsqrt, 0.0f), kInf);
  EXPECT_EQ(one(UnaryOp::Recip, -0.0f), -kInf);
  EXPECT_EQ(one(UnaryOp::Sigmoid, 200.0f), 1.0f);
  EXPECT_GT(one(UnaryOp::Sigmoid, -100.0f), 0.0f);  // e^-100: tiny but representable
  EXPECT_EQ(one(UnaryOp::Sigmoid, -kInf), 0.0f);
  EXPECT_EQ(one(UnaryOp::Tanh, kInf), 1.0f);
  EXPECT_EQ(one(UnaryOp::Erf, -kInf), -1.0f);
  for (UnaryOp op : {UnaryOp::Exp, UnaryOp::Tanh, UnaryOp::Sin, UnaryOp::Erf, UnaryOp::Sigmoid}) {
    EXPECT_TRUE(std::isnan(one(op, kNaN))) << static_cast<int>(op);
  }
  int32_t v[3] = {INT32_MIN, -5, 0}, r[3];
  unary(UnaryOp::Abs, DType::I32, r, v, 3);
  EXPECT_EQ(r[0], INT32_MIN);
  EXPECT_EQ(r[1], 5);
  unary(UnaryOp::Neg, DType::I32, r, v, 3);
  EXPECT_EQ(r[0], INT32_MIN);
  uint8_t b[3] = {0, 1, 7}, nb[3];
  unary(UnaryOp::Not, DType::U8, nb, b, 3);
  EXPECT_EQ(nb[0], 1);
  EXPECT_EQ(nb[1], 0);
  EXPECT_EQ(nb[2], 0);
}

// The ULP errors of the approximated functions over their useful f32 domains.
TEST(VectorMath, TranscendentalAccuracy) {
  struct Case {
    UnaryOp op;
    const char* name;
    float lo, hi;
  };
  const Case cases[] = {
      {UnaryOp::Exp, "exp", -103.0f, 88.8f},      {UnaryOp::Log, "log", 0.0f, 3.4e38f},
      {UnaryOp::Tanh, "tanh", -20.0f, 20.0f},     {UnaryOp::Sigmoid, "sigmoid", -105.0f, 30.0f},
      {UnaryOp::Erf, "erf", -6.0f, 6.0f},         {UnaryOp::Sin, "sin", -10000.0f, 10000.0f},
      {UnaryOp::Cos, "cos", -10000.0f, 10000.0f}, {UnaryOp::Rsqrt, "rsqrt", 0.0f, 3.4e38f},
  };
  std::mt19937_64 rng(3);
  for (const Case& c : cases) {
    // Half the inputs uniform in the interesting range, half uniform in bit pattern over all
    // finite floats (every magnitude, subnormals included).
    const int64_t n = 400000;
    std::vector<float> x(n), y(n);
    for (int64_t i = 0; i < n; ++i) {
      if (i % 2) {
        x[i] = std::uniform_real_distribution<float>(c.lo, c.hi)(rng);
      } else {
        do {
          x[i] = bitsToFloat(static_cast<uint32_t>(rng()));
        } while (!std::isfinite(x[i]));
      }
    }
    unary(c.op, DType::F32, y.data(), x.data(), n);
    int64_t worst = 0;
    float worstX = 0;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t d =
          ulpDistance(DType::F32, floatToBits(y[i]), floatToBits(refUnaryF32(c.op, x[i])));
      if (d > worst) {
        worst = d;
        worstX = x[i];
      }
    }
    std::printf("max error %-8s %lld ULP (at %.9g)\n", c.name, static_cast<long long>(worst),
                worstX);
    RecordProperty(std::string("ulp_") + c.name, static_cast<int>(worst));
    EXPECT_LE(worst, ulpBound(c.op)) << c.name << " at " << worstX;
  }
}

TEST(VectorMath, Binary) {
  std::mt19937_64 rng(4);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(BinaryOp::Rem); ++op) {
      const auto b = static_cast<BinaryOp>(op);
      if (!supportsBinary(b, t)) continue;
      for (int64_t n : kLengths) {
        for (int mode = 0; mode < 3; ++mode) {  // array, scalar, in place (dst == a)
          Row x(t, n), y(t, n, 3), dst(t, n, 2);
          fillInputs({&x, &y}, rng);
          if (b == BinaryOp::Pow && !isFloatT(t)) {  // exponents the reference can loop over
            for (int64_t i = 0; i < n; ++i) {
              y.set(i, encodeInt(t, static_cast<uint64_t>(static_cast<int64_t>(rng() % 70) - 5)));
            }
          }
          uint64_t scalar = y.size() > 0 ? y.get(0) : 0;
          if (mode == 1) {
            for (int64_t i = 0; i < n; ++i) y.set(i, scalar);
            scalar |= typeSize(t) < 8 ? 0xABCD000000000000ull : 0;  // high bits are ignored
          }
          const Row in = x;
          Row& out = mode == 2 ? x : dst;
          if (mode == 1) {
            binaryScalar(b, t, out.data(), x.data(), scalar, n);
          } else {
            binary(b, t, out.data(), x.data(), y.data(), n);
          }
          Mismatches m(std::string("binary ") + std::to_string(op) + " " + typeName(t) +
                       " n=" + std::to_string(n) + " mode " + std::to_string(mode));
          for (int64_t i = 0; i < n; ++i) {
            const uint64_t want = isFloatT(t)
                                      ? roundTo(t, refBinaryF32(b, static_cast<float>(in.value(i)),
                                                                static_cast<float>(y.value(i))))
                                      : refBinaryInt(b, t, in.integer(i), y.integer(i));
            const bool ok = isFloatT(t) ? floatMatches(t, out.get(i), want) : out.get(i) == want;
            m.check(ok, i,
                    show(t, in.get(i)) + " op " + show(t, y.get(i)) + " -> " + show(t, out.get(i)) +
                        ", want " + show(t, want));
          }
          EXPECT_TRUE(out.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, BinaryEdgeCases) {
  auto f = [](BinaryOp op, float x, float y) {
    float r = 0;
    binary(op, DType::F32, &r, &x, &y, 1);
    return r;
  };
  EXPECT_TRUE(std::isnan(f(BinaryOp::Max, kNaN, 1.0f)));
  EXPECT_TRUE(std::isnan(f(BinaryOp::Max, 1.0f, kNaN)));
  EXPECT_TRUE(std::isnan(f(BinaryOp::Min, 1.0f, kNaN)));
  EXPECT_FALSE(std::signbit(f(BinaryOp::Max, -0.0f, 0.0f)));
  EXPECT_FALSE(std::signbit(f(BinaryOp::Max, 0.0f, -0.0f)));
  EXPECT_TRUE(std::signbit(f(BinaryOp::Min, 0.0f, -0.0f)));
  EXPECT_EQ(f(BinaryOp::Pow, 0.0f, 0.0f), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, kNaN, 0.0f), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, 1.0f, kNaN), 1.0f);
  EXPECT_EQ(f(BinaryOp::Pow, -2.0f, 3.0f), -8.0f);
  EXPECT_EQ(f(BinaryOp::Pow, 0.0f, -1.0f), kInf);
  EXPECT_TRUE(std::isnan(f(BinaryOp::Pow, -2.0f, 0.5f)));
  EXPECT_EQ(f(BinaryOp::Rem, -7.0f, 2.0f), -1.0f);
  EXPECT_EQ(f(BinaryOp::Rem, 7.0f, -2.0f), 1.0f);
  EXPECT_TRUE(std::isnan(f(BinaryOp::Rem, 1.0f, 0.0f)));
  EXPECT_EQ(f(BinaryOp::Div, 1.0f, -0.0f), -kInf);

  auto i32 = [](BinaryOp op, int32_t x, int32_t y) {
    int32_t r = 0;
    binary(op, DType::I32, &r, &x, &y, 1);
    return r;
  };
  EXPECT_EQ(i32(BinaryOp::Div, INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Rem, INT32_MIN, -1), 0);
  EXPECT_EQ(i32(BinaryOp::Div, 7, 0), 0);
  EXPECT_EQ(i32(BinaryOp::Rem, 7, 0), 0);
  EXPECT_EQ(i32(BinaryOp::Div, -7, 2), -3);
  EXPECT_EQ(i32(BinaryOp::Rem, -7, 2), -1);
  EXPECT_EQ(i32(BinaryOp::Add, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Mul, 65536, 65536), 0);
  EXPECT_EQ(i32(BinaryOp::Pow, 2, 31), INT32_MIN);
  EXPECT_EQ(i32(BinaryOp::Pow, 2, -1), 0);
  EXPECT_EQ(i32(BinaryOp::Pow, -1, -3), -1);
  EXPECT_EQ(i32(BinaryOp::Pow, -1, INT32_MAX), -1);
  EXPECT_EQ(i32(BinaryOp::Pow, 0, 0), 1);
  int64_t a = INT64_MIN, b = -1, r = 0;
  binary(BinaryOp::Div, DType::I64, &r, &a, &b, 1);
  EXPECT_EQ(r, INT64_MIN);
  a = 3;
  b = INT64_MAX;  // 3^(2^63-1) mod 2^64 by squaring, checked against 3^-1 mod 2^64 identities
  binary(BinaryOp::Pow, DType::I64, &r, &a, &b, 1);
  EXPECT_EQ(static_cast<uint64_t>(r) * 3u, 1u);  // 3^(2^63) = 1 mod 2^64, so r = 3^-1
  uint8_t u = 200, v = 100, w = 0;
  binary(BinaryOp::Add, DType::U8, &w, &u, &v, 1);
  EXPECT_EQ(w, 44);
  binary(BinaryOp::Sub, DType::U8, &w, &v, &u, 1);
  EXPECT_EQ(w, 156);
}

TEST(VectorMath, Fma) {
  std::mt19937_64 rng(5);
  for (DType t : kTypes) {
    for (int64_t n : kLengths) {
      Row a(t, n), b(t, n, 2), c(t, n, 3), dst(t, n, 0);
      fillInputs({&a, &b, &c}, rng);
      fma(t, dst.data(), a.data(), b.data(), c.data(), n);
      Mismatches m(std::string("fma ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) {
        uint64_t want;
        if (isFloatT(t)) {
          want = roundTo(t, std::fma(static_cast<float>(a.value(i)), static_cast<float>(b.value(i)),
                                     static_cast<float>(c.value(i))));
        } else {
          want = encodeInt(
              t, static_cast<uint64_t>(a.integer(i)) * static_cast<uint64_t>(b.integer(i)) +
                     static_cast<uint64_t>(c.integer(i)));
        }
        const bool ok = isFloatT(t) ? floatMatches(t, dst.get(i), want) : dst.get(i) == want;
        m.check(ok, i, show(t, dst.get(i)) + ", want " + show(t, want));
      }
      EXPECT_TRUE(dst.guardsIntact());
    }
  }
  // One rounding: (1 + 2^-12)^2 - 1 keeps the 2^-24 term that a rounded product loses.
  const float x = 1.0f + 0x1p-12f, z = -1.0f;
  float r = 0;
  fma(DType::F32, &r, &x, &x, &z, 1);
  EXPECT_EQ(r, 0x1p-11f + 0x1p-24f);
}

TEST(VectorMath, Select) {
  std::mt19937_64 rng(6);
  for (DType t : kTypes) {
    for (int64_t n : kLengths) {
      Row a(t, n), b(t, n, 2), dst(t, n, 3), mask(DType::U8, n, 5);
      fillInputs({&a, &b}, rng);
      const uint8_t maskValues[] = {0, 1, 2, 255, 0, 0, 1};
      for (int64_t i = 0; i < n; ++i) mask.set(i, maskValues[rng() % 7]);
      select(t, dst.data(), static_cast<const uint8_t*>(mask.data()), a.data(), b.data(), n);
      Mismatches m(std::string("select ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) {
        m.check(dst.get(i) == (mask.get(i) ? a.get(i) : b.get(i)), i, hex(dst.get(i)));
      }
      EXPECT_TRUE(dst.guardsIntact());
    }
  }
}

TEST(VectorMath, Compare) {
  std::mt19937_64 rng(7);
  for (DType t : kTypes) {
    for (int c = 0; c <= static_cast<int>(Cond::Ge); ++c) {
      const auto cond = static_cast<Cond>(c);
      for (int64_t n : kLengths) {
        for (bool scalarMode : {false, true}) {
          Row a(t, n), b(t, n, 2), dst(DType::U8, n, 3);
          fillInputs({&a, &b}, rng);
          // Equal elements, so that Eq/Le/Ge are exercised on more than specials.
          for (int64_t i = 0; i < n; i += 3) b.set(i, a.get(i));
          uint64_t scalar = n > 0 ? a.get(n / 2) : 0;
          if (scalarMode) {
            for (int64_t i = 0; i < n; ++i) b.set(i, scalar);
            scalar |= typeSize(t) < 8 ? 0x5A5A000000000000ull : 0;
            compareScalar(cond, t, static_cast<uint8_t*>(dst.data()), a.data(), scalar, n);
          } else {
            compare(cond, t, static_cast<uint8_t*>(dst.data()), a.data(), b.data(), n);
          }
          Mismatches m(std::string("compare ") + std::to_string(c) + " " + typeName(t) +
                       " n=" + std::to_string(n) + (scalarMode ? " scalar" : ""));
          for (int64_t i = 0; i < n; ++i) {
            const bool want = isFloatT(t) ? refCompare(cond, a.value(i), b.value(i))
                                          : refCompare(cond, a.integer(i), b.integer(i));
            m.check(dst.get(i) == (want ? 1u : 0u), i,
                    show(t, a.get(i)) + " vs " + show(t, b.get(i)) + " -> " +
                        std::to_string(dst.get(i)));
          }
          EXPECT_TRUE(dst.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, CastAllPairs) {
  std::mt19937_64 rng(8);
  for (DType from : kTypes) {
    for (DType to : kTypes) {
      for (int64_t n : kLengths) {
        Row src(from, n), dst(to, n, 2);
        fillInputs({&src}, rng, 1e6f);
        // Values at the edges of every target range, and integers that round twice via f32.
        const double edges[] = {255.0,         255.9,        256.0,        -0.9,
                                -1.0,          2147483520.0, 2147483648.0, -2147483648.0,
                                -2147483904.0, 9.3e18,       -9.3e18,      65519.0,
                                65520.0,       16777217.0,   1e10,         -129.5};
        const int64_t intEdges[] = {16777217,  16842753,  // 2^24 + 2^16 + 1
                                    -16842753, (int64_t{1} << 40) + (int64_t{1} << 32) + 1,
                                    INT64_MAX, INT64_MIN,
                                    65519,     65520,
                                    300,       -300};
        for (int64_t i = 0; i < n && i < 16; ++i) {
          const int64_t p = static_cast<int64_t>(rng() % n);
          if (isFloatT(from)) {
            src.set(p, encodeFloat(from, static_cast<float>(edges[i])));
          } else if (i < 10) {
            src.set(p, encodeInt(from, static_cast<uint64_t>(intEdges[i])));
          }
        }
        cast(from, to, dst.data(), src.data(), n);
        Mismatches m(std::string("cast ") + typeName(from) + " -> " + typeName(to) +
                     " n=" + std::to_string(n));
        for (int64_t i = 0; i < n; ++i) {
          const uint64_t want = refCast(from, to, src.get(i));
          bool ok = dst.get(i) == want;
          if (isFloatT(to) && isNaNBits(to, want)) {
            // NaN stays NaN, keeps its sign, and is quiet.
            const Format f = formatOf(to);
            ok = isNaNBits(to, dst.get(i)) && (dst.get(i) >> (f.mant - 1) & 1) &&
                 (dst.get(i) >> f.signShift()) == (want >> f.signShift());
          }
          m.check(
              ok, i,
              show(from, src.get(i)) + " -> " + show(to, dst.get(i)) + ", want " + show(to, want));
        }
        EXPECT_TRUE(dst.guardsIntact());
      }
    }
  }
}

TEST(VectorMath, Reduce) {
  std::mt19937_64 rng(9);
  for (DType t : kTypes) {
    for (int op = 0; op <= static_cast<int>(ReduceOp::ArgMin); ++op) {
      const auto r = static_cast<ReduceOp>(op);
      const bool arg = r == ReduceOp::ArgMax || r == ReduceOp::ArgMin;
      for (int64_t n : kLengths) {
        for (int data = 0; data < 3; ++data) {  // with specials, random only, many ties
          Row src(t, n);
          fillInputs({&src}, rng, 100.0f, data == 0);
          if (data == 2) {
            for (int64_t i = 0; i < n; ++i) {
              const int64_t v = static_cast<int64_t>(rng() % 5);
              src.set(i, isFloatT(t) ? encodeFloat(t, static_cast<float>(v))
                                     : encodeInt(t, static_cast<uint64_t>(v)));
            }
          }
          Row dst(arg ? DType::I64 : t, 1, 1);
          reduce(r, t, dst.data(), src.data(), n);
          uint64_t want;
          if (arg) {
            int64_t best = -1;
            for (int64_t i = 0; i < n; ++i) {
              if (isFloatT(t)) {
                const long double v = src.value(i);
                if (best >= 0 && std::isnan(src.value(best))) break;
                if (best < 0 || std::isnan(v) ||
                    (r == ReduceOp::ArgMax ? v > src.value(best) : v < src.value(best))) {
                  best = i;
                }
              } else {
                const int64_t v = src.integer(i);
                if (best < 0 ||
                    (r == ReduceOp::ArgMax ? v > src.integer(best) : v < src.integer(best))) {
                  best = i;
                }
              }
            }
            want = static_cast<uint64_t>(best);
          } else if (isFloatT(t)) {
            std::vector<float> x(n);
            for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>(src.value(i));
            float v;
            if (r == ReduceOp::Sum) {
              v = refSum16(x);
            } else {
              v = r == ReduceOp::Max ? -kInf : kInf;
              for (float e : x) v = r == ReduceOp::Max ? refMax(v, e) : refMin(v, e);
            }
            want = roundTo(t, v);
          } else {
            uint64_t v = r == ReduceOp::Sum   ? 0
                         : r == ReduceOp::Max ? static_cast<uint64_t>(minOf(t))
                                              : static_cast<uint64_t>(maxOf(t));
            for (int64_t i = 0; i < n; ++i) {
              const int64_t e = src.integer(i);
              if (r == ReduceOp::Sum) v += static_cast<uint64_t>(e);
              if (r == ReduceOp::Max) v = static_cast<uint64_t>(std::max(decodeInt(t, v), e));
              if (r == ReduceOp::Min) v = static_cast<uint64_t>(std::min(decodeInt(t, v), e));
              v = encodeInt(t, v);
            }
            want = encodeInt(t, v);
          }
          const DType rt = arg ? DType::I64 : t;
          const bool ok = isFloatT(rt) ? floatMatches(rt, dst.get(0), want) : dst.get(0) == want;
          EXPECT_TRUE(ok) << "reduce " << op << " " << typeName(t) << " n=" << n << " data " << data
                          << ": " << show(rt, dst.get(0)) << ", want " << show(rt, want);
          EXPECT_TRUE(dst.guardsIntact());
        }
      }
    }
  }
}

TEST(VectorMath, ReduceEdgeCases) {
  // Sum accuracy: the 16-way partial sums stay close to the exact sum.
  std::vector<float> x(100000);
  std::mt19937_64 rng(10);
  long double exact = 0;
  for (float& v : x) {
    v = std::uniform_real_distribution<float>(0.0f, 1.0f)(rng);
    exact += v;
  }
  float s = 0;
  reduce(ReduceOp::Sum, DType::F32, &s, x.data(), static_cast<int64_t>(x.size()));
  EXPECT_NEAR(s, static_cast<double>(exact), 1e-5 * static_cast<double>(exact));

  const float ties[] = {-0.0f, 0.0f, -1.0f, 0.0f};
  int64_t idx = 7;
  reduce(ReduceOp::ArgMax, DType::F32, &idx, ties, 4);
  EXPECT_EQ(idx, 0);  // -0 == +0: the first of the tied maxima
  const float withNaN[] = {1.0f, 5.0f, kNaN, 9.0f, kNaN};
  reduce(ReduceOp::ArgMin, DType::F32, &idx, withNaN, 5);
  EXPECT_EQ(idx, 2);
  reduce(ReduceOp::ArgMax, DType::F32, &idx, withNaN, 0);
  EXPECT_EQ(idx, -1);
  float m = 0;
  reduce(ReduceOp::Max, DType::F32, &m, withNaN, 5);
  EXPECT_TRUE(std::isnan(m));
  reduce(ReduceOp::Max, DType::F32, &m, withNaN, 0);
  EXPECT_EQ(m, -kInf);
  const uint8_t bytes[] = {200, 100, 7};
  uint8_t sum8 = 0;
  reduce(ReduceOp::Sum, DType::U8, &sum8, bytes, 3);
  EXPECT_EQ(sum8, 51);  // 307 mod 256
  // f16 sums accumulate in f32: 4096 + 1 + 1 + ... would stall at 2048 in f16 arithmetic.
  std::vector<uint16_t> h(3000, f32ToF16(1.0f));
  uint16_t hs = 0;
  reduce(ReduceOp::Sum, DType::F16, &hs, h.data(), 3000);
  EXPECT_EQ(f16ToF32(hs), 3000.0f);
}

TEST(VectorMath, FillAndIota) {
  std::mt19937_64 rng(11);
  for (DType t : kTypes) {
    for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{9}, int64_t{1000}, int64_t{70000}}) {
      Row dst(t, n);
      const uint64_t bits = rng();
      fill(t, dst.data(), bits, n);
      Mismatches m(std::string("fill ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) m.check(dst.get(i) == encodeInt(t, bits), i, hex(dst.get(i)));
      EXPECT_TRUE(dst.guardsIntact());

      Row seq(t, n, 3);
      iota(t, seq.data(), n);
      Mismatches mi(std::string("iota ") + typeName(t) + " n=" + std::to_string(n));
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t want = refCast(DType::I64, t, static_cast<uint64_t>(i));
        mi.check(seq.get(i) == want, i, show(t, seq.get(i)) + ", want " + show(t, want));
      }
      EXPECT_TRUE(seq.guardsIntact());
    }
  }
}

// ---- f16 / bf16 conversions -----------------------------------------------------------------

TEST(Half, WideningIsExactForEveryPattern) {
  for (DType t : {DType::F16, DType::BF16}) {
    std::vector<uint16_t> all(65536);
    for (uint32_t i = 0; i < 65536; ++i) all[i] = static_cast<uint16_t>(i);
    std::vector<float> bulk(65536 + 1);
    if (t == DType::F16) {
      convertF16ToF32(bulk.data() + 1, all.data(), 65536);  // +1: not SIMD aligned
    } else {
      convertBf16ToF32(bulk.data() + 1, all.data(), 65536);
    }
    Mismatches m(std::string("widen ") + typeName(t));
    for (uint32_t i = 0; i < 65536; ++i) {
      const float s = t == DType::F16 ? f16ToF32(all[i]) : bf16ToF32(all[i]);
      const long double want = decodeFloat(t, i);
      bool ok = floatToBits(s) == floatToBits(bulk[i + 1]);
      if (std::isnan(want)) {
        // Quiet, sign kept, the payload in the top mantissa bits (what F16C does).
        const Format f = formatOf(t);
        const uint32_t payload = i & ((1u << f.mant) - 1);
        ok = ok && floatToBits(s) == (((i >> 15) << 31) | 0x7FC00000u | (payload << (23 - f.mant)));
      } else {
        ok = ok && static_cast<long double>(s) == want && std::signbit(s) == std::signbit(want);
      }
      m.check(ok, i, hex(floatToBits(s)) + " bulk " + hex(floatToBits(bulk[i + 1])));
    }
  }
}

TEST(Half, NarrowingRoundsToNearestEven) {
  std::mt19937_64 rng(12);
  for (DType t : {DType::F16, DType::BF16}) {
    const Format f = formatOf(t);
    // Every pair of neighbouring values: both, the midpoint (a tie) and one f32 step around it.
    std::vector<float> in;
    for (uint32_t b = 0; b < f.infBits(); ++b) {
      const long double lo = magnitude(f, b), hi = magnitude(f, b + 1);
      const float mid = static_cast<float>((lo + hi) / 2);  // exact in f32
      for (float v :
           {static_cast<float>(lo), mid, std::nextafter(mid, 0.0f), std::nextafter(mid, kInf)}) {
        in.push_back(v);
        in.push_back(-v);
      }
    }
    for (int i = 0; i < 200000; ++i) in.push_back(bitsToFloat(static_cast<uint32_t>(rng())));
    for (float v : {kInf, -kInf, kNaN, -kNaN, bitsToFloat(0x7F800001u), bitsToFloat(0xFFBFFFFFu),
                    1e-45f, 65519.996f, 65520.0f, 3.3961776e38f}) {
      in.push_back(v);
    }
    std::vector<uint16_t> bulk(in.size() + 3);
    if (t == DType::F16) {
      convertF32ToF16(bulk.data() + 3, in.data(), static_cast<int64_t>(in.size()));
    } else {
      convertF32ToBf16(bulk.data() + 3, in.data(), static_cast<int64_t>(in.size()));
    }
    Mismatches m(std::string("narrow ") + typeName(t));
    for (size_t i = 0; i < in.size(); ++i) {
      const uint16_t s = t == DType::F16 ? f32ToF16(in[i]) : f32ToBf16(in[i]);
      uint64_t want = roundTo(t, in[i]);
      if (std::isnan(in[i])) {  // quiet, sign and top payload bits kept (as F16C does)
        const uint32_t x = floatToBits(in[i]);
        want = ((x >> 31) << f.signShift()) | f.infBits() | (1u << (f.mant - 1)) |
               ((x & 0x7FFFFFu) >> (23 - f.mant));
      }
      m.check(s == want && bulk[i + 3] == s, static_cast<int64_t>(i),
              std::to_string(in[i]) + " -> " + hex(s) + " bulk " + hex(bulk[i + 3]) + ", want " +
                  hex(want));
    }
  }
  EXPECT_EQ(f32ToF16(65504.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16(65519.0f), 0x7BFF);
  EXPECT_EQ(f32ToF16(65520.0f), 0x7C00);    // the tie above the largest value: inf
  EXPECT_EQ(f32ToF16(0x1p-24f), 0x0001);    // smallest subnormal
  EXPECT_EQ(f32ToF16(0x1p-25f), 0x0000);    // tie between 0 and it: even
  EXPECT_EQ(f32ToF16(0x1.8p-24f), 0x0002);  // tie between 1 and 2 units: even
  EXPECT_EQ(f32ToF16(-0.0f), 0x8000);
  EXPECT_EQ(f32ToF16(1.0f + 0x1p-11f), 0x3C00);  // tie: even
  EXPECT_EQ(f32ToF16(1.0f + 0x1.8p-10f), 0x3C02);
  EXPECT_EQ(f32ToBf16(1.0f + 0x1p-8f), 0x3F80);
  EXPECT_EQ(f32ToBf16(1.0f + 0x1.8p-7f), 0x3F82);
  EXPECT_EQ(f32ToBf16(std::numeric_limits<float>::max()), 0x7F80);
}

// ---- Matrix multiply ------------------------------------------------------------------------

// Whether the build's multiply-adds are fused (the library documents: with hardware FMA).
bool fusedBuild() {
  return std::string(simdArchName()).find("fma") != std::string::npos;
}

void checkMma(DType t, int m, int n, int k, std::mt19937_64& rng) {
  Row a(t, int64_t{m} * k), b(t, int64_t{k} * n, 3);
  fillInputs({&a}, rng, 4.0f, false);
  fillInputs({&b}, rng, 4.0f, false);
  std::vector<float> c(static_cast<size_t>(m) * n + 1);
  for (float& v : c) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  std::vector<float> want(c);
  const bool fused = fusedBuild();
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = want[1 + i * n + j];
      for (int p = 0; p < k; ++p) {
        const float x = static_cast<float>(a.value(int64_t{i} * k + p));
        const float y = static_cast<float>(b.value(int64_t{p} * n + j));
        if (fused) {
          acc = std::fma(x, y, acc);
        } else {
          const float prod = x * y;
          acc = acc + prod;
        }
      }
      want[1 + i * n + j] = acc;
    }
  }
  mma(t, c.data() + 1, a.data(), b.data(), m, n, k);  // c + 1: not SIMD aligned
  Mismatches mm(std::string("mma ") + typeName(t) + " " + std::to_string(m) + "x" +
                std::to_string(n) + "x" + std::to_string(k));
  for (size_t i = 0; i < c.size(); ++i) {
    mm.check(floatToBits(c[i]) == floatToBits(want[i]), static_cast<int64_t>(i),
             std::to_string(c[i]) + ", want " + std::to_string(want[i]));
  }
}

TEST(Matrix, MmaMatchesOrderedReference) {
  std::mt19937_64 rng(13);
  const int shapes[][3] = {{1, 1, 1},    {1, 17, 3},  {7, 9, 5},    {6, 16, 256}, {13, 37, 300},
                           {64, 64, 64}, {5, 3, 600}, {33, 100, 7}, {2, 1, 513}};
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    for (const auto& s : shapes) checkMma(t, s[0], s[1], s[2], rng);
  }
  // k == 0 and empty shapes leave C alone.
  float c = 2.0f;
  mma(DType::F32, &c, nullptr, nullptr, 1, 1, 0);
  EXPECT_EQ(c, 2.0f);
}

TEST(Matrix, Mma256IsFast) {
  const int s = 256;
  std::vector<float> a(s * s), b(s * s), c(s * s, 0.0f);
  std::mt19937_64 rng(14);
  for (float& v : a) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  for (float& v : b) v = std::uniform_real_distribution<float>(-1.0f, 1.0f)(rng);
  double best = 1e9;
  for (int rep = 0; rep < 7; ++rep) {
    const auto t0 = std::chrono::steady_clock::now();
    mma(DType::F32, c.data(), a.data(), b.data(), s, s, s);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    best = std::min(best, ms);
  }
  const double gflops = 2.0 * s * s * s / (best * 1e6);
  std::printf("mma f32 256x256x256: %.3f ms, %.1f GFLOP/s (%s)\n", best, gflops, simdArchName());
  RecordProperty("mma256_gflops", static_cast<int>(gflops));
#ifdef NDEBUG
  EXPECT_LT(best, 10.0);
#endif
}

}  // namespace
}  // namespace mimic::exec
