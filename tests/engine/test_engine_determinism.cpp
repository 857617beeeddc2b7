// Kernels give identical results and identical simulated times whatever the number of host
// threads that run them. Each run is a child process with MIMIC_HOST_THREADS set.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <random>

#include "engine_test.h"
#include "kernels/reference_kernels.h"

namespace {

// Every workgroup adds its own 64 floats into one accumulator: float addition does not
// associate, so the result shows the order in which workgroups' atomics were applied.
const char* kScatter = R"(
.kernel scatter 16
  arg s1, 0
  arg s2, 1
  wgid s3, 0
  salu.mul s3, s3, #256
  salu.add s2, s2, s3
  li s4, 64
  li s5, 4
  dma.desc.f32 d0, 0, s4, s5, s5
  li s6, 0
  dma.load s7, s6, s2, d0
  wait s7
  atomic.add.f32 s1, s6, s4
  exit
.end
)";

// Runs a GEMM, a row sum and a scatter-add on two queues and returns their outputs' bytes,
// then the kernels' start and end times.
std::vector<uint64_t> runProgram() {
  std::vector<uint64_t> out;
  if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return out;
  const int64_t m = 96, n = 80, k = 150;
  std::vector<float> a(m * k), b(k * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& v : a) v = dist(rng);
  for (float& v : b) v = dist(rng);
  void *da = deviceAlloc(a.size() * 4), *db = deviceAlloc(b.size() * 4);
  void *dc = deviceAlloc(m * n * 4), *sums = deviceAlloc(m * 4);
  mimicMemcpy(da, a.data(), a.size() * 4);
  mimicMemcpy(db, b.data(), b.size() * 4);
  mimicQueue q1 = newQueue(), q2 = newQueue();
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } gemmArgs{dc, da, db, m, n, k};
  mimicLaunchKernel(loadKernel(mimic::kernels::gemm(32)), {3, 3, 1}, &gemmArgs, sizeof gemmArgs,
                    q1);
  struct {
    void *out, *in;
    int64_t rows, cols;
  } sumArgs{sums, da, m, k};
  mimicLaunchKernel(loadKernel(mimic::kernels::rowSum(8, 64)), {12, 1, 1}, &sumArgs, sizeof sumArgs,
                    q2);
  const uint32_t scatterGroups = 200;
  std::vector<float> contributions(scatterGroups * 64);
  for (float& v : contributions) v = dist(rng) * 1000;
  void* input = deviceAlloc(contributions.size() * 4);
  void* acc = deviceAlloc(64 * 4);
  mimicMemcpy(input, contributions.data(), contributions.size() * 4);
  mimicMemsetAsync(acc, 0, 64 * 4, q2);
  struct {
    void *acc, *input;
  } scatterArgs{acc, input};
  mimicLaunchKernel(assembleFunction(kScatter, "scatter"), {scatterGroups, 1, 1}, &scatterArgs,
                    sizeof scatterArgs, q2);
  mimicDeviceSynchronize(0);
  std::vector<uint32_t> c(m * n + m + 64);
  mimicMemcpy(c.data(), dc, m * n * 4);
  mimicMemcpy(c.data() + m * n, sums, m * 4);
  mimicMemcpy(c.data() + m * n + m, acc, 64 * 4);
  out.assign(c.begin(), c.end());
  for (mimicQueue q : {q1, q2}) {
    mimicKernelCounters counters{};
    mimicQueueGetKernelCounters(q, &counters);
    out.push_back(counters.startNs);
    out.push_back(counters.endNs);
  }
  return out;
}

TEST(EngineDeterminismTest, OneAndTwoHostThreadsGiveIdenticalResultsAndTimes) {
  std::vector<uint64_t> one = runInChild(runProgram, "MIMIC_HOST_THREADS", "1");
  ASSERT_EQ(one.size(), size_t(96 * 80 + 96 + 64 + 4));
  EXPECT_GT(one.back(), 0u);
  EXPECT_EQ(runInChild(runProgram, "MIMIC_HOST_THREADS", "2"), one);
  EXPECT_EQ(runInChild(runProgram, "MIMIC_HOST_THREADS", "2"), one);
}

TEST(EngineDeterminismTest, BadHostThreadCountIsRejected) {
  setenv("MIMIC_HOST_THREADS", "many", 1);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_CONFIG_VALUE, mimicInitWithPreset(0, "tiny", nullptr));
  EXPECT_NE(errorDetail().find("MIMIC_HOST_THREADS"), std::string::npos);
  setenv("MIMIC_HOST_THREADS", "2", 1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicInitWithPreset(0, "tiny", nullptr));
}

}  // namespace
