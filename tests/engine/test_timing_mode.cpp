// Timing-only mode (MIMIC_MODE=timing, system.mode): the same simulated start and end of every
// kernel, copy and fill as full mode, no host memory behind device allocations, out-of-memory at
// the real capacity, SLoads counted as data-dependent reads. Each mode needs a simulation of its
// own, so every run happens in a child process and the test compares what the children report.
#include <cstdio>
#include <cstring>
#include <string>

#include "engine_test.h"
#include "kernels/reference_kernels.h"
#include "mimic/mimic_trace.h"
#include "scale_kernels.h"

namespace {

using Numbers = std::vector<uint64_t>;

// Each workgroup loads one i32 from idx[wg], SLoads it and runs that many vector ops: its time
// depends on device data. Args: idx.
constexpr const char* kDataLoop = R"(
.kernel dataloop 8
  arg s1, 0
  wgid s2, 0
  salu.mul s3, s2, #4
  salu.add s1, s1, s3
  li s4, 1
  li s5, 4
  dma.desc.i32 d0, 0, s4, s5, s5
  li s6, 0
  dma.load s7, s6, s1, d0
  wait s7
  sload.i32 s8, s6
  li s9, 1024
  li s10, 4096
  brz s8, done
loop:
  vfill.f32 s9, #1.0, s10
  salu.sub s8, s8, #1
  brnz s8, loop
done:
  exit
.end
)";

void* upload(const std::vector<float>& host) {
  void* dev = deviceAlloc(host.size() * sizeof(float));
  EXPECT_EQ(mimicMemcpy(dev, host.data(), host.size() * sizeof(float)), MIMIC_SUCCESS);
  return dev;
}

std::vector<float> ramp(size_t n) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = float(i % 97) * 0.25f - 3.0f;
  return v;
}

// The engine's kernels (scale_kernels.h, kernels/reference_kernels.h) and every kind of copy and
// fill on the tiny preset, traced; returns per record its kind, start and end, and for kernels
// every counter, then the placeholder copies.
Numbers runCorpus() {
  if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return {};
  EXPECT_EQ(mimicTraceStart(4096), MIMIC_SUCCESS);
  const int64_t n = 1 << 16;
  std::vector<float> x = ramp(n), y = ramp(n);
  void *dx = upload(x), *dy = upload(y), *dz = deviceAlloc(n * 4);
  EXPECT_EQ(mimicMemsetAsync(dz, 0, n * 4, nullptr), MIMIC_SUCCESS);
  EXPECT_EQ(mimicMemcpyAsync(dz, dx, n * 4, nullptr), MIMIC_SUCCESS);
  void* peer = deviceAlloc(n * 4, 1);
  EXPECT_EQ(mimicMemcpyPeerAsync(peer, 1, dz, 0, n * 4, nullptr), MIMIC_SUCCESS);

  mimicModule module = nullptr;
  mimicFunction scale2 = loadFunction(mimic::isa::assemble(kScaleKernels), "scale2", 0, &module);
  mimicFunction empty = nullptr;
  EXPECT_EQ(mimicModuleGetFunction(module, "empty", &empty), MIMIC_SUCCESS);
  struct {
    void *dst, *src;
  } scaleArgs{dz, dx};
  EXPECT_EQ(
      mimicLaunchKernel(scale2, {uint32_t(n / 256), 1, 1}, &scaleArgs, sizeof scaleArgs, nullptr),
      MIMIC_SUCCESS);
  EXPECT_EQ(mimicLaunchKernel(empty, {3, 1, 1}, nullptr, 0, nullptr), MIMIC_SUCCESS);

  const int64_t rows = 64, cols = n / rows;
  struct {
    void *c, *a, *b;
    int64_t cols, aRowStride, aColStride, bRowStride, bColStride;
  } addArgs{dz, dx, dy, cols, 1, rows, 0, 1};
  EXPECT_EQ(mimicLaunchKernel(loadKernel(mimic::kernels::addStrided(128)),
                              {uint32_t(cols / 128), uint32_t(rows), 1}, &addArgs, sizeof addArgs,
                              nullptr),
            MIMIC_SUCCESS);
  for (int depth : {2, 3}) {
    struct {
      void *y, *x;
      int64_t n, alpha;
    } axpyArgs{dy, dx, n, 0x3fc00000};
    EXPECT_EQ(mimicLaunchKernel(loadKernel(mimic::kernels::axpyPipelined(1024, 4, depth)),
                                {uint32_t(n / 4096), 1, 1}, &axpyArgs, sizeof axpyArgs, nullptr),
              MIMIC_SUCCESS);
  }
  struct {
    void *out, *in;
    int64_t rows, cols;
  } sumArgs{dz, dx, rows, cols};
  EXPECT_EQ(mimicLaunchKernel(loadKernel(mimic::kernels::rowSum(4, 256)),
                              {uint32_t(rows / 4), 1, 1}, &sumArgs, sizeof sumArgs, nullptr),
            MIMIC_SUCCESS);
  int64_t iterations = 5;
  EXPECT_EQ(mimicLaunchKernel(loadKernel(mimic::kernels::vectorSpin(4096)), {8, 1, 1}, &iterations,
                              sizeof iterations, nullptr),
            MIMIC_SUCCESS);
  // Edges that are not multiples of the tile.
  const int64_t m = 200, gn = 136, k = 72;
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } gemmArgs{dz, dx, dy, m, gn, k};
  EXPECT_EQ(mimicLaunchKernel(loadKernel(mimic::kernels::gemm(64)),
                              {uint32_t((gn + 63) / 64), uint32_t((m + 63) / 64), 1}, &gemmArgs,
                              sizeof gemmArgs, nullptr),
            MIMIC_SUCCESS);
  std::vector<float> back(n);
  EXPECT_EQ(mimicMemcpy(back.data(), dz, n * 4), MIMIC_SUCCESS);
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  EXPECT_EQ(mimicDeviceSynchronize(1), MIMIC_SUCCESS);

  std::vector<mimicActivity> records(4096);
  size_t count = 0;
  EXPECT_EQ(mimicTraceRead(records.data(), records.size(), &count), MIMIC_SUCCESS);
  Numbers out;
  for (size_t i = 0; i < count; ++i) {
    const mimicActivity& a = records[i];
    out.insert(out.end(), {uint64_t(a.kind), uint64_t(a.device), a.startNs, a.endNs, a.bytes});
    if (a.kind != MIMIC_ACTIVITY_KERNEL) continue;
    const mimicKernelCounters& c = a.counters;
    out.insert(out.end(), {c.workgroups, c.flops, c.hbmBytesRead, c.hbmBytesWritten, c.cycles,
                           c.cacheHitBytes, c.dataDependentReads});
    out.insert(out.end(), std::begin(c.instructions), std::end(c.instructions));
  }
  uint64_t copies = 0, bytes = 0;
  EXPECT_EQ(mimicGetPlaceholderCopies(&copies, &bytes), MIMIC_SUCCESS);
  out.insert(out.end(), {copies, bytes});
  return out;
}

TEST(TimingMode, EveryKernelCopyAndFillKeepsItsSimulatedTimes) {
  Numbers full = runInChild(runCorpus, "MIMIC_MODE", "full");
  Numbers timing = runInChild(runCorpus, "MIMIC_MODE", "timing");
  ASSERT_GE(full.size(), 2u);
  ASSERT_EQ(full.size(), timing.size());
  // The placeholder counts are the last two numbers: none in full mode, the one download
  // (2^16 floats) in timing mode.
  EXPECT_EQ(full[full.size() - 2], 0u);
  EXPECT_EQ(full.back(), 0u);
  EXPECT_EQ(timing[timing.size() - 2], 1u);
  EXPECT_EQ(timing.back(), uint64_t(1 << 18));
  full.resize(full.size() - 2);
  timing.resize(timing.size() - 2);
  EXPECT_EQ(full, timing);
}

// Device reads in timing mode: bulk data (more than 64 KiB) does not move, so its download
// fills the host buffer with zeros; the host's small control data makes the round trip intact.
// Both downloads are counted as placeholders.
TEST(TimingMode, BulkDownloadsWriteZerosAndSmallCopiesKeepTheirBytes) {
  constexpr size_t kBulk = 32 * 1024, kSmall = 1000;  // floats: 128 KiB and 4000 bytes
  Numbers result = runInChild(
      [] {
        if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return Numbers{};
        mimicSimulationMode mode = MIMIC_SIMULATION_FULL;
        EXPECT_EQ(mimicGetSimulationMode(&mode), MIMIC_SUCCESS);
        std::vector<float> bulk(kBulk, 3.5f), bulkBack(kBulk, 7.0f);
        std::vector<float> small(kSmall, 2.5f), smallBack(kSmall, 7.0f);
        EXPECT_EQ(mimicMemcpy(bulkBack.data(), upload(bulk), kBulk * 4), MIMIC_SUCCESS);
        EXPECT_EQ(mimicMemcpy(smallBack.data(), upload(small), kSmall * 4), MIMIC_SUCCESS);
        uint64_t copies = 0, bytes = 0;
        EXPECT_EQ(mimicGetPlaceholderCopies(&copies, &bytes), MIMIC_SUCCESS);
        Numbers out{uint64_t(mode), copies, bytes};
        for (float v : bulkBack) out.push_back(v == 0.0f);
        for (float v : smallBack) out.push_back(v == 2.5f);
        return out;
      },
      "MIMIC_MODE", "timing");
  ASSERT_EQ(result.size(), 3 + kBulk + kSmall);
  EXPECT_EQ(result[0], uint64_t(MIMIC_SIMULATION_TIMING));
  EXPECT_EQ(result[1], 2u);
  EXPECT_EQ(result[2], uint64_t((kBulk + kSmall) * 4));
  for (size_t i = 3; i < result.size(); ++i) ASSERT_EQ(result[i], 1u) << i;
}

// Allocates 1 GiB on each device of the default preset (16 GiB each), fills it, copies half of
// it to the other device, and returns the growth of the resident set.
Numbers residentGrowth() {
  if (mimicInitWithPreset(0, "default", nullptr) != MIMIC_SUCCESS) return {};
  const size_t bytes = size_t{1} << 30;
  const uint64_t before = residentBytes();
  void *a = deviceAlloc(bytes, 0), *b = deviceAlloc(bytes, 1);
  EXPECT_EQ(mimicMemsetAsync(a, 1, bytes, nullptr), MIMIC_SUCCESS);
  EXPECT_EQ(mimicMemcpyPeerAsync(b, 1, a, 0, bytes / 2, nullptr), MIMIC_SUCCESS);
  EXPECT_EQ(mimicDeviceSynchronize(0), MIMIC_SUCCESS);
  EXPECT_EQ(mimicDeviceSynchronize(1), MIMIC_SUCCESS);
  const uint64_t after = residentBytes();
  return {after > before ? after - before : 0};
}

TEST(TimingMode, DeviceAllocationsCommitNoHostMemory) {
  Numbers timing = runInChild(residentGrowth, "MIMIC_MODE", "timing");
  ASSERT_EQ(timing.size(), 1u);
  // Committed, the fill alone would add 1 GiB; the simulation's own bookkeeping is far below
  // 1/16 of it.
  EXPECT_LT(timing[0], uint64_t(64) << 20);
  Numbers full = runInChild(residentGrowth, "MIMIC_MODE", "full");
  ASSERT_EQ(full.size(), 1u);
  EXPECT_GE(full[0], uint64_t(1) << 30);  // the measurement sees committed memory
}

TEST(TimingMode, OutOfMemoryAtTheRealCapacity) {
  Numbers codes = runInChild(
      [] {
        if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return Numbers{};
        void *all = nullptr, *more = nullptr, *huge = nullptr;
        Numbers out{uint64_t(mimicMemAlloc(0, kTinyMemory, &all)),
                    uint64_t(mimicMemAlloc(0, 256, &more)),
                    uint64_t(mimicMemAlloc(1, kTinyMemory + 1, &huge))};
        EXPECT_EQ(mimicMemFree(all), MIMIC_SUCCESS);
        out.push_back(uint64_t(mimicMemAlloc(0, 256, &more)));
        return out;
      },
      "MIMIC_MODE", "timing");
  EXPECT_EQ(codes, (Numbers{MIMIC_SUCCESS, MIMIC_ERROR_OUT_OF_MEMORY, MIMIC_ERROR_OUT_OF_MEMORY,
                            MIMIC_SUCCESS}));
}

// dataloop on 4 workgroups whose counts are 50, and scale2: per mode, each kernel's duration and
// data-dependent reads.
Numbers dataDependence() {
  if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return {};
  const std::vector<int32_t> counts(4, 50);
  void* idx = deviceAlloc(counts.size() * 4);
  EXPECT_EQ(mimicMemcpy(idx, counts.data(), counts.size() * 4), MIMIC_SUCCESS);
  mimicQueue q = newQueue();
  EXPECT_EQ(
      mimicLaunchKernel(assembleFunction(kDataLoop, "dataloop"), {4, 1, 1}, &idx, sizeof idx, q),
      MIMIC_SUCCESS);
  const mimicKernelCounters loop = countersAfter(q);
  void *src = deviceAlloc(1024 * 4), *dst = deviceAlloc(1024 * 4);
  struct {
    void *dst, *src;
  } args{dst, src};
  EXPECT_EQ(mimicLaunchKernel(assembleFunction(kScaleKernels, "scale2"), {4, 1, 1}, &args,
                              sizeof args, q),
            MIMIC_SUCCESS);
  const mimicKernelCounters plain = countersAfter(q);
  return {kernelNs(loop), loop.dataDependentReads, loop.instructions[MIMIC_PIPE_VECTOR],
          kernelNs(plain), plain.dataDependentReads};
}

TEST(TimingMode, SLoadsOfComputedDataAreCountedAndReadZero) {
  Numbers full = runInChild(dataDependence, "MIMIC_MODE", "full");
  Numbers timing = runInChild(dataDependence, "MIMIC_MODE", "timing");
  ASSERT_EQ(full.size(), 5u);
  ASSERT_EQ(timing.size(), 5u);
  // One SLoad per workgroup, in both modes; scale2 has none.
  EXPECT_EQ(full[1], 4u);
  EXPECT_EQ(timing[1], 4u);
  EXPECT_EQ(full[4], 0u);
  EXPECT_EQ(timing[4], 0u);
  // Full mode loops 50 times per workgroup; timing mode read 0 and ran no vector op, so the
  // data-dependent kernel is shorter, and the data-independent one is not.
  EXPECT_EQ(full[2], 200u);
  EXPECT_EQ(timing[2], 0u);
  EXPECT_LT(timing[0], full[0]);
  EXPECT_EQ(timing[3], full[3]);
}

// scale2 reading past the end of a 1 KiB source: the fault and its sticky error, per mode.
Numbers faultingKernel() {
  if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return {};
  // The source last, so that nothing lies past its end.
  void* dst = deviceAlloc(4 * 1024);
  void* src = deviceAlloc(1024);
  struct {
    void *dst, *src;
  } args{dst, src};
  const mimicResult launch = mimicLaunchKernel(assembleFunction(kScaleKernels, "scale2"), {4, 1, 1},
                                               &args, sizeof args, nullptr);
  return {uint64_t(launch), uint64_t(mimicDeviceSynchronize(0))};
}

TEST(TimingMode, KernelsFaultAsInFullMode) {
  const Numbers expected{MIMIC_SUCCESS, MIMIC_ERROR_ILLEGAL_ADDRESS};
  EXPECT_EQ(runInChild(faultingKernel, "MIMIC_MODE", "full"), expected);
  EXPECT_EQ(runInChild(faultingKernel, "MIMIC_MODE", "timing"), expected);
}

TEST(TimingMode, TheModeIsReadFromTheEnvironmentAndThePreset) {
  Numbers result = runInChild([] {
    mimicSimulationMode mode = MIMIC_SIMULATION_TIMING;
    const mimicResult init = mimicInitWithPreset(0, "tiny", nullptr);
    return Numbers{uint64_t(init), uint64_t(mimicGetSimulationMode(&mode)), uint64_t(mode),
                   uint64_t(mimicGetSimulationMode(nullptr))};
  });
  EXPECT_EQ(result, (Numbers{MIMIC_SUCCESS, MIMIC_SUCCESS, MIMIC_SIMULATION_FULL,
                             MIMIC_ERROR_NULL_POINTER}));
  result = runInChild([] {
    mimicSimulationMode mode = MIMIC_SIMULATION_FULL;
    const mimicResult init = mimicInitWithPreset(0, "tiny", "system.mode=timing");
    return Numbers{uint64_t(init), uint64_t(mimicGetSimulationMode(&mode)), uint64_t(mode),
                   uint64_t(mimicGetPlaceholderCopies(nullptr, nullptr))};
  });
  EXPECT_EQ(result, (Numbers{MIMIC_SUCCESS, MIMIC_SUCCESS, MIMIC_SIMULATION_TIMING,
                             MIMIC_ERROR_NULL_POINTER}));
}

// The child reports the init result and whether the detail names the bad value and the setting.
Numbers badMode(const char* overrides, const char* setting) {
  const mimicResult init = mimicInitWithPreset(0, "tiny", overrides);
  const std::string detail = errorDetail();
  return {uint64_t(init), detail.find("'fast'") != std::string::npos,
          detail.find(setting) != std::string::npos};
}

TEST(TimingMode, AnUnknownModeIsAnErrorNamingIt) {
  Numbers env = runInChild([] { return badMode(nullptr, "MIMIC_MODE"); }, "MIMIC_MODE", "fast");
  EXPECT_EQ(env, (Numbers{MIMIC_ERROR_INVALID_CONFIG_VALUE, 1, 1}));
  Numbers preset = runInChild([] { return badMode("system.mode=fast", "system.mode"); });
  EXPECT_EQ(preset, (Numbers{MIMIC_ERROR_INVALID_CONFIG_VALUE, 1, 1}));
}

}  // namespace
