// The timing mechanisms of real parts, each against its analytic model on the tiny preset with
// overrides: the cache, occupancy, the separate vector and matrix pipes, the sustained matrix
// clock, host submit / sync costs with the pipelined launch latency, and link efficiency.
#include <cmath>

#include "engine_test.h"
#include "kernels/reference_kernels.h"

namespace {

// Each workgroup streams `tiles` tiles of `tileElements` f32 from its own chunk of `src`, two
// DMAs in flight, and computes nothing. Args: src, tiles, tileElements.
constexpr const char* kReadStream = R"(
.kernel readstream 24
  arg s1, 0
  arg s2, 1
  arg s3, 2
  wgid s4, 0
  salu.mul s5, s3, #4
  salu.mul s6, s5, s2
  salu.mul s6, s6, s4
  salu.add s1, s1, s6
  li s8, 4
  dma.desc.f32 d0, 0, s3, s8, s8
  li s10, 0
  li s11, 0
loop:
  salu.and s12, s11, #1
  salu.mul s12, s12, s5
  dma.load s13, s12, s1, d0
  wait s10
  mov s10, s13
  salu.add s1, s1, s5
  salu.add s11, s11, #1
  scmp.lt s14, s11, s2
  brnz s14, loop
  wait s10
  exit
.end
)";

// `iterations` times: load 256 bytes and wait for them, then a vector op on 4096 f32. Its DMA
// latency can only hide behind another workgroup's compute. Args: src, iterations.
constexpr const char* kLatencyThenCompute = R"(
.kernel latcompute 16
  arg s1, 0
  arg s2, 1
  li s3, 64
  li s4, 4
  dma.desc.f32 d0, 0, s3, s4, s4
  li s5, 0
  li s6, 4096
  li s7, 1024
loop:
  dma.load s8, s5, s1, d0
  wait s8
  vbins.mul.f32 s7, s7, #1.0, s6
  salu.sub s2, s2, #1
  brnz s2, loop
  exit
.end
)";

// `iterations` times: a 64 x 64 x 64 f32 mma into C at 32 KiB, then a vector op on 4096 f32 at
// `vector` (C itself makes the two depend on each other). Args: iterations, vector.
constexpr const char* kPipes = R"(
.kernel pipes 16
  arg s1, 0
  arg s2, 1
  li s3, 64
  mshape s3, s3, s3
  li s4, 0
  li s5, 16384
  li s6, 32768
  li s7, 4096
loop:
  mma.f32 s6, s4, s5
  vbins.mul.f32 s2, s2, #1.0, s7
  salu.sub s1, s1, #1
  brnz s1, loop
  exit
.end
)";

struct ReadStream {
  static constexpr int64_t kTile = 4096;
  explicit ReadStream(int64_t bytes) : bytes(bytes) {
    fn = assembleFunction(kReadStream, "readstream");
    src = deviceAlloc(bytes);
    EXPECT_EQ(mimicMemsetAsync(src, 0, bytes, nullptr), MIMIC_SUCCESS);
    EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  }
  mimicKernelCounters run(mimicQueue q) {
    const uint32_t units = uint32_t(propertiesOf().computeUnits);
    struct {
      void* src;
      int64_t tiles, tile;
    } args{src, bytes / 4 / kTile / units, kTile};
    EXPECT_EQ(mimicLaunchKernel(fn, {units, 1, 1}, &args, sizeof args, q), MIMIC_SUCCESS);
    return countersAfter(q);
  }
  int64_t bytes;
  mimicFunction fn;
  void* src;
};

constexpr const char* kCache =
    "cache.capacity=4MiB,cache.bandwidth_gbps=400,cache.latency_ns=100,hbm.bandwidth_gbps=100,"
    "compute.dma_bandwidth_gbps=1000";

TEST(MechanismTest, ReadsThatHitTheCacheStreamAtItsBandwidthAndMissesAtHbms) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kCache));
  const mimicDeviceProperties p = propertiesOf();
  ASSERT_EQ(p.cacheBytes, 4 * kMiB);
  ReadStream stream(2 * kMiB);
  mimicQueue q = newQueue();
  const mimicKernelCounters cold = stream.run(q);
  const mimicKernelCounters warm = stream.run(q);
  EXPECT_EQ(cold.cacheHitBytes, 0u);  // the fill that wrote it bypassed the cache
  EXPECT_EQ(warm.cacheHitBytes, uint64_t(stream.bytes));
  // Each workgroup's two DMAs start together and share the bandwidth evenly, so they finish
  // together: every pair of tiles costs one latency plus the bytes of all units' pairs at the
  // bandwidth of the level that serves them.
  auto model = [&](double latencyNs, double gbps) {
    const double pairs = double(stream.bytes) / (2.0 * 4 * ReadStream::kTile * p.computeUnits);
    return pairs * (latencyNs + 2.0 * 4 * ReadStream::kTile * p.computeUnits / gbps);
  };
  EXPECT_WITHIN_PERCENT(kernelNs(cold), model(double(p.hbmLatencyNs), p.hbmBandwidthGBps), 2);
  EXPECT_WITHIN_PERCENT(kernelNs(warm), model(double(p.cacheLatencyNs), p.cacheBandwidthGBps), 2);
}

TEST(MechanismTest, AWorkingSetLargerThanTheCacheMissesEveryPass) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kCache));
  ReadStream stream(8 * kMiB);
  mimicQueue q = newQueue();
  const mimicKernelCounters cold = stream.run(q);
  const mimicKernelCounters again = stream.run(q);
  // A cyclic scan twice the capacity evicts every line before its reuse under LRU; only sets
  // that the hash gives fewer lines than ways keep theirs.
  EXPECT_LT(double(again.cacheHitBytes), 0.02 * double(stream.bytes));
  EXPECT_WITHIN_PERCENT(kernelNs(again), kernelNs(cold), 3);
}

TEST(MechanismTest, WritesAllocateSoAReadOfFreshDataHits) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kCache));
  const int64_t n = 256 << 10;  // 1 MiB of f32 in, 1 MiB out
  mimicFunction scale = loadKernel(mimic::kernels::axpyPipelined(1024, uint32_t(n / 1024 / 4), 2));
  void* x = deviceAlloc(n * 4);
  void* y = deviceAlloc(n * 4);
  ASSERT_OK(mimicMemsetAsync(x, 0, n * 4, nullptr));
  ASSERT_OK(mimicMemsetAsync(y, 0, n * 4, nullptr));
  mimicQueue q = newQueue();
  struct {
    void *y, *x;
    int64_t n, alpha;
  } args{y, x, n, 0x3f800000};
  ASSERT_OK(mimicLaunchKernel(scale, {4, 1, 1}, &args, sizeof args, q));
  EXPECT_EQ(countersAfter(q).cacheHitBytes, 0u);
  ASSERT_OK(mimicLaunchKernel(scale, {4, 1, 1}, &args, sizeof args, q));
  // x was read and y written by the first launch: both are cached now.
  EXPECT_EQ(countersAfter(q).cacheHitBytes, uint64_t(2 * n * 4));
}

// Times the latcompute kernel with `grid` workgroups of `iterations`.
uint64_t latencyThenComputeNs(uint32_t grid, int64_t iterations) {
  mimicFunction fn = assembleFunction(kLatencyThenCompute, "latcompute");
  void* src = deviceAlloc(256);
  EXPECT_EQ(mimicMemsetAsync(src, 0, 256, nullptr), MIMIC_SUCCESS);
  mimicQueue q = newQueue();
  struct {
    void* src;
    int64_t iterations;
  } args{src, iterations};
  EXPECT_EQ(mimicLaunchKernel(fn, {grid, 1, 1}, &args, sizeof args, q), MIMIC_SUCCESS);
  return kernelNs(countersAfter(q));
}

constexpr int64_t kIterations = 50;
// Latency-bound: 2 us of DMA latency against 4096 / 16 lanes = 256 vector cycles (171 ns).
constexpr const char* kLatencyBound = "hbm.latency_ns=2000,compute.max_workgroups_per_unit=";

TEST(MechanismTest, OneWorkgroupPerUnitRunsTwoPerUnitInTwoWaves) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", (std::string(kLatencyBound) + "1").c_str()));
  const uint32_t units = uint32_t(propertiesOf().computeUnits);
  const uint64_t oneWave = latencyThenComputeNs(units, kIterations);
  EXPECT_WITHIN_PERCENT(latencyThenComputeNs(2 * units, kIterations), 2 * oneWave, 1);
}

TEST(MechanismTest, ResidentWorkgroupsHideEachOthersLatency) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", (std::string(kLatencyBound) + "2").c_str()));
  const mimicDeviceProperties p = propertiesOf();
  const uint32_t units = uint32_t(p.computeUnits);
  const uint64_t oneWave = latencyThenComputeNs(units, kIterations);
  // Two per unit: each one's compute fits in the other's latency, so both finish about when
  // one alone does, plus one compute step.
  const double computeNs = 4096.0 / p.vectorLanes / (p.clockMHz / 1000);
  EXPECT_WITHIN_PERCENT(latencyThenComputeNs(2 * units, kIterations), oneWave + computeNs, 2);
}

uint64_t pipesNs(int64_t iterations, int64_t vectorAddress) {
  mimicFunction fn = assembleFunction(kPipes, "pipes");
  mimicQueue q = newQueue();
  int64_t args[2] = {iterations, vectorAddress};
  EXPECT_EQ(mimicLaunchKernel(fn, {1, 1, 1}, args, sizeof args, q), MIMIC_SUCCESS);
  return kernelNs(countersAfter(q));
}

// 64^3 MACs at 256 per cycle and 4096 elements at 16 lanes x 4 cycles: 1024 cycles each.
constexpr const char* kBalancedPipes = "isa.vector_cycles=4";

TEST(MechanismTest, IndependentVectorAndMatrixWorkOverlaps) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kBalancedPipes));
  const mimicDeviceProperties p = propertiesOf();
  const double cycleNs = 1000 / p.clockMHz;
  const int64_t iterations = 100;
  EXPECT_WITHIN_PERCENT(pipesNs(iterations, 49152), iterations * 1024 * cycleNs, 3);
}

TEST(MechanismTest, VectorWorkOnTheMatrixResultWaitsForIt) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kBalancedPipes));
  const mimicDeviceProperties p = propertiesOf();
  const double cycleNs = 1000 / p.clockMHz;
  const int64_t iterations = 100;
  EXPECT_WITHIN_PERCENT(pipesNs(iterations, 32768), iterations * 2048 * cycleNs, 3);
}

TEST(MechanismTest, TheMatrixPipeRunsAtItsSustainedClock) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "isa.vector_cycles=4,compute.matrix_clock_mhz=750"));
  const mimicDeviceProperties p = propertiesOf();
  ASSERT_EQ(p.matrixClockMHz, 750);
  const int64_t iterations = 100;
  // The matrix steps now take twice the vector ones, which hide behind them.
  EXPECT_WITHIN_PERCENT(pipesNs(iterations, 49152), iterations * 1024 * 1000 / 750.0, 3);
}

constexpr const char* kHostCosts =
    "host.submit_ns=2000,cp.launch_latency_ns=3000,host.sync_ns=1500,"
    "compute.workgroup_launch_ns=300";

TEST(MechanismTest, LaunchAndSynchronizeCostsTheWholeRoundTrip) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kHostCosts));
  const mimicDeviceProperties p = propertiesOf();
  mimicFunction empty = assembleFunction(".kernel empty 0\n exit\n.end\n", "empty");
  mimicQueue q = newQueue();
  ASSERT_OK(mimicLaunchKernel(empty, {1, 1, 1}, nullptr, 0, q));
  ASSERT_OK(mimicQueueSynchronize(q));
  const uint64_t before = simTime();
  ASSERT_OK(mimicLaunchKernel(empty, {1, 1, 1}, nullptr, 0, q));
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_EQ(simTime() - before, p.hostSubmitNs + p.launchLatencyNs + p.commandLatencyNs +
                                    p.workgroupLaunchNs + p.hostSyncNs);
}

TEST(MechanismTest, BackToBackLaunchesAreBoundByTheSlowerOfHostAndDevice) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", kHostCosts));
  const mimicDeviceProperties p = propertiesOf();
  mimicFunction empty = assembleFunction(".kernel empty 0\n exit\n.end\n", "empty");
  mimicQueue q = newQueue();
  ASSERT_OK(mimicQueueSynchronize(q));
  const int launches = 50;
  const uint64_t before = simTime();
  for (int i = 0; i < launches; ++i) ASSERT_OK(mimicLaunchKernel(empty, {1, 1, 1}, nullptr, 0, q));
  ASSERT_OK(mimicQueueSynchronize(q));
  // The host submits every 2 us; the device needs 1.3 us per kernel: host-bound, and the
  // launch latency is paid once, overlapped with the rest.
  const uint64_t perDevice = p.commandLatencyNs + p.workgroupLaunchNs;
  ASSERT_GT(p.hostSubmitNs, perDevice);
  EXPECT_EQ(simTime() - before,
            launches * p.hostSubmitNs + p.launchLatencyNs + perDevice + p.hostSyncNs);
}

TEST(MechanismTest, HostLinkCopiesMoveAtTheAchievableShareOfThePeak) {
  ASSERT_OK(mimicInitWithPreset(0, "tiny", "host_link.efficiency=0.8"));
  const mimicDeviceProperties p = propertiesOf();
  ASSERT_EQ(p.hostLinkEfficiency, 0.8);
  const size_t bytes = 8 * kMiB;
  void* dev = deviceAlloc(bytes);
  void* host = pinnedAlloc(bytes);
  mimicQueue q = newQueue();
  mimicEvent start = newEvent(), end = newEvent();
  ASSERT_OK(mimicEventRecord(start, q));
  ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, q));
  ASSERT_OK(mimicEventRecord(end, q));
  const double model = double(p.commandLatencyNs + p.hostLinkLatencyNs) +
                       double(bytes) / (p.hostLinkBandwidthGBps * p.hostLinkEfficiency);
  EXPECT_NEAR(double(timestampOf(end) - timestampOf(start)), model, 2);
}

TEST(MechanismTest, AnEfficiencyOutsideZeroToOneNamesTheField) {
  EXPECT_EQ(mimicInitWithPreset(0, "tiny", "hbm.efficiency=1.5"), MIMIC_ERROR_INVALID_CONFIG_VALUE);
  const char* detail = nullptr;
  ASSERT_OK(mimicGetErrorDetail(&detail));
  EXPECT_NE(std::string(detail).find("hbm.efficiency"), std::string::npos) << detail;
}

TEST(MechanismTest, ACacheSmallerThanOneSetIsRejected) {
  EXPECT_EQ(mimicInitWithPreset(0, "tiny", "cache.capacity=1KiB"),
            MIMIC_ERROR_INVALID_CONFIG_VALUE);
  const char* detail = nullptr;
  ASSERT_OK(mimicGetErrorDetail(&detail));
  EXPECT_NE(std::string(detail).find("cache.capacity"), std::string::npos) << detail;
}

}  // namespace
