// Tests of the f16/bf16 conversions (sim/exec/half.h), scalar and bulk, against the reference
// formats. Shared helpers: vector_math_test.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "sim/exec/half.h"
#include "sim/exec/vector_math.h"
#include "vector_math_test.h"

namespace mimic::exec::vector_math_test {
namespace {

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

}  // namespace
}  // namespace mimic::exec::vector_math_test
