// racecheck (MIMIC_SANITIZE=racecheck): unordered accesses of two queues to the same bytes are
// reported once each, ordered ones never, whatever the simulated timing. Each program runs in
// a child process, because the sanitizer is chosen when mimic initialises.
#include <functional>
#include <string>
#include <vector>

#include "engine_test.h"
#include "mimic/mimic_debug.h"
#include "scale_kernels.h"

namespace {

constexpr size_t kBytes = 1024;

// Runs `program` with racecheck on, in a child; returns {init result, findings}.
std::vector<uint64_t> withRacecheck(const std::function<void(mimicQueue, mimicQueue)>& program) {
  return runInChild(
      [&] {
        std::vector<uint64_t> out{uint64_t(mimicInitWithPreset(0, "tiny", nullptr))};
        mimicQueue a = nullptr, b = nullptr;
        mimicQueueCreate(0, 0, 0, &a);
        mimicQueueCreate(0, 0, 0, &b);
        program(a, b);
        mimicDeviceSynchronize(0);
        uint64_t findings = 99;
        mimicDebugGetRaceFindings(&findings);
        out.push_back(findings);
        return out;
      },
      "MIMIC_SANITIZE", "racecheck");
}

uint64_t findingsOf(const std::function<void(mimicQueue, mimicQueue)>& program) {
  const std::vector<uint64_t> result = withRacecheck(program);
  EXPECT_EQ(result.size(), 2u);
  EXPECT_EQ(result.empty() ? 1 : result[0], uint64_t(MIMIC_SUCCESS));
  return result.size() == 2 ? result[1] : 99;
}

// A kernel on queue a writes `out`; then queue b reads it into the host.
void kernelThenCopy(mimicQueue a, mimicQueue b, bool ordered) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  void* in = deviceAlloc(kBytes);
  void* out = deviceAlloc(kBytes);
  mimicMemsetAsync(in, 0, kBytes, a);
  const void* args[] = {out, in};
  mimicLaunchKernel(fn, {1, 1, 1}, args, sizeof args, a);
  if (ordered) {
    mimicEvent done = newEvent();
    mimicEventRecord(done, a);
    mimicQueueWaitEvent(b, done);
  }
  std::vector<uint8_t> host(kBytes);
  mimicMemcpyAsync(host.data(), out, kBytes, b);
}

}  // namespace

TEST(Racecheck, MissingWaitIsReported) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) { kernelThenCopy(a, b, false); }), 1u);
}

TEST(Racecheck, EventWaitOrdersTheQueues) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) { kernelThenCopy(a, b, true); }), 0u);
}

TEST(Racecheck, HostWaitOrdersTheQueues) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) {
              void* buffer = deviceAlloc(kBytes);
              mimicMemsetAsync(buffer, 1, kBytes, a);
              mimicQueueSynchronize(a);
              mimicMemsetAsync(buffer, 2, kBytes, b);
            }),
            0u);
}

TEST(Racecheck, ReadsDoNotRace) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) {
              void* buffer = deviceAlloc(kBytes);
              mimicMemsetAsync(buffer, 1, kBytes, nullptr);
              mimicDeviceSynchronize(0);
              std::vector<uint8_t> host(kBytes);
              mimicMemcpyAsync(host.data(), buffer, kBytes, a);
              mimicMemcpyAsync(host.data(), buffer, kBytes, b);
            }),
            0u);
}

TEST(Racecheck, DisjointBytesDoNotRace) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) {
              auto* buffer = static_cast<uint8_t*>(deviceAlloc(kBytes));
              mimicMemsetAsync(buffer, 1, kBytes / 2, a);
              mimicMemsetAsync(buffer + kBytes / 2, 2, kBytes / 2, b);
            }),
            0u);
}

// The second fill starts long after the first has finished, but nothing orders them.
TEST(Racecheck, FoundWhateverTheTiming) {
  EXPECT_EQ(findingsOf([](mimicQueue a, mimicQueue b) {
              void* buffer = deviceAlloc(kBytes);
              mimicMemsetAsync(buffer, 1, kBytes, a);
              mimicLaunchHostTask(
                  b, [](void*, uint64_t start) { return start + 10000000; }, nullptr);
              mimicMemsetAsync(buffer, 2, kBytes, b);
              mimicMemsetAsync(buffer, 3, kBytes, b);  // the same race: reported once
            }),
            1u);
}

TEST(Racecheck, AnUnknownSanitizerToolFailsInit) {
  const std::vector<uint64_t> result = runInChild(
      [] { return std::vector<uint64_t>{uint64_t(mimicInitWithPreset(0, "tiny", nullptr))}; },
      "MIMIC_SANITIZE", "racecheck,bogus");
  ASSERT_EQ(result.size(), 1u);
  EXPECT_EQ(result[0], uint64_t(MIMIC_ERROR_INVALID_CONFIG_VALUE));
}

TEST_F(DriverTest, RaceFindingsNeedAPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugGetRaceFindings(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugNameCorrelation(1, nullptr));
  ASSERT_OK(mimicDebugNameCorrelation(1, "aten::add"));
  uint64_t findings = 7;
  ASSERT_OK(mimicDebugGetRaceFindings(&findings));
  EXPECT_EQ(findings, 0u);  // racecheck is off
}
