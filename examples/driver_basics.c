/*
 * driver_basics: the mimic driver API from plain C (C11).
 *
 * Initialises the simulated system (the `tiny` preset unless MIMIC_PRESET names another),
 * prints the device's properties, allocates device and pinned host memory, copies and fills,
 * orders two queues with an event, times the work with events in simulated time, and shows
 * how errors are reported (mimicGetErrorName / mimicGetErrorString / mimicGetErrorDetail).
 * Every result is checked; the program exits non-zero on the first surprise.
 *
 *   build/examples/mimic-example-driver-basics
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mimic/mimic.h"

/* Prints the failed call with the driver's explanation and leaves with status 1. */
static void fail(mimicResult result, const char* call, int line) {
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  fprintf(stderr, "driver_basics.c:%d: %s failed with %s (%s)%s%s\n", line, call,
          mimicGetErrorName(result), mimicGetErrorString(result), detail && *detail ? ": " : "",
          detail ? detail : "");
  exit(1);
}

#define CHECK(call)                         \
  do {                                      \
    mimicResult check_result_ = (call);     \
    if (check_result_ != MIMIC_SUCCESS) {   \
      fail(check_result_, #call, __LINE__); \
    }                                       \
  } while (0)

#define EXPECT(condition)                                                         \
  do {                                                                            \
    if (!(condition)) {                                                           \
      fprintf(stderr, "driver_basics.c:%d: expected %s\n", __LINE__, #condition); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

/* Calls that are meant to fail: the code must be `expected`; prints what the driver says. */
static void expectError(mimicResult result, mimicResult expected, const char* call) {
  const char* detail = "";
  if (result != expected) {
    fprintf(stderr, "%s returned %s, expected %s\n", call, mimicGetErrorName(result),
            mimicGetErrorName(expected));
    exit(1);
  }
  mimicGetErrorDetail(&detail);
  printf("  %-58s -> %s\n      %s\n", call, mimicGetErrorName(result), detail);
}

static const char* topologyName(mimicTopology topology) {
  switch (topology) {
    case MIMIC_TOPOLOGY_RING:
      return "ring";
    case MIMIC_TOPOLOGY_FULL_MESH:
      return "full mesh";
    case MIMIC_TOPOLOGY_SWITCH:
      return "switch";
  }
  return "?";
}

int main(void) {
  enum { kBytes = 1 << 20 };

  /* --- Initialisation and properties ----------------------------------------------------- */
  const char* preset = getenv("MIMIC_PRESET");
  CHECK(mimicInitWithPreset(0, preset && *preset ? preset : "tiny", NULL));

  int count = 0;
  CHECK(mimicDeviceGetCount(&count));
  EXPECT(count >= 1);
  printf("%d simulated device(s)\n", count);

  mimicDeviceProperties props;
  CHECK(mimicDeviceGetProperties(0, &props));
  printf("device 0: %s (preset %s)\n", props.name, props.preset);
  printf("  %d CUs x %d lanes at %.0f MHz, %zu KiB scratchpad per CU\n", props.computeUnits,
         props.vectorLanes, props.clockMHz, props.scratchpadBytes >> 10);
  printf("  f32 MMA peak %.1f TFLOP/s\n",
         2.0 * props.mmaF32MacsPerCycle * props.computeUnits * props.clockMHz * 1e6 / 1e12);
  printf("  HBM %zu MiB, %.0f GB/s, %llu ns latency\n", props.totalMemory >> 20,
         props.hbmBandwidthGBps, (unsigned long long)props.hbmLatencyNs);
  printf("  host link %.0f GB/s each way; device links: %s, %.0f GB/s, %llu ns per hop\n",
         props.hostLinkBandwidthGBps, topologyName(props.deviceLinkTopology),
         props.deviceLinkBandwidthGBps, (unsigned long long)props.deviceLinkLatencyNs);
  printf("  %d hardware queues, %d copy engines, command latency %llu ns\n", props.hardwareQueues,
         props.copyEngines, (unsigned long long)props.commandLatencyNs);

  size_t freeBefore = 0, total = 0;
  CHECK(mimicMemGetInfo(0, &freeBefore, &total));
  EXPECT(total == props.totalMemory);

  /* --- Memory ----------------------------------------------------------------------------- */
  void* a = NULL;
  void* b = NULL;
  unsigned char* pinned = NULL;
  CHECK(mimicMemAlloc(0, kBytes, &a));
  CHECK(mimicMemAlloc(0, kBytes, &b));
  CHECK(mimicHostAlloc(kBytes, (void**)&pinned));
  unsigned char* pageable = malloc(kBytes);
  EXPECT(pageable != NULL);

  size_t freeAfter = 0;
  CHECK(mimicMemGetInfo(0, &freeAfter, &total));
  EXPECT(freeAfter + 2 * (size_t)kBytes <= freeBefore);

  mimicPointerAttributes attrs;
  CHECK(mimicPointerGetAttributes((const char*)a + 100, &attrs));
  EXPECT(attrs.type == MIMIC_MEMORY_TYPE_DEVICE && attrs.device == 0 && attrs.base == a &&
         attrs.size == kBytes);
  CHECK(mimicPointerGetAttributes(pinned, &attrs));
  EXPECT(attrs.type == MIMIC_MEMORY_TYPE_PINNED);

  for (int i = 0; i < kBytes; ++i) pinned[i] = (unsigned char)(i * 7 + 3);

  /* --- Copies, a fill and their simulated time -------------------------------------------- */
  mimicQueue queue, other;
  mimicEvent start, afterUpload, end, filled;
  CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
  CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &other));
  CHECK(mimicEventCreate(0, MIMIC_EVENT_DEFAULT, &start));
  CHECK(mimicEventCreate(0, MIMIC_EVENT_DEFAULT, &afterUpload));
  CHECK(mimicEventCreate(0, MIMIC_EVENT_DEFAULT, &end));
  CHECK(mimicEventCreate(0, MIMIC_EVENT_DISABLE_TIMING, &filled));

  CHECK(mimicEventRecord(start, queue));
  CHECK(mimicMemcpyAsync(a, pinned, kBytes, queue)); /* pinned: returns at once */
  CHECK(mimicEventRecord(afterUpload, queue));
  CHECK(mimicMemcpyAsync(b, a, kBytes, queue));        /* device to device */
  CHECK(mimicMemsetAsync(b, 0x5A, kBytes / 4, queue)); /* first quarter of b */
  CHECK(mimicEventRecord(end, queue));

  /* The work is queued, not done: a query says so (or, rarely, that it already finished). */
  mimicResult status = mimicQueueQuery(queue);
  EXPECT(status == MIMIC_NOT_READY || status == MIMIC_SUCCESS);
  printf("queue query right after submission: %s\n", mimicGetErrorName(status));

  CHECK(mimicEventSynchronize(end));
  float uploadMs = 0, totalMs = 0;
  CHECK(mimicEventElapsedTime(&uploadMs, start, afterUpload));
  CHECK(mimicEventElapsedTime(&totalMs, start, end));
  uint64_t startNs = 0, endNs = 0;
  CHECK(mimicEventGetTimestamp(start, &startNs));
  CHECK(mimicEventGetTimestamp(end, &endNs));

  /* An upload cannot beat the host link: bytes / bandwidth (GB/s = bytes per ns) + latency. */
  const double linkFloorMs =
      (kBytes / props.hostLinkBandwidthGBps + (double)props.hostLinkLatencyNs) * 1e-6;
  printf("upload of 1 MiB (pinned): %.3f ms simulated (%.2f GB/s; link floor %.3f ms)\n", uploadMs,
         kBytes / (uploadMs * 1e6), linkFloorMs);
  printf("upload + device copy + fill: %.3f ms simulated, [%llu ns, %llu ns]\n", totalMs,
         (unsigned long long)startNs, (unsigned long long)endNs);
  EXPECT(uploadMs >= linkFloorMs * 0.999 && uploadMs < linkFloorMs * 2);
  EXPECT(totalMs > uploadMs);
  EXPECT(endNs > startNs);

  /* To pageable memory a copy returns only when the data is there. */
  CHECK(mimicMemcpy(pageable, b, kBytes));
  for (int i = 0; i < kBytes; ++i) {
    const unsigned char want = i < kBytes / 4 ? 0x5A : (unsigned char)(i * 7 + 3);
    if (pageable[i] != want) {
      fprintf(stderr, "byte %d of b is %d, expected %d\n", i, pageable[i], want);
      return 1;
    }
  }
  printf("device copy and fill verified on the host\n");

  /* --- Two queues, ordered by an event ---------------------------------------------------- */
  /* `queue` fills a; `other` must not read a before that, so it waits on an event. */
  CHECK(mimicMemsetAsync(a, 0x11, kBytes, queue));
  CHECK(mimicEventRecord(filled, queue));
  CHECK(mimicQueueWaitEvent(other, filled));
  CHECK(mimicMemcpyAsync(b, a, kBytes, other));
  CHECK(mimicQueueSynchronize(other));
  CHECK(mimicMemcpy(pageable, b, kBytes));
  for (int i = 0; i < kBytes; ++i) EXPECT(pageable[i] == 0x11);
  printf("event-ordered copy on a second queue verified\n");

  uint64_t simNs = 0;
  CHECK(mimicGetSimTime(&simNs));
  printf("host's simulated clock: %llu ns\n", (unsigned long long)simNs);

  /* --- Errors: each has its own code, and the detail names the argument ------------------- */
  printf("errors the driver reports:\n");
  void* nowhere = NULL;
  expectError(mimicMemAlloc(count + 5, 4096, &nowhere), MIMIC_ERROR_INVALID_DEVICE,
              "mimicMemAlloc(bad device, 4096, &p)");
  expectError(mimicMemAlloc(0, props.totalMemory + 1, &nowhere), MIMIC_ERROR_OUT_OF_MEMORY,
              "mimicMemAlloc(0, more than the HBM, &p)");
  expectError(mimicMemsetAsync(a, 300, 16, queue), MIMIC_ERROR_INVALID_VALUE,
              "mimicMemsetAsync(a, 300, 16, queue)");
  expectError(mimicMemcpy(pageable, (char*)a + kBytes - 8, 16), MIMIC_ERROR_OUT_OF_BOUNDS,
              "mimicMemcpy(host, 8 bytes before the end of a, 16)");
  float ms = 0;
  expectError(mimicEventElapsedTime(&ms, start, filled), MIMIC_ERROR_EVENT_TIMING_DISABLED,
              "mimicEventElapsedTime(&ms, start, untimed event)");
  void* scratch = NULL;
  CHECK(mimicMemAlloc(0, 4096, &scratch));
  CHECK(mimicMemFree(scratch));
  expectError(mimicMemFree(scratch), MIMIC_ERROR_DOUBLE_FREE, "mimicMemFree(freed pointer)");
  /* mimicGetLastError returns (and clears) this thread's most recent error, as cudaGetLastError
   * does, unless a device has failed with a sticky error. None of these is a device failure. */
  EXPECT(mimicGetLastError() == MIMIC_ERROR_DOUBLE_FREE);
  EXPECT(mimicGetLastError() == MIMIC_SUCCESS);
  CHECK(mimicDeviceSynchronize(0));

  /* --- Clean up --------------------------------------------------------------------------- */
  CHECK(mimicEventDestroy(start));
  CHECK(mimicEventDestroy(afterUpload));
  CHECK(mimicEventDestroy(end));
  CHECK(mimicEventDestroy(filled));
  CHECK(mimicQueueDestroy(queue));
  CHECK(mimicQueueDestroy(other));
  CHECK(mimicMemFree(a));
  CHECK(mimicMemFree(b));
  CHECK(mimicHostFree(pinned));
  free(pageable);
  printf("driver_basics: OK\n");
  return 0;
}
