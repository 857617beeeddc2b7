// The elementwise `rand` token: bit-exact against the host definition of the generator,
// deterministic and independent of layout and tiling, and statistically uniform.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "elementwise_test.h"

namespace {

class ElementwiseRand : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(mimicInitWithPreset(0, "tiny", ""), MIMIC_SUCCESS); }
};

// The program's f32 values over a fresh out of `sizes` and `strides`, in row-major order.
std::vector<double> generate(const std::string& program, RandomKey random, int64_t n,
                             std::vector<int64_t> sizes = {}, std::vector<int64_t> strides = {}) {
  if (sizes.empty()) sizes = {n};
  Tensor out(DType::F32, sizes, strides);
  mimic::ops::elementwise({}, out.view(), {}, program, DType::F32, {}, random);
  out.download();
  std::vector<double> v;
  forEachIndex(sizes, [&](const std::vector<int64_t>& index, int64_t) {
    v.push_back(out.at(out.position(index)).f);
  });
  return v;
}

double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s / v.size();
}

double correlation(const std::vector<double>& a, const std::vector<double>& b) {
  const double ma = mean(a), mb = mean(b);
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    ab += (a[i] - ma) * (b[i] - mb);
    aa += (a[i] - ma) * (a[i] - ma);
    bb += (b[i] - mb) * (b[i] - mb);
  }
  return ab / std::sqrt(aa * bb);
}

TEST_F(ElementwiseRand, MatchesHostDefinitionInEveryFloatType) {
  for (DType t : kFloatTypes) {
    Tensor out(t, {37, 129}), outT(t, {37, 129}, {1, 37});
    Tensor x(t, {37, 129}, {}, values(t, 1));
    check("rand", t, {}, out, {}, 0, {1234, 0});
    check("rand", t, {}, outT, {}, 0, {99, 1ull << 40});
    check("rand rand add", t, {}, out, {}, 0, {5, 77});
    check("rand 0.5 ge x0 2 mul 0 where", t, {&x}, outT, {}, 0, {6, 3});  // dropout
  }
  Tensor out(DType::F32, {1000});
  check("rand", DType::F32, {}, out, {}, 0, {7, (5ull << 32) - 777});  // crosses 2^32 in a tile
  check("rand", DType::F32, {}, out, {}, 0, {7, ~0ull - 500});         // counters wrap mod 2^64
}

TEST_F(ElementwiseRand, DeterministicAndIndependentOfLayoutAndTiling) {
  const RandomKey key{42, 1000};
  const std::vector<double> flat = generate("rand", key, 60000);
  EXPECT_EQ(generate("rand", key, 60000), flat);
  EXPECT_EQ(generate("rand", key, 60000, {240, 250}, {1, 240}), flat);  // transposed out
  EXPECT_EQ(generate("rand", key, 60000, {60000}, {3}), flat);          // strided out
  EXPECT_EQ(generate("rand", key, 60000, {2, 3, 4, 5, 10, 50}, {1, 2, 6, 24, 120, 1200}), flat);
  // A smaller op has other tiles and workgroups, but the same values for the same counters.
  const std::vector<double> head = generate("rand", key, 1000);
  EXPECT_EQ(head, std::vector<double>(flat.begin(), flat.begin() + 1000));
  // The offset shifts the counters.
  const std::vector<double> shifted = generate("rand", {42, 1500}, 1000);
  EXPECT_EQ(shifted, std::vector<double>(flat.begin() + 500, flat.begin() + 1500));
}

TEST_F(ElementwiseRand, UniformQuality) {
  const int64_t n = 1 << 20;
  const std::vector<double> u = generate("rand", {2024, 0}, n);
  const double m = mean(u);
  double var = 0;
  for (double x : u) {
    ASSERT_GE(x, 0.0);
    ASSERT_LT(x, 1.0);
    var += (x - m) * (x - m);
  }
  var /= n;
  EXPECT_NEAR(m, 0.5, 0.002);
  EXPECT_NEAR(var, 1.0 / 12, 0.001);
  // Histogram of 16 bins, each within 2% of n / 16.
  std::vector<int64_t> bins(16, 0);
  for (double x : u) ++bins[static_cast<int>(x * 16)];
  for (int64_t b : bins) EXPECT_NEAR(double(b), n / 16.0, n / 16.0 * 0.02);
  // Neighbours, the second stream and another seed are uncorrelated.
  const std::vector<double> next(u.begin() + 1, u.end()), prev(u.begin(), u.end() - 1);
  EXPECT_LT(std::fabs(correlation(prev, next)), 0.005);
  const std::vector<double> second = generate("rand 0 mul rand add", {2024, 0}, n);
  EXPECT_LT(std::fabs(correlation(u, second)), 0.005);
  const std::vector<double> other = generate("rand", {2025, 0}, n);
  EXPECT_LT(std::fabs(correlation(u, other)), 0.005);
  int64_t equal = 0;
  for (int64_t i = 0; i < n; ++i) equal += u[i] == other[i] || u[i] == second[i];
  EXPECT_LT(equal, n / 1000);
}

TEST_F(ElementwiseRand, BoxMullerGivesNormals) {
  const int64_t n = 1 << 20;
  const std::vector<double> z =
      generate("1 rand sub log -2 mul sqrt rand 6.283185307179586 mul cos mul", {3, 0}, n);
  const double m = mean(z);
  double var = 0, within = 0;
  for (double x : z) {
    var += (x - m) * (x - m);
    within += std::fabs(x) < 1;
  }
  EXPECT_NEAR(m, 0.0, 0.005);
  EXPECT_NEAR(var / n, 1.0, 0.01);
  EXPECT_NEAR(within / n, 0.6827, 0.005);
}

}  // namespace
