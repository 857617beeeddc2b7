// Simulated time of kernels against the analytic model of the preset they run on.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "engine_test.h"
#include "kernels/reference_kernels.h"

namespace {

// y = alpha x + y streamed through the double-buffered reference kernel, written the way such
// kernels are: one long-running workgroup per compute unit, so that filling and draining each
// workgroup's pipeline is amortised over many tiles.
struct Axpy {
  static constexpr uint32_t kTile = 1024;
  Axpy(int64_t n, uint32_t workgroups, int depth = 3) : n(n), workgroups(workgroups) {
    const uint32_t tilesPerWorkgroup = uint32_t(n / kTile / workgroups);
    fn = loadKernel(mimic::kernels::axpyPipelined(kTile, tilesPerWorkgroup, depth));
    x = deviceAlloc(n * 4);
    y = deviceAlloc(n * 4);
    EXPECT_EQ(mimicMemsetAsync(x, 0, n * 4, nullptr), MIMIC_SUCCESS);
    EXPECT_EQ(mimicMemsetAsync(y, 0, n * 4, nullptr), MIMIC_SUCCESS);
  }
  mimicResult launch(mimicQueue q) {
    struct {
      void *y, *x;
      int64_t n, alpha;
    } args{y, x, n, 0x3f800000};
    return mimicLaunchKernel(fn, {workgroups, 1, 1}, &args, sizeof args, q);
  }
  double hbmBytes() const { return 3.0 * 4 * double(n); }
  int64_t n;
  uint32_t workgroups;
  mimicFunction fn;
  void* x;
  void* y;
};

uint32_t computeUnits() {
  return uint32_t(propertiesOf().computeUnits);
}

TEST_F(DriverTest, StreamingKernelRunsAtHbmBandwidth) {
  const int64_t n = 4 << 20;
  Axpy axpy(n, computeUnits());
  mimicQueue q = newQueue();
  ASSERT_OK(axpy.launch(q));
  mimicKernelCounters c = countersAfter(q);
  const double model = axpy.hbmBytes() / propertiesOf().hbmBandwidthGBps;
  EXPECT_WITHIN_PERCENT(kernelNs(c), model, 5);
  EXPECT_EQ(c.hbmBytesRead + c.hbmBytesWritten, uint64_t(12 * n));
}

TEST_F(DriverTest, IndependentQueuesFinishInTheLongerOfTheirTimes) {
  mimicFunction spin = loadKernel(mimic::kernels::vectorSpin(4096));
  const uint32_t half = uint32_t(propertiesOf().computeUnits / 2);
  auto run = [&](mimicQueue q, int64_t iterations) {
    EXPECT_EQ(mimicLaunchKernel(spin, {half, 1, 1}, &iterations, 8, q), MIMIC_SUCCESS);
  };
  mimicQueue q1 = newQueue(), q2 = newQueue();
  run(q1, 3000);
  uint64_t t1 = kernelNs(countersAfter(q1));
  run(q2, 2000);
  uint64_t t2 = kernelNs(countersAfter(q2));
  mimicEvent start = newEvent(), end1 = newEvent(), end2 = newEvent();
  ASSERT_OK(mimicEventRecord(start, q1));
  ASSERT_OK(mimicQueueWaitEvent(q2, start));
  run(q1, 3000);
  run(q2, 2000);
  ASSERT_OK(mimicEventRecord(end1, q1));
  ASSERT_OK(mimicEventRecord(end2, q2));
  const uint64_t launch = propertiesOf().commandLatencyNs;
  const uint64_t together =
      std::max(timestampOf(end1), timestampOf(end2)) - timestampOf(start) - launch;
  EXPECT_WITHIN_PERCENT(together, std::max(t1, t2), 2);
  EXPECT_LT(together, 0.8 * double(t1 + t2));
}

TEST_F(DriverTest, HbmContentionSlowsTwoStreamingKernels) {
  const int64_t n = 2 << 20;
  Axpy a(n, computeUnits() / 2), b(n, computeUnits() / 2);
  mimicQueue q1 = newQueue(), q2 = newQueue();
  ASSERT_OK(a.launch(q1));
  const uint64_t alone = kernelNs(countersAfter(q1));
  mimicEvent start = newEvent();
  ASSERT_OK(mimicEventRecord(start, q1));
  ASSERT_OK(mimicQueueWaitEvent(q2, start));
  ASSERT_OK(a.launch(q1));
  ASSERT_OK(b.launch(q2));
  const uint64_t shared1 = kernelNs(countersAfter(q1));
  const uint64_t shared2 = kernelNs(countersAfter(q2));
  EXPECT_WITHIN_PERCENT(shared1, 2 * alone, 10);
  EXPECT_WITHIN_PERCENT(shared2, 2 * alone, 10);
}

TEST(EngineTimingTest, DoubleBufferingOverlapsDmaWithCompute) {
  // Slow vector ops: compute takes about 1.7 times as long as the DMA per tile.
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "isa.vector_cycles=10"));
  const int64_t n = 2 << 20;
  Axpy axpy(n, computeUnits(), 2);
  mimicQueue q = newQueue();
  ASSERT_OK(axpy.launch(q));
  const uint64_t measured = kernelNs(countersAfter(q));
  const mimicDeviceProperties p = propertiesOf();
  const double tiles = double(n) / Axpy::kTile;
  const double dmaNs = axpy.hbmBytes() / p.hbmBandwidthGBps;
  const double computeCyclesPerTile = 2.0 * 10 * Axpy::kTile / p.vectorLanes;
  const double computeNs = tiles * computeCyclesPerTile / (p.clockMHz / 1000) / p.computeUnits;
  EXPECT_LT(measured, 0.8 * (dmaNs + computeNs));
  EXPECT_WITHIN_PERCENT(measured, std::max(dmaNs, computeNs), 10);
}

TEST(EngineTimingTest, GemmRunsAtTheMatrixRooflineInWaves) {
  // Enough HBM bandwidth that 64 x 64 tiles are compute-bound, and room for them.
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "compute.scratchpad=128KiB,hbm.bandwidth_gbps=1000"));
  const uint32_t tile = 64;
  const int64_t m = 5 * tile, n = 4 * tile, k = 4096;  // 20 tiles on 4 CUs: 5 full waves
  void *a = deviceAlloc(m * k * 4), *b = deviceAlloc(k * n * 4), *c = deviceAlloc(m * n * 4);
  ASSERT_OK(mimicMemsetAsync(a, 0, m * k * 4, nullptr));
  ASSERT_OK(mimicMemsetAsync(b, 0, k * n * 4, nullptr));
  mimicFunction fn = loadKernel(mimic::kernels::gemm(tile));
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } args{c, a, b, m, n, k};
  mimicQueue q = newQueue();
  ASSERT_OK(
      mimicLaunchKernel(fn, {uint32_t(n / tile), uint32_t(m / tile), 1}, &args, sizeof args, q));
  mimicKernelCounters counters = countersAfter(q);
  const mimicDeviceProperties p = propertiesOf();
  const double waves = std::ceil(double((m / tile) * (n / tile)) / p.computeUnits);
  const double macsPerWorkgroup = double(tile) * tile * k;
  const double macsPerCycle = 256;  // isa.mma_f32_macs_per_cycle's default
  const double model = waves * macsPerWorkgroup / macsPerCycle / (p.clockMHz / 1000);
  EXPECT_WITHIN_PERCENT(kernelNs(counters), model, 5);
  EXPECT_EQ(counters.flops, uint64_t(2 * m * n * k));
  EXPECT_GT(counters.busy[MIMIC_PIPE_MATRIX], 0.9);
}

}  // namespace
