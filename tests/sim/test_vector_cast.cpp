// Tests of the functional vector casts between every pair of types, fill and iota (sim/exec),
// against the documented cast rules. Shared helpers: vector_math_test.h.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "sim/exec/vector_math.h"
#include "vector_math_test.h"

namespace mimic::exec::vector_math_test {
namespace {

// ---- References -----------------------------------------------------------------------------

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

// ---- Tests ----------------------------------------------------------------------------------

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

}  // namespace
}  // namespace mimic::exec::vector_math_test
