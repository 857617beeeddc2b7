// The reference kernels (kernels/) compute what they promise, edges included.
#include <cmath>
#include <cstring>
#include <random>

#include "engine_test.h"
#include "kernels/reference_kernels.h"

namespace {

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

void* upload(const std::vector<float>& host) {
  void* dev = deviceAlloc(host.size() * sizeof(float));
  EXPECT_EQ(mimicMemcpy(dev, host.data(), host.size() * sizeof(float)), MIMIC_SUCCESS);
  return dev;
}

std::vector<float> download(void* dev, size_t n) {
  std::vector<float> host(n);
  EXPECT_EQ(mimicMemcpy(host.data(), dev, n * sizeof(float)), MIMIC_SUCCESS);
  return host;
}

TEST_F(DriverTest, AddStridedBroadcastsAndFollowsStrides) {
  const int64_t rows = 37, cols = 300;
  // a is the transpose of a cols x rows matrix; b is one row broadcast down the rows.
  std::vector<float> a = randomFloats(rows * cols, 1), b = randomFloats(cols, 2);
  void *da = upload(a), *db = upload(b), *dc = deviceAlloc(rows * cols * 4);
  struct {
    void *c, *a, *b;
    int64_t cols, aRowStride, aColStride, bRowStride, bColStride;
  } args{dc, da, db, cols, 1, rows, 0, 1};
  const uint32_t tile = 128;
  ASSERT_OK(mimicLaunchKernel(loadKernel(mimic::kernels::addStrided(tile)),
                              {uint32_t((cols + tile - 1) / tile), uint32_t(rows), 1}, &args,
                              sizeof args, nullptr));
  std::vector<float> c = download(dc, rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < cols; ++k) {
      ASSERT_EQ(c[r * cols + k], a[k * rows + r] + b[k]) << r << "," << k;
    }
  }
}

class PipelinedAxpyTest : public DriverTest, public ::testing::WithParamInterface<int> {};

TEST_P(PipelinedAxpyTest, CoversEveryTile) {
  const int depth = GetParam();
  const uint32_t tile = 1024, tilesPerWorkgroup = 4;
  const int64_t n = tile * tilesPerWorkgroup * 3 + tile * 2;  // the last chunk is partial
  std::vector<float> x = randomFloats(n, 3), y = randomFloats(n, 4);
  void *dx = upload(x), *dy = upload(y);
  const float alpha = 1.5f;
  uint32_t alphaBits;
  std::memcpy(&alphaBits, &alpha, 4);
  struct {
    void *y, *x;
    int64_t n, alpha;
  } args{dy, dx, n, alphaBits};
  ASSERT_OK(
      mimicLaunchKernel(loadKernel(mimic::kernels::axpyPipelined(tile, tilesPerWorkgroup, depth)),
                        {4, 1, 1}, &args, sizeof args, nullptr));
  std::vector<float> out = download(dy, n);
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], alpha * x[i] + y[i]) << i;
}

INSTANTIATE_TEST_SUITE_P(Depths, PipelinedAxpyTest, ::testing::Values(2, 3));

TEST_F(DriverTest, RowSumReducesEveryRow) {
  const int64_t rows = 20, cols = 1000;
  std::vector<float> in = randomFloats(rows * cols, 5);
  void *din = upload(in), *dout = deviceAlloc(rows * 4);
  struct {
    void *out, *in;
    int64_t rows, cols;
  } args{dout, din, rows, cols};
  ASSERT_OK(mimicLaunchKernel(loadKernel(mimic::kernels::rowSum(8, 256)), {3, 1, 1}, &args,
                              sizeof args, nullptr));
  std::vector<float> out = download(dout, rows);
  for (int64_t r = 0; r < rows; ++r) {
    double expected = 0;
    for (int64_t k = 0; k < cols; ++k) expected += in[r * cols + k];
    EXPECT_NEAR(out[r], expected, 1e-3) << r;
  }
}

TEST_F(DriverTest, GemmMatchesTheHostWithRaggedEdges) {
  const int64_t m = 70, n = 50, k = 90;
  const uint32_t tile = 32;
  std::vector<float> a = randomFloats(m * k, 6), b = randomFloats(k * n, 7);
  void *da = upload(a), *db = upload(b), *dc = deviceAlloc(m * n * 4);
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } args{dc, da, db, m, n, k};
  ASSERT_OK(mimicLaunchKernel(loadKernel(mimic::kernels::gemm(tile)),
                              {uint32_t((n + tile - 1) / tile), uint32_t((m + tile - 1) / tile), 1},
                              &args, sizeof args, nullptr));
  std::vector<float> c = download(dc, m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double expected = 0;
      for (int64_t p = 0; p < k; ++p) expected += double(a[i * k + p]) * b[p * n + j];
      ASSERT_NEAR(c[i * n + j], expected, 1e-4) << i << "," << j;
    }
  }
}

}  // namespace
