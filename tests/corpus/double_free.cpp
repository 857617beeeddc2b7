// Bug: a double free. An error path frees the buffer, and the cleanup frees it again.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  void* buffer = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, 4096, &buffer));
  MIMIC_CHECK(mimicMemsetAsync(buffer, 0, 4096, nullptr));
  MIMIC_CHECK(mimicMemFree(buffer));
  if (!kClean) expect(mimicMemFree(buffer), "mimicMemFree");
  return 0;
}
