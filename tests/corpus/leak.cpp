// Bug: a leak. Of two scratch buffers only one is freed.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  void *first = nullptr, *second = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, 4096, &first));
  MIMIC_CHECK(mimicMemAlloc(0, 8192, &second));
  MIMIC_CHECK(mimicMemsetAsync(first, 0, 4096, nullptr));
  MIMIC_CHECK(mimicMemsetAsync(second, 0, 8192, nullptr));
  MIMIC_CHECK(mimicDeviceSynchronize(0));
  MIMIC_CHECK(mimicMemFree(first));
  if (kClean) MIMIC_CHECK(mimicMemFree(second));
  return 0;
}
