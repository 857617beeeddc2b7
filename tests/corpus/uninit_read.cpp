// Bug: read of uninitialised memory. The kernel's input was allocated but never written.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  const size_t bytes = 256 * sizeof(float);
  void *in = nullptr, *out = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &in));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &out));
  if (kClean) MIMIC_CHECK(mimicMemsetAsync(in, 0, bytes, nullptr));
  const void* args[] = {out, in};
  MIMIC_CHECK(mimicLaunchKernel(scaleKernel(0), {1, 1, 1}, args, sizeof args, nullptr));
  std::vector<float> host(256);
  MIMIC_CHECK(mimicMemcpy(host.data(), out, bytes));
  MIMIC_CHECK(mimicMemFree(in));
  MIMIC_CHECK(mimicMemFree(out));
  return 0;
}
