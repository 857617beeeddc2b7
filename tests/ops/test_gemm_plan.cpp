// The GEMM plan: tiles and stages chosen from a device's properties fit its scratchpad, fill its
// compute units when the problem allows, and grow with the problem.
#include <gtest/gtest.h>

#include "torch_backend/ops/gemm_kernel.h"
#include "torch_backend/ops/gemm_plan.h"

namespace mimic::ops::detail {
namespace {

// Properties shaped like the a100 preset (the plan reads only these fields).
mimicDeviceProperties largeDevice() {
  mimicDeviceProperties p{};
  p.computeUnits = 108;
  p.scratchpadBytes = 420 << 10;
  p.mmaF32MacsPerCycle = 64;
  p.mmaF16MacsPerCycle = 1024;
  p.matrixClockMHz = 1410;
  p.hbmBandwidthGBps = 2039;
  p.hbmEfficiency = 0.834;
  p.hbmLatencyNs = 391;
  p.cacheBytes = 40 << 20;
  p.cacheBandwidthGBps = 5400;
  p.cacheLatencyNs = 215;
  p.dmaBandwidthGBps = 67;
  return p;
}

// Shaped like the tiny preset: no cache, a small scratchpad.
mimicDeviceProperties smallDevice() {
  mimicDeviceProperties p{};
  p.computeUnits = 4;
  p.scratchpadBytes = 64 << 10;
  p.mmaF32MacsPerCycle = 256;
  p.mmaF16MacsPerCycle = 1024;
  p.matrixClockMHz = 1500;
  p.hbmBandwidthGBps = 100;
  p.hbmEfficiency = 1;
  p.hbmLatencyNs = 200;
  p.dmaBandwidthGBps = 200;
  return p;
}

int64_t tiles(const GemmTiles& t, int64_t m, int64_t n) {
  return ((m + t.m - 1) / t.m) * ((n + t.n - 1) / t.n);
}

TEST(GemmPlanTest, EveryPlanFitsTheScratchpad) {
  for (const mimicDeviceProperties& p : {largeDevice(), smallDevice()}) {
    for (int64_t e : {2, 4}) {
      for (bool readC : {false, true}) {
        for (int64_t size : {1, 7, 64, 300, 1024, 4096}) {
          const GemmTiles t = planGemm(p, 1, size, size, size, e, readC);
          EXPECT_LE(gemmScratchpadBytes(t, e, readC), int64_t(p.scratchpadBytes)) << size;
          EXPECT_GE(t.stages, 2);
          EXPECT_LE(t.stages, kGemmMaxStages);
          EXPECT_GE(t.m, 1);
          EXPECT_LE(t.m, size);
          EXPECT_LE(t.n, size);
          EXPECT_LE(t.k, size);
          EXPECT_GE(t.groupM, 1);
        }
      }
    }
  }
}

TEST(GemmPlanTest, ReadingCNeedsRoomForItsOldTile) {
  const GemmTiles t{128, 128, 64, 2, 1};
  EXPECT_GT(gemmScratchpadBytes(t, 2, true), gemmScratchpadBytes(t, 2, false));
  EXPECT_EQ(gemmScratchpadBytes(t, 4, false), 128 * 128 * 4 + 2 * (128 * 64 * 4 + 64 * 128 * 4));
}

TEST(GemmPlanTest, ALargeProblemGetsLargeTilesOnALargeDevice) {
  const GemmTiles t = planGemm(largeDevice(), 1, 4096, 4096, 4096, 2, false);
  EXPECT_GE(t.m * t.n, 128 * 128);
  EXPECT_GE(tiles(t, 4096, 4096), 108);
}

TEST(GemmPlanTest, ASmallProblemIsCutToKeepTheUnitsBusy) {
  // 256 x 768 output: one 256 x 256 tile per 3 units would leave most of 108 units idle.
  const GemmTiles t = planGemm(largeDevice(), 1, 256, 768, 768, 4, false);
  EXPECT_GE(tiles(t, 256, 768), 48);
}

TEST(GemmPlanTest, BatchesCountTowardsFillingTheDevice) {
  const GemmTiles one = planGemm(largeDevice(), 1, 128, 128, 64, 2, false);
  const GemmTiles many = planGemm(largeDevice(), 256, 128, 128, 64, 2, false);
  EXPECT_GE(many.m * many.n, one.m * one.n);
}

}  // namespace
}  // namespace mimic::ops::detail
