// Host reference for the elementwise op's tests: values of every dtype, the conversions of
// sim/exec/vector_math.h, and an evaluator of elementwise programs with the device's rounding
// (float compute types round every op's f32 result to the type; integers wrap).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "sim/isa/scalar_literal.h"
#include "torch_backend/ops/elementwise_rand.h"

namespace ewref {

using mimic::isa::DType;

// One element: `f` for float dtypes, `i` (the value, u8 as 0..255) for integer ones.
struct Num {
  double f = 0;
  int64_t i = 0;
};

inline bool isInt(DType t) {
  return !mimic::isa::isFloat(t);
}

inline double roundTo(double v, DType t) {
  if (t == DType::F64) return v;
  if (t == DType::F32 || std::isnan(v)) return static_cast<float>(v);
  return mimic::isa::bitsToFloat(mimic::isa::floatToBits(static_cast<float>(v), t), t);
}

inline int64_t wrap(uint64_t v, DType t) {
  if (t == DType::I32) return static_cast<int32_t>(static_cast<uint32_t>(v));
  if (t == DType::I16) return static_cast<int16_t>(static_cast<uint16_t>(v));
  if (t == DType::I8) return static_cast<int8_t>(static_cast<uint8_t>(v));
  if (t == DType::U8) return static_cast<int64_t>(v & 0xFF);
  return static_cast<int64_t>(v);
}

inline Num cast(Num v, DType from, DType to) {
  Num r;
  if (!isInt(to)) {
    r.f = roundTo(isInt(from) ? static_cast<double>(v.i) : v.f, to);
  } else if (isInt(from)) {
    r.i = wrap(static_cast<uint64_t>(v.i), to);
  } else if (!std::isnan(v.f)) {
    const double lo = to == DType::U8    ? 0
                      : to == DType::I8  ? -128.0
                      : to == DType::I16 ? -32768.0
                      : to == DType::I32 ? -2147483648.0
                                         : -9.2233720368547758e18;
    const double hi = to == DType::U8    ? 255
                      : to == DType::I8  ? 127.0
                      : to == DType::I16 ? 32767.0
                      : to == DType::I32 ? 2147483647.0
                                         : 9.2233720368547758e18;
    const double t = std::trunc(v.f);
    r.i = t <= lo   ? static_cast<int64_t>(lo)
          : t >= hi ? (to == DType::I64 ? INT64_MAX : int64_t(hi))
                    : static_cast<int64_t>(t);
  }
  return r;
}

inline void encode(Num v, DType t, uint8_t* p) {
  switch (t) {
    case DType::F32: {
      const float f = static_cast<float>(v.f);
      std::memcpy(p, &f, 4);
      return;
    }
    case DType::F16:
    case DType::BF16: {
      const uint16_t bits = static_cast<uint16_t>(mimic::isa::floatToBits(v.f, t));
      std::memcpy(p, &bits, 2);
      return;
    }
    case DType::I32: {
      const int32_t x = static_cast<int32_t>(v.i);
      std::memcpy(p, &x, 4);
      return;
    }
    case DType::I64:
      std::memcpy(p, &v.i, 8);
      return;
    case DType::U8:
    case DType::I8:
      *p = static_cast<uint8_t>(v.i);
      return;
    case DType::I16: {
      const int16_t x = static_cast<int16_t>(v.i);
      std::memcpy(p, &x, 2);
      return;
    }
    case DType::F64:
      std::memcpy(p, &v.f, 8);
      return;
  }
}

inline Num decode(const uint8_t* p, DType t) {
  Num v;
  switch (t) {
    case DType::F32: {
      float f;
      std::memcpy(&f, p, 4);
      v.f = f;
      break;
    }
    case DType::F16:
    case DType::BF16: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      v.f = mimic::isa::bitsToFloat(bits, t);
      break;
    }
    case DType::I32: {
      int32_t x;
      std::memcpy(&x, p, 4);
      v.i = x;
      break;
    }
    case DType::I64:
      std::memcpy(&v.i, p, 8);
      break;
    case DType::U8:
      v.i = *p;
      break;
    case DType::I8:
      v.i = static_cast<int8_t>(*p);
      break;
    case DType::I16: {
      int16_t x;
      std::memcpy(&x, p, 2);
      v.i = x;
      break;
    }
    case DType::F64:
      std::memcpy(&v.f, p, 8);
      break;
  }
  return v;
}

inline int64_t intPow(int64_t base, int64_t e, DType t) {
  if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
  uint64_t r = 1, b = static_cast<uint64_t>(base);
  for (uint64_t k = static_cast<uint64_t>(e); k; k >>= 1) {
    if (k & 1) r *= b;
    b *= b;
  }
  return wrap(r, t);
}

// Everything one element's evaluation needs.
struct Context {
  DType compute = DType::F32;
  std::vector<DType> inputTypes;
  std::vector<Num> inputs;  // this element of each input, in its dtype
  std::vector<double> scalars;
  uint64_t seed = 0, counter = 0;  // counter: random.offset + the row-major index
};

inline std::vector<std::string> tokens(const std::string& program) {
  std::istringstream words(program);
  std::vector<std::string> result;
  std::string w;
  while (words >> w) result.push_back(w);
  return result;
}

class Evaluator {
 public:
  explicit Evaluator(const Context& c) : c_(c), t_(c.compute) {}

  // The value of the program (its tokens) converted to `out`.
  Num run(const std::vector<std::string>& program, DType out) {
    int stream = 0;
    for (const std::string& w : program) step(w, stream);
    const V v = stack_.back();
    return v.mask ? cast(Num{0, v.n.i}, DType::U8, out) : cast(v.n, t_, out);
  }

 private:
  struct V {
    bool mask;
    Num n;  // a mask's 0/1 is in n.i
  };

  Num num(V v) const {
    if (!v.mask) return v.n;
    return isInt(t_) ? Num{0, v.n.i} : Num{static_cast<double>(v.n.i), 0};
  }
  bool truth(V v) const { return v.mask ? v.n.i != 0 : isInt(t_) ? v.n.i != 0 : v.n.f != 0; }
  V pop() {
    V v = stack_.back();
    stack_.pop_back();
    return v;
  }
  void pushF(double f) { stack_.push_back({false, Num{roundTo(f, t_), 0}}); }
  void pushI(uint64_t i) { stack_.push_back({false, Num{0, wrap(i, t_)}}); }
  void pushMask(bool b) { stack_.push_back({true, Num{0, b ? 1 : 0}}); }

  void step(const std::string& w, int& stream) {
    const bool fl = !isInt(t_);
    if (w[0] == 'x' && w.size() > 1 && std::isdigit(w[1])) {
      const int i = std::stoi(w.substr(1));
      return stack_.push_back({false, cast(c_.inputs[i], c_.inputTypes[i], t_)});
    }
    if (w[0] == 's' && w.size() > 1 && std::isdigit(w[1])) {
      const double s = c_.scalars[std::stoi(w.substr(1))];
      if (fl) return pushF(s);
      return pushI(t_ == DType::U8 ? static_cast<uint8_t>(s) : static_cast<uint64_t>(int64_t(s)));
    }
    if (w == "rand") {
      return pushF(mimic::ops::randReference(c_.seed, c_.counter, stream++, t_));
    }
    if (w == "where") {
      V b = pop(), a = pop(), m = pop();
      const bool take = truth(m);
      if (a.mask && b.mask) return pushMask(take ? a.n.i : b.n.i);
      return stack_.push_back({false, take ? num(a) : num(b)});
    }
    if (w == "fma") {
      Num c = num(pop()), b = num(pop()), a = num(pop());
      if (fl) return pushF(std::fma(float(a.f), float(b.f), float(c.f)));
      return pushI(uint64_t(a.i) * uint64_t(b.i) + uint64_t(c.i));
    }
    if (unary(w)) return;
    if (binary(w)) return;
    char* end = nullptr;
    const double literal = std::strtod(w.c_str(), &end);
    if (fl) return pushF(literal);
    pushI(static_cast<uint64_t>(static_cast<int64_t>(literal)));
  }

  bool unary(const std::string& w) {
    static const char* const kNames[] = {"neg",  "abs",     "exp",   "log",   "sqrt", "rsqrt",
                                         "tanh", "sigmoid", "erf",   "sin",   "cos",  "floor",
                                         "ceil", "round",   "trunc", "recip", "relu", "not"};
    int op = -1;
    for (int i = 0; i < 18; ++i) op = w == kNames[i] ? i : op;
    if (op < 0) return false;
    V v = pop();
    if (op == 17 && v.mask) {
      pushMask(v.n.i == 0);
      return true;
    }
    const Num n = num(v);
    if (isInt(t_)) {
      const int64_t x = n.i;
      const uint64_t r = op == 0    ? 0 - uint64_t(x)
                         : op == 1  ? (x < 0 ? 0 - uint64_t(x) : uint64_t(x))
                         : op == 16 ? uint64_t(std::max<int64_t>(x, 0))
                         : op == 17 ? (t_ == DType::U8 ? uint64_t(x == 0) : ~uint64_t(x))
                                    : uint64_t(x);
      pushI(r);
      return true;
    }
    const float x = static_cast<float>(n.f);
    const float results[] = {-x,
                             std::fabs(x),
                             std::exp(x),
                             std::log(x),
                             std::sqrt(x),
                             1.0f / std::sqrt(x),
                             std::tanh(x),
                             1.0f / (1.0f + std::exp(-x)),
                             std::erf(x),
                             std::sin(x),
                             std::cos(x),
                             std::floor(x),
                             std::ceil(x),
                             std::nearbyint(x),
                             std::trunc(x),
                             1.0f / x,
                             std::isnan(x) ? x
                             : x > 0       ? x
                                           : 0.0f};
    pushF(results[op]);
    return true;
  }

  bool binary(const std::string& w) {
    static const char* const kNames[] = {"add", "sub", "mul", "div", "max", "min",
                                         "pow", "and", "or",  "xor", "rem", "eq",
                                         "ne",  "lt",  "le",  "gt",  "ge"};
    int op = -1;
    for (int i = 0; i < 17; ++i) op = w == kNames[i] ? i : op;
    if (op < 0) return false;
    V vb = pop(), va = pop();
    if (op >= 7 && op <= 9 && va.mask && vb.mask) {
      const int64_t x = va.n.i, y = vb.n.i;
      pushMask(op == 7 ? (x & y) : op == 8 ? (x | y) : (x ^ y));
      return true;
    }
    const Num a = num(va), b = num(vb);
    if (op >= 11) {
      const double x = isInt(t_) ? double(a.i) : a.f, y = isInt(t_) ? double(b.i) : b.f;
      const bool results[] = {x == y, !(x == y), x<y, x <= y, x> y, x >= y};
      pushMask(results[op - 11]);
      return true;
    }
    if (isInt(t_)) {
      const int64_t x = a.i, y = b.i;
      const uint64_t ux = uint64_t(x), uy = uint64_t(y);
      const int64_t q = y == 0 ? 0 : y == -1 ? int64_t(0 - ux) : x / y;
      const int64_t rem = y == 0 || y == -1 ? 0 : x % y;
      const uint64_t results[] = {ux + uy,
                                  ux - uy,
                                  ux * uy,
                                  uint64_t(q),
                                  uint64_t(std::max(x, y)),
                                  uint64_t(std::min(x, y)),
                                  uint64_t(intPow(x, y, t_)),
                                  ux & uy,
                                  ux | uy,
                                  ux ^ uy,
                                  uint64_t(rem)};
      pushI(results[op]);
      return true;
    }
    const float x = static_cast<float>(a.f), y = static_cast<float>(b.f);
    const bool nan = std::isnan(x) || std::isnan(y);
    const float mx = nan ? NAN : (x == y ? (std::signbit(x) ? y : x) : std::max(x, y));
    const float mn = nan ? NAN : (x == y ? (std::signbit(x) ? x : y) : std::min(x, y));
    const float results[] = {x + y, x - y, x * y, x / y,          mx, mn, std::pow(x, y),
                             0,     0,     0,     std::fmod(x, y)};
    pushF(results[op]);
    return true;
  }

  const Context& c_;
  const DType t_;
  std::vector<V> stack_;
};

}  // namespace ewref
