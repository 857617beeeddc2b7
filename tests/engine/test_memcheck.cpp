// A kernel's out-of-bounds or freed-memory access fails the device with
// MIMIC_ERROR_ILLEGAL_ADDRESS, and the detail names the allocation it missed.
#include <cstdio>
#include <string>

#include "engine_test.h"
#include "scale_kernels.h"

namespace {

struct Args {
  void* dst;
  void* src;
};

std::string hexAddress(const void* pointer) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", pointer);
  return text;
}

}  // namespace

TEST_F(DriverTest, OutOfBoundsReadNamesTheAllocation) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  void* src = deviceAlloc(1000);  // one workgroup reads 1024 bytes
  void* dst = deviceAlloc(1024);
  Args args{dst, src};
  ASSERT_OK(mimicLaunchKernel(fn, {1, 1, 1}, &args, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS, mimicDeviceSynchronize(0));
  const std::string detail = errorDetail();
  EXPECT_NE(detail.find("0 bytes past the end of the 1000-byte allocation at " + hexAddress(src)),
            std::string::npos)
      << detail;
  ASSERT_OK(mimicDeviceReset(0));
}

TEST_F(DriverTest, UseAfterFreeNamesTheFreedAllocation) {
  mimicFunction fn = assembleFunction(kScaleKernels, "scale2");
  void* src = deviceAlloc(2048);
  void* keep = deviceAlloc(4096);  // so the freed block is not handed out again at once
  void* dst = deviceAlloc(1024);
  ASSERT_OK(mimicMemFree(src));
  Args args{dst, static_cast<char*>(src) + 1024};
  ASSERT_OK(mimicLaunchKernel(fn, {1, 1, 1}, &args, sizeof args, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_ILLEGAL_ADDRESS, mimicDeviceSynchronize(0));
  const std::string detail = errorDetail();
  EXPECT_NE(detail.find("1024 bytes into the 2048-byte allocation at " + hexAddress(src) +
                        ", which was freed (use after free)"),
            std::string::npos)
      << detail;
  ASSERT_OK(mimicDeviceReset(0));
  EXPECT_NE(keep, nullptr);
}
