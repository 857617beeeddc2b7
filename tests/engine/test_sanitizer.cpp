// The sanitizer's API (mimic_debug.h): tools chosen at run time, allocator regions, and the
// findings of memcheck, initcheck and leakcheck on regions inside a pool, each reported once.
#include <cstdint>
#include <vector>

#include "engine_test.h"
#include "mimic/mimic_debug.h"
#include "scale_kernels.h"

namespace {

constexpr unsigned kMemoryTools =
    MIMIC_SANITIZE_MEMCHECK | MIMIC_SANITIZE_INITCHECK | MIMIC_SANITIZE_LEAKCHECK;

mimicSanitizerFindings findings() {
  mimicSanitizerFindings f{};
  EXPECT_EQ(mimicDebugGetSanitizerFindings(&f), MIMIC_SUCCESS);
  return f;
}

struct Args {
  void* dst;
  void* src;
};

class SanitizerTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    ASSERT_OK(mimicDebugSetSanitizer(kMemoryTools));
    pool_ = static_cast<char*>(deviceAlloc(kPool));
  }
  static constexpr size_t kPool = 8192;
  char* pool_ = nullptr;
};

}  // namespace

TEST_F(DriverTest, SanitizerCallsCheckTheirArguments) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugSetSanitizer(0x10));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugGetSanitizer(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugGetSanitizerFindings(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugCheckLeaks(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugRegionRegister(nullptr, 16));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicDebugRegionUnregister(nullptr));
  unsigned tools = 99;
  ASSERT_OK(mimicDebugGetSanitizer(&tools));
  EXPECT_EQ(tools, 0u);
  ASSERT_OK(mimicDebugSetSanitizer(MIMIC_SANITIZE_RACECHECK | MIMIC_SANITIZE_INITCHECK));
  ASSERT_OK(mimicDebugGetSanitizer(&tools));
  EXPECT_EQ(tools, MIMIC_SANITIZE_RACECHECK | MIMIC_SANITIZE_INITCHECK);
}

TEST_F(SanitizerTest, RegionsMustLieInOneLiveAllocation) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicDebugRegionRegister(pool_, 0));
  int host = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicDebugRegionRegister(&host, 4));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicDebugRegionRegister(pool_ + 4096, 4097));
  ASSERT_OK(mimicDebugRegionRegister(pool_, 1000));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_VALUE, mimicDebugRegionRegister(pool_ + 512, 16));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicDebugRegionUnregister(pool_ + 4));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicDebugRegionUnregister(&host));
  ASSERT_OK(mimicDebugRegionUnregister(pool_));
  EXPECT_RESULT(MIMIC_ERROR_DOUBLE_FREE, mimicDebugRegionUnregister(pool_));
  EXPECT_EQ(findings().doubleFree, 1u);
  EXPECT_EQ(findings().total, 1u);
}

TEST_F(SanitizerTest, AccessesOutsideLiveRegionsAreReportedOnceAndTheDeviceGoesOn) {
  ASSERT_OK(mimicDebugRegionRegister(pool_, 1000));
  ASSERT_OK(mimicDebugRegionRegister(pool_ + 4096, 1024));
  std::vector<uint8_t> host(1024, 1);
  for (int i = 0; i < 3; ++i) {  // the same bug three times: one finding
    ASSERT_OK(mimicMemcpy(pool_, host.data(), 1004));
  }
  EXPECT_EQ(findings().outOfBounds, 1u);
  ASSERT_OK(mimicDebugRegionUnregister(pool_ + 4096));
  ASSERT_OK(mimicMemcpy(host.data(), pool_ + 4096, 16));  // a freed region of a live pool
  EXPECT_EQ(findings().useAfterFree, 1u);
  ASSERT_OK(mimicMemsetAsync(pool_ + 2048, 0, 16, nullptr));  // no region there at all
  EXPECT_EQ(findings().outOfBounds, 2u);
  ASSERT_OK(mimicDeviceSynchronize(0));  // findings in a pool never fail the device
  EXPECT_EQ(findings().total, 3u);
}

TEST_F(SanitizerTest, KernelsAreCheckedPerDmaRange) {
  mimicFunction scale = assembleFunction(kScaleKernels, "scale2");
  ASSERT_OK(mimicDebugRegionRegister(pool_, 1024));         // src: 256 floats
  ASSERT_OK(mimicDebugRegionRegister(pool_ + 4096, 1020));  // dst: one float short
  ASSERT_OK(mimicMemsetAsync(pool_, 0, 1024, nullptr));
  Args args{pool_ + 4096, pool_};
  ASSERT_OK(mimicLaunchKernel(scale, {1, 1, 1}, &args, sizeof args, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));
  EXPECT_EQ(findings().outOfBounds, 1u);
  EXPECT_EQ(findings().uninitializedRead, 0u);
}

TEST_F(SanitizerTest, InitcheckForgetsWhatAFreedRegionHeld) {
  std::vector<uint8_t> host(512);
  ASSERT_OK(mimicDebugRegionRegister(pool_, 512));
  ASSERT_OK(mimicMemsetAsync(pool_, 1, 256, nullptr));
  ASSERT_OK(mimicMemcpy(host.data(), pool_, 256));  // written: fine
  EXPECT_EQ(findings().uninitializedRead, 0u);
  ASSERT_OK(mimicMemcpy(host.data(), pool_, 512));  // the second half never was
  EXPECT_EQ(findings().uninitializedRead, 1u);
  ASSERT_OK(mimicDebugRegionUnregister(pool_));
  ASSERT_OK(mimicDebugRegionRegister(pool_, 512));  // reused: uninitialised again
  // (another call: the same call on the same allocation would be the same finding)
  ASSERT_OK(mimicMemcpyAsync(host.data(), pool_ + 8, 8, nullptr));
  EXPECT_EQ(findings().uninitializedRead, 2u);
  void* view = nullptr;  // a host view counts as written
  ASSERT_OK(mimicMemGetHostView(pool_ + 256, 256, &view));
  ASSERT_OK(mimicMemcpy(host.data(), pool_ + 256, 256));
  EXPECT_EQ(findings().uninitializedRead, 2u);
}

TEST_F(SanitizerTest, LeaksAreLiveRegionsAndAllocationsButNotPools) {
  uint64_t leaks = 99;
  ASSERT_OK(mimicDebugCheckLeaks(&leaks));
  EXPECT_EQ(leaks, 1u);  // the pool, while no region makes it one
  ASSERT_OK(mimicDebugRegionRegister(pool_, 64));
  ASSERT_OK(mimicDebugRegionRegister(pool_ + 64, 64));
  ASSERT_OK(mimicDebugRegionUnregister(pool_));
  ASSERT_OK(mimicDebugCheckLeaks(&leaks));
  EXPECT_EQ(leaks, 1u);  // the live region
  ASSERT_OK(mimicDebugRegionUnregister(pool_ + 64));
  ASSERT_OK(mimicDebugCheckLeaks(&leaks));
  EXPECT_EQ(leaks, 0u);
  ASSERT_OK(mimicMemFree(pool_));
  ASSERT_OK(mimicDebugCheckLeaks(&leaks));
  EXPECT_EQ(leaks, 0u);
}

TEST_F(SanitizerTest, MemoryMadeWhileTheToolsWereOffIsNotChecked) {
  ASSERT_OK(mimicDebugSetSanitizer(0));
  void* unseen = deviceAlloc(256);
  ASSERT_OK(mimicDebugSetSanitizer(kMemoryTools));
  std::vector<uint8_t> host(256);
  ASSERT_OK(mimicMemcpy(host.data(), unseen, 256));
  EXPECT_EQ(findings().total, 0u);
}
