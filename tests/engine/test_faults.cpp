// Fault injection (mimicDebugSetFaults, MIMIC_FAULTS): each planned fault gives its documented
// code, at the documented point, without a hang, and a device reset recovers sticky ones.
#include <string>

#include "engine_test.h"
#include "mimic/mimic_debug.h"
#include "scale_kernels.h"

namespace {

void launchEmpty(mimicFunction fn, mimicQueue queue = nullptr) {
  ASSERT_OK(mimicLaunchKernel(fn, {1, 1, 1}, nullptr, 0, queue));
}

}  // namespace

TEST_F(DriverTest, FaultPlanRejectsBadSpecs) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("ecc_at_kernal=1"));
  EXPECT_NE(errorDetail().find("unknown fault 'ecc_at_kernal'"), std::string::npos)
      << errorDetail();
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("oom_at_alloc"));
  EXPECT_NE(errorDetail().find("needs a value"), std::string::npos) << errorDetail();
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("oom_at_alloc=-1"));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("oom_at_alloc=0"));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetFaults("oom_above_bytes=3TB"));
  EXPECT_NE(errorDetail().find("'3TB'"), std::string::npos) << errorDetail();
  ASSERT_OK(mimicDebugSetFaults(nullptr));
  ASSERT_OK(mimicDebugSetFaults(""));
}

TEST_F(DriverTest, OomAtTheNthAllocationOnly) {
  ASSERT_OK(mimicDebugSetFaults("oom_at_alloc=2"));
  void* first = nullptr;
  void* second = nullptr;
  void* third = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 256, &first));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, 256, &second));
  EXPECT_NE(errorDetail().find("injected fault: allocation 2"), std::string::npos);
  EXPECT_EQ(second, nullptr);
  ASSERT_OK(mimicMemAlloc(1, 256, &third));  // not sticky: the devices stay usable
  ASSERT_OK(mimicMemFree(first));
  ASSERT_OK(mimicMemFree(third));
}

TEST_F(DriverTest, OomAboveAByteLimit) {
  ASSERT_OK(mimicDebugSetFaults("oom_above_bytes=1MiB"));
  void* half = nullptr;
  void* more = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 512 * 1024, &half));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_MEMORY, mimicMemAlloc(0, 768 * 1024, &more));
  EXPECT_NE(errorDetail().find("above oom_above_bytes=1048576"), std::string::npos);
  ASSERT_OK(mimicMemAlloc(1, 768 * 1024, &more));  // the limit is per device
  ASSERT_OK(mimicMemFree(half));
  ASSERT_OK(mimicMemFree(more));
}

TEST_F(DriverTest, KernelFaultsAreStickyUntilReset) {
  mimicFunction fn = assembleFunction(kScaleKernels, "empty");
  const struct {
    const char* spec;
    mimicResult code;
  } cases[] = {{"ecc_at_kernel=2", MIMIC_ERROR_ECC_UNCORRECTABLE},
               {"hang_at_kernel=2", MIMIC_ERROR_LAUNCH_TIMEOUT},
               {"lost_at_kernel=2", MIMIC_ERROR_DEVICE_LOST}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.spec);
    ASSERT_OK(mimicDebugSetFaults(c.spec));
    launchEmpty(fn);
    ASSERT_OK(mimicDeviceSynchronize(0));  // the first kernel is fine
    launchEmpty(fn);
    EXPECT_RESULT(c.code, mimicDeviceSynchronize(0));
    EXPECT_NE(errorDetail().find("injected fault: kernel 2"), std::string::npos) << errorDetail();
    void* memory = nullptr;
    EXPECT_RESULT(c.code, mimicMemAlloc(0, 64, &memory));  // sticky
    ASSERT_OK(mimicDeviceReset(0));
    ASSERT_OK(mimicDebugSetFaults(""));
    launchEmpty(fn);
    ASSERT_OK(mimicDeviceSynchronize(0));  // recovered
  }
}

TEST_F(DriverTest, TimedFaultHitsTheFirstCommandFromThatTime) {
  const uint64_t faultNs = 1000000;
  ASSERT_OK(mimicDebugSetFaults("ecc_at_ns=1000000"));
  void* buffer = deviceAlloc(4096);
  mimicEvent before = newEvent();
  ASSERT_OK(mimicMemsetAsync(buffer, 1, 4096, nullptr));
  ASSERT_OK(mimicEventRecord(before, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));  // all before the fault time
  EXPECT_LT(timestampOf(before), faultNs);
  // Work that starts after the fault time fails the device.
  ASSERT_OK(mimicLaunchHostTask(
      nullptr, [](void*, uint64_t start) { return start + 2000000; }, nullptr));
  ASSERT_OK(mimicMemsetAsync(buffer, 2, 4096, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ECC_UNCORRECTABLE, mimicDeviceSynchronize(0));
  ASSERT_OK(mimicDeviceReset(0));
  ASSERT_OK(mimicDeviceSynchronize(0));
}

TEST(FaultEnvironment, BadMimicFaultsFailsInit) {
  const std::vector<uint64_t> results = runInChild(
      [] { return std::vector<uint64_t>{uint64_t(mimicInitWithPreset(0, "tiny", nullptr))}; },
      "MIMIC_FAULTS", "ecc_at=5");
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0], uint64_t(MIMIC_ERROR_INVALID_CONFIG_VALUE));
}

TEST(FaultEnvironment, MimicFaultsPlansFromInit) {
  const std::vector<uint64_t> results = runInChild(
      [] {
        std::vector<uint64_t> out{uint64_t(mimicInitWithPreset(0, "tiny", nullptr))};
        void* memory = nullptr;
        out.push_back(uint64_t(mimicMemAlloc(0, 64, &memory)));
        return out;
      },
      "MIMIC_FAULTS", "oom_at_alloc=1");
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0], uint64_t(MIMIC_SUCCESS));
  EXPECT_EQ(results[1], uint64_t(MIMIC_ERROR_OUT_OF_MEMORY));
}
