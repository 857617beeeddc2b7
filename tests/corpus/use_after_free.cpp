// Bug: use after free. The buffer is freed before the copy that reads it back.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  std::vector<uint8_t> host(4096);
  void* buffer = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, host.size(), &buffer));
  MIMIC_CHECK(mimicMemsetAsync(buffer, 7, host.size(), nullptr));
  if (!kClean) MIMIC_CHECK(mimicMemFree(buffer));
  expect(mimicMemcpy(host.data(), buffer, host.size()), "mimicMemcpy");
  if (kClean) MIMIC_CHECK(mimicMemFree(buffer));
  return 0;
}
