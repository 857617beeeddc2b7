// Bug: a missing wait (wait_stream). Queue `producer` fills the buffer and queue `consumer`
// copies it out, with no event between them: nothing orders the copy after the fill.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  mimicQueue producer = nullptr, consumer = nullptr;
  MIMIC_CHECK(mimicQueueCreate(0, 0, 0, &producer));
  MIMIC_CHECK(mimicQueueCreate(0, 0, 0, &consumer));
  std::vector<uint8_t> host(1 << 16);
  void* buffer = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, host.size(), &buffer));
  MIMIC_CHECK(mimicMemsetAsync(buffer, 1, host.size(), producer));
  mimicEvent filled = nullptr;
  MIMIC_CHECK(mimicEventCreate(0, 0, &filled));
  MIMIC_CHECK(mimicEventRecord(filled, producer));
  if (kClean) MIMIC_CHECK(mimicQueueWaitEvent(consumer, filled));
  MIMIC_CHECK(mimicMemcpyAsync(host.data(), buffer, host.size(), consumer));
  MIMIC_CHECK(mimicDeviceSynchronize(0));
  MIMIC_CHECK(mimicEventDestroy(filled));
  MIMIC_CHECK(mimicMemFree(buffer));
  MIMIC_CHECK(mimicQueueDestroy(producer));
  MIMIC_CHECK(mimicQueueDestroy(consumer));
  return 0;
}
