// Bug: a missing record_stream with an allocator reuse. A pool allocator hands out parts of one
// block (registered as regions). Part `a`, owned by queue `owner`, is read by queue `reader`;
// when it is freed the pool does not wait for `reader` (no event recorded on it), and reuses
// the bytes at once for part `b`, which `owner` overwrites while `reader` may still read.
#include "corpus.h"

int main() {
  MIMIC_CHECK(mimicInit(0));
  mimicQueue owner = nullptr, reader = nullptr;
  MIMIC_CHECK(mimicQueueCreate(0, 0, 0, &owner));
  MIMIC_CHECK(mimicQueueCreate(0, 0, 0, &reader));
  const size_t bytes = 1 << 16;
  void* pool = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &pool));
  std::vector<uint8_t> host(bytes);
  void* pinned = nullptr;
  MIMIC_CHECK(mimicHostAlloc(bytes, &pinned));

  MIMIC_CHECK(mimicDebugRegionRegister(pool, bytes));  // part a
  MIMIC_CHECK(mimicMemsetAsync(pool, 1, bytes, owner));
  mimicEvent written = nullptr, readDone = nullptr;
  MIMIC_CHECK(mimicEventCreate(0, 0, &written));
  MIMIC_CHECK(mimicEventCreate(0, 0, &readDone));
  MIMIC_CHECK(mimicEventRecord(written, owner));
  MIMIC_CHECK(mimicQueueWaitEvent(reader, written));
  MIMIC_CHECK(mimicMemcpyAsync(pinned, pool, bytes, reader));
  MIMIC_CHECK(mimicDebugRegionUnregister(pool));  // free part a
  if (kClean) {                                   // what record_stream makes the pool do
    MIMIC_CHECK(mimicEventRecord(readDone, reader));
    MIMIC_CHECK(mimicQueueWaitEvent(owner, readDone));
  }
  MIMIC_CHECK(mimicDebugRegionRegister(pool, bytes));  // part b, the same bytes
  MIMIC_CHECK(mimicMemsetAsync(pool, 2, bytes, owner));
  MIMIC_CHECK(mimicDeviceSynchronize(0));
  MIMIC_CHECK(mimicDebugRegionUnregister(pool));

  MIMIC_CHECK(mimicEventDestroy(written));
  MIMIC_CHECK(mimicEventDestroy(readDone));
  MIMIC_CHECK(mimicHostFree(pinned));
  MIMIC_CHECK(mimicMemFree(pool));
  MIMIC_CHECK(mimicQueueDestroy(owner));
  MIMIC_CHECK(mimicQueueDestroy(reader));
  return 0;
}
