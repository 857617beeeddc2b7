#include "sim/isa/scalar_literal.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace mimic::isa {
namespace {

struct FloatFormat {
  int expBits;
  int mantBits;
};

FloatFormat formatOf(DType type) {
  switch (type) {
    case DType::F16:
      return {5, 10};
    case DType::BF16:
      return {8, 7};
    case DType::F64:
      return {11, 52};
    default:
      return {8, 23};
  }
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool parseHex(std::string_view digits, uint64_t* value) {
  if (digits.empty() || digits.size() > 16) return false;
  uint64_t v = 0;
  for (char c : digits) {
    const int h = hexValue(c);
    if (h < 0) return false;
    v = v << 4 | uint64_t(h);
  }
  *value = v;
  return true;
}

// digits [. digits] [e [+-] digits], at least one mantissa digit; no sign.
bool isDecimalFloat(std::string_view s) {
  size_t i = 0, mantissaDigits = 0;
  while (i < s.size() && isDigit(s[i])) ++i, ++mantissaDigits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && isDigit(s[i])) ++i, ++mantissaDigits;
  }
  if (mantissaDigits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

// Whether a bit pattern has no bits above the type's width (a shift by 64 would be undefined).
bool fitsWidth(uint64_t bits, DType type) {
  return dtypeSize(type) >= 8 || bits >> (8 * dtypeSize(type)) == 0;
}

uint64_t canonicalNaN(DType type, bool negative) {
  const FloatFormat f = formatOf(type);
  const uint64_t bits = ((uint64_t(1) << f.expBits) - 1) << f.mantBits | uint64_t(1)
                                                                             << (f.mantBits - 1);
  return negative ? bits | uint64_t(1) << (f.expBits + f.mantBits) : bits;
}

}  // namespace

uint64_t floatToBits(double value, DType type) {
  const FloatFormat f = formatOf(type);
  const uint64_t sign = std::signbit(value) ? uint64_t(1) << (f.expBits + f.mantBits) : 0;
  const uint64_t expMask = (uint64_t(1) << f.expBits) - 1;
  if (std::isnan(value)) return canonicalNaN(type, sign != 0);
  const double a = std::fabs(value);
  if (std::isinf(a)) return sign | expMask << f.mantBits;
  if (a == 0) return sign;
  const int bias = int(expMask >> 1);
  int e;
  std::frexp(a, &e);
  // Scale so that one unit is the quantum of the result's exponent (subnormals share emin's).
  const int exponent = std::max(e - 1, 1 - bias);
  const double scaled = std::ldexp(a, f.mantBits - exponent);  // exact: a power-of-2 scale
  double whole = std::floor(scaled);
  const double fraction = scaled - whole;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(whole, 2.0) != 0)) whole += 1;
  // `whole` carries the implicit leading 1 of a normal number, which adds the last 1 to the
  // biased exponent; a subnormal has none, and one rounded up to 2^mantBits becomes the smallest
  // normal. Likewise a carry out of the mantissa moves to the next exponent: the exponent and
  // mantissa are adjacent bit fields, so addition does both.
  const uint64_t biased = uint64_t(exponent + bias - 1);
  uint64_t bits = (biased << f.mantBits) + uint64_t(whole);
  if (bits >= expMask << f.mantBits) bits = expMask << f.mantBits;  // overflow to infinity
  return sign | bits;
}

double bitsToFloat(uint64_t bits, DType type) {
  const FloatFormat f = formatOf(type);
  const uint64_t expMask = (uint64_t(1) << f.expBits) - 1;
  const uint64_t mantMask = (uint64_t(1) << f.mantBits) - 1;
  const bool negative = bits >> (f.expBits + f.mantBits) & 1;
  const int biased = int(bits >> f.mantBits & expMask);
  const uint64_t mantissa = bits & mantMask;
  const int bias = int(expMask >> 1);
  double v;
  if (uint64_t(biased) == expMask) {
    v = mantissa ? std::nan("") : INFINITY;
  } else if (biased == 0) {
    v = std::ldexp(double(mantissa), 1 - bias - f.mantBits);
  } else {
    v = std::ldexp(double(mantissa | (mantMask + 1)), biased - bias - f.mantBits);
  }
  return negative ? -v : v;
}

bool parseInt(std::string_view text, int64_t* value) {
  bool negative = false;
  if (!text.empty() && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  uint64_t magnitude;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    if (!parseHex(text.substr(2), &magnitude)) return false;
  } else {
    if (text.empty()) return false;
    for (char c : text) {
      if (!isDigit(c)) return false;
    }
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude);
    if (ec != std::errc() || end != text.data() + text.size()) return false;
    if (magnitude > (negative ? uint64_t(INT64_MAX) + 1 : uint64_t(INT64_MAX))) return false;
  }
  // Unsigned negation gives two's complement for any pattern, without signed overflow.
  *value = int64_t(negative ? 0 - magnitude : magnitude);
  return true;
}

bool parseScalar(std::string_view text, DType type, int64_t* imm, std::string* error) {
  const std::string quoted = "'" + std::string(text) + "'";
  if (!isFloat(type)) {
    if (parseInt(text, imm)) return true;
    *error = "bad integer literal " + quoted + " for " + dtypeName(type);
    return false;
  }
  if (text.size() > 2 && text[0] == '0' && text[1] == 'f') {
    uint64_t bits;
    if (!parseHex(text.substr(2), &bits)) {
      *error = "bad raw bits literal " + quoted;
      return false;
    }
    if (!fitsWidth(bits, type)) {
      *error = "raw bits " + quoted + " wider than " + dtypeName(type);
      return false;
    }
    *imm = int64_t(bits);
    return true;
  }
  const bool negative = !text.empty() && text[0] == '-';
  std::string_view body = text;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) body.remove_prefix(1);
  double value;
  if (body == "inf") {
    value = INFINITY;
  } else if (body == "nan") {
    *imm = int64_t(canonicalNaN(type, negative));
    return true;
  } else if (body.size() > 1 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X')) {
    *error = "hex literal " + quoted + " for " + dtypeName(type) +
             ": write a decimal value, or 0f<hex> for the raw bits";
    return false;
  } else if (isDecimalFloat(body)) {
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc() || end != body.data() + body.size()) {
      *error = "float literal " + quoted + " out of range";
      return false;
    }
  } else {
    *error = "bad float literal " + quoted;
    return false;
  }
  *imm = int64_t(floatToBits(negative ? -value : value, type));
  return true;
}

std::string formatScalar(int64_t imm, DType type) {
  if (!isFloat(type)) return std::to_string(imm);
  const uint64_t bits = uint64_t(imm);
  const double value = bitsToFloat(bits, type);
  const bool fits = fitsWidth(bits, type);
  if (fits && std::isnan(value)) {
    if (bits == canonicalNaN(type, false)) return "nan";
    if (bits == canonicalNaN(type, true)) return "-nan";
  }
  if (fits && !std::isnan(value)) {
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    char buf[64];
    if (std::trunc(value) == value && std::fabs(value) < 9007199254740992.0) {
      auto result = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::fixed, 0);
      return std::string(buf, result.ptr);
    }
    for (int precision = 1; precision <= 17; ++precision) {
      auto result =
          std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, precision);
      std::string text(buf, result.ptr);
      int64_t back;
      std::string error;
      if (parseScalar(text, type, &back, &error) && back == imm) return text;
    }
  }
  // NaN payloads (and, for invalid instructions, patterns wider than the type).
  char buf[32];
  auto result = std::to_chars(buf, buf + sizeof(buf), bits, 16);
  return "0f" + std::string(buf, result.ptr);
}

}  // namespace mimic::isa
