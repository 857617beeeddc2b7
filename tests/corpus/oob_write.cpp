// Bug: out-of-bounds write. The output buffer holds 1000 floats, but the kernel's grid of four
// 256-float workgroups writes 1024.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  const size_t floats = kClean ? 1024 : 1000;
  void *in = nullptr, *out = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, 1024 * sizeof(float), &in));
  MIMIC_CHECK(mimicMemAlloc(0, floats * sizeof(float), &out));
  MIMIC_CHECK(mimicMemsetAsync(in, 0, 1024 * sizeof(float), nullptr));
  const void* args[] = {out, in};
  MIMIC_CHECK(mimicLaunchKernel(scaleKernel(0), {4, 1, 1}, args, sizeof args, nullptr));
  expect(mimicDeviceSynchronize(0), "mimicDeviceSynchronize");
  if (!kClean) MIMIC_CHECK(mimicDeviceReset(0));  // the device fails, as hardware would
  if (kClean) {
    MIMIC_CHECK(mimicMemFree(in));
    MIMIC_CHECK(mimicMemFree(out));
  }
  return 0;
}
