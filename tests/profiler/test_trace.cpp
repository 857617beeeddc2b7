// The driver's activity trace (mimic_trace.h): result codes, and the exact trace of a known
// program: two queues on two devices, a copy, three kernels, an event and a collective.
#include <cstring>
#include <string>
#include <vector>

#include "../engine/engine_test.h"
#include "kernels/reference_kernels.h"
#include "mimic/mimic_collectives.h"
#include "mimic/mimic_trace.h"

namespace {

constexpr size_t kFloats = 1024;
constexpr uint32_t kTile = 256;

std::vector<mimicActivity> readAll() {
  std::vector<mimicActivity> records(4096);
  size_t count = 0;
  EXPECT_EQ(mimicTraceRead(records.data(), records.size(), &count), MIMIC_SUCCESS);
  records.resize(count);
  return records;
}

uint64_t queueId(mimicQueue queue) {
  uint64_t id = 0;
  EXPECT_EQ(mimicQueueGetId(queue, 0, &id), MIMIC_SUCCESS);
  return id;
}

// c = a + b over kFloats on `queue`; args as addStrided documents them.
void launchAdd(mimicFunction add, void* c, void* a, void* b, mimicQueue queue) {
  const uint64_t args[] = {reinterpret_cast<uint64_t>(c),
                           reinterpret_cast<uint64_t>(a),
                           reinterpret_cast<uint64_t>(b),
                           kFloats,
                           0,
                           1,
                           0,
                           1};
  ASSERT_OK(mimicLaunchKernel(add, {kFloats / kTile, 1, 1}, args, sizeof args, queue));
}

}  // namespace

TEST_F(DriverTest, TraceCallsCheckTheirArguments) {
  size_t count = 0;
  uint64_t value = 0;
  mimicActivity record;
  EXPECT_RESULT(MIMIC_ERROR_TRACE_NOT_ACTIVE, mimicTraceStop());
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicTraceStart(0));
  ASSERT_OK(mimicTraceStart(16));
  EXPECT_RESULT(MIMIC_ERROR_TRACE_ACTIVE, mimicTraceStart(16));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicTraceRead(&record, 1, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicTraceRead(nullptr, 1, &count));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicTraceRead(nullptr, 0, &count));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicTraceGetDropped(nullptr));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicQueueGetId(nullptr, 0, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicQueueGetId(nullptr, 7, &value));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicQueueBeginRange(nullptr, 0, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicQueueBeginRange(nullptr, -1, "x"));
  EXPECT_RESULT(MIMIC_ERROR_NO_OPEN_RANGE, mimicQueueEndRange(nullptr, 0));
  mimicQueue queue = newQueue();
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueGetId(queue, 0, &value));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueBeginRange(queue, 0, "x"));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueEndRange(queue, 0));
  ASSERT_OK(mimicTraceStop());
  EXPECT_STREQ(mimicGetErrorName(MIMIC_ERROR_TRACE_ACTIVE), "MIMIC_ERROR_TRACE_ACTIVE");
}

TEST_F(DriverTest, QueueIdsNumberDefaultQueuesFirst) {
  uint64_t id = 0;
  ASSERT_OK(mimicQueueGetId(nullptr, 0, &id));
  EXPECT_EQ(id, 1u);
  ASSERT_OK(mimicQueueGetId(nullptr, 1, &id));
  EXPECT_EQ(id, 2u);
  mimicQueue first = newQueue(), second = newQueue(1);
  EXPECT_LT(queueId(first), queueId(second));
  EXPECT_GT(queueId(first), 2u);
}

TEST_F(DriverTest, NothingIsRecordedWhileTracingIsOff) {
  void* buffer = deviceAlloc(256);
  ASSERT_OK(mimicMemsetAsync(buffer, 0, 256, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));
  EXPECT_TRUE(readAll().empty());
}

TEST_F(DriverTest, AFullBufferCountsWhatItDrops) {
  void* buffer = deviceAlloc(256);
  ASSERT_OK(mimicTraceStart(3));
  for (int i = 0; i < 5; ++i) ASSERT_OK(mimicMemsetAsync(buffer, i, 256, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));  // a synchronisation record: dropped too
  uint64_t dropped = 0;
  ASSERT_OK(mimicTraceGetDropped(&dropped));
  EXPECT_EQ(dropped, 3u);
  EXPECT_EQ(readAll().size(), 3u);
  ASSERT_OK(mimicTraceStop());
  // Reading made room, but nothing is recorded after the stop.
  ASSERT_OK(mimicMemsetAsync(buffer, 0, 256, nullptr));
  ASSERT_OK(mimicDeviceSynchronize(0));
  EXPECT_TRUE(readAll().empty());
}

TEST_F(DriverTest, ReadingStopsAtTheFirstUnfinishedCommand) {
  void* buffer = deviceAlloc(kMiB);
  void* pinned = pinnedAlloc(kMiB);
  ASSERT_OK(mimicTraceStart(64));
  ASSERT_OK(mimicMemcpyAsync(buffer, pinned, kMiB, nullptr));
  EXPECT_TRUE(readAll().empty());  // the simulation has not run the copy yet
  ASSERT_OK(mimicDeviceSynchronize(0));
  std::vector<mimicActivity> records = readAll();
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].kind, MIMIC_ACTIVITY_MEMCPY);
  EXPECT_EQ(records[1].kind, MIMIC_ACTIVITY_SYNCHRONIZE);
  ASSERT_OK(mimicTraceStop());
}

TEST_F(DriverTest, TraceOfAKnownProgram) {
  mimicComm comms[2];
  ASSERT_EQ(mimicCommInitAll(comms, 2, nullptr), MIMIC_SUCCESS);
  mimicQueue qa = newQueue(0), qb = newQueue(1);
  const size_t bytes = kFloats * sizeof(float);
  void* pinned = pinnedAlloc(bytes);
  std::memset(pinned, 0, bytes);
  void* a0 = deviceAlloc(bytes);
  void* b0 = deviceAlloc(bytes);
  void* a1 = deviceAlloc(bytes, 1);
  mimicFunction add0 =
      loadFunction(mimic::isa::Module{{mimic::kernels::addStrided(kTile)}}, "add_strided", 0);
  mimicFunction add1 =
      loadFunction(mimic::isa::Module{{mimic::kernels::addStrided(kTile)}}, "add_strided", 1);
  ASSERT_OK(mimicMemsetAsync(a1, 0, bytes, qb));
  mimicEvent afterKernels = newEvent(0);
  ASSERT_OK(mimicDeviceSynchronize(0));
  ASSERT_OK(mimicDeviceSynchronize(1));

  ASSERT_OK(mimicTraceStart(1024));
  ASSERT_OK(mimicTraceSetCorrelationId(1, nullptr));
  ASSERT_OK(mimicMemcpyAsync(a0, pinned, bytes, qa));
  ASSERT_OK(mimicTraceSetCorrelationId(2, nullptr));
  launchAdd(add0, b0, a0, a0, qa);
  ASSERT_OK(mimicTraceSetCorrelationId(3, nullptr));
  launchAdd(add0, a0, b0, b0, qa);
  ASSERT_OK(mimicTraceSetCorrelationId(4, nullptr));
  launchAdd(add1, a1, a1, a1, qb);
  ASSERT_OK(mimicTraceSetCorrelationId(5, nullptr));
  ASSERT_OK(mimicEventRecord(afterKernels, qa));
  ASSERT_OK(mimicTraceSetCorrelationId(6, nullptr));
  ASSERT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
  ASSERT_EQ(mimicAllReduce(a0, a0, kFloats, mimicFloat32, mimicSum, comms[0], qa), MIMIC_SUCCESS);
  ASSERT_EQ(mimicAllReduce(a1, a1, kFloats, mimicFloat32, mimicSum, comms[1], qb), MIMIC_SUCCESS);
  ASSERT_EQ(mimicGroupEnd(), MIMIC_SUCCESS);
  uint64_t previous = 0;
  ASSERT_OK(mimicTraceSetCorrelationId(0, &previous));
  EXPECT_EQ(previous, 6u);
  ASSERT_OK(mimicQueueSynchronize(qa));
  ASSERT_OK(mimicQueueSynchronize(qb));
  ASSERT_OK(mimicTraceStop());
  const std::vector<mimicActivity> records = readAll();
  uint64_t dropped = 1;
  ASSERT_OK(mimicTraceGetDropped(&dropped));
  EXPECT_EQ(dropped, 0u);

  // The first five records, exactly.
  ASSERT_GE(records.size(), 9u);
  const uint64_t ida = queueId(qa), idb = queueId(qb);
  const mimicActivity& copy = records[0];
  EXPECT_EQ(copy.kind, MIMIC_ACTIVITY_MEMCPY);
  EXPECT_EQ(copy.copyKind, MIMIC_COPY_HOST_TO_DEVICE);
  EXPECT_EQ(copy.hostPinned, 1);
  EXPECT_EQ(copy.bytes, bytes);
  EXPECT_EQ(copy.queueId, ida);
  EXPECT_EQ(copy.correlationId, 1u);
  const int kernelQueue[3] = {0, 0, 1};
  for (int k = 0; k < 3; ++k) {
    const mimicActivity& kernel = records[1 + k];
    EXPECT_EQ(kernel.kind, MIMIC_ACTIVITY_KERNEL) << k;
    EXPECT_STREQ(kernel.name, "add_strided");
    EXPECT_EQ(kernel.grid.x, kFloats / kTile);
    EXPECT_EQ(kernel.device, kernelQueue[k]);
    EXPECT_EQ(kernel.queueId, kernelQueue[k] ? idb : ida);
    EXPECT_EQ(kernel.correlationId, uint64_t(2 + k));
    EXPECT_EQ(kernel.counters.flops, kFloats);
    EXPECT_EQ(kernel.counters.hbmBytesRead, 2 * bytes);
    EXPECT_EQ(kernel.counters.hbmBytesWritten, bytes);
    EXPECT_LE(kernel.startNs, kernel.counters.startNs);
    EXPECT_EQ(kernel.endNs, kernel.counters.endNs);
  }
  // A queue runs its commands one after another.
  EXPECT_LE(copy.endNs, records[1].startNs);
  EXPECT_LE(records[1].endNs, records[2].startNs);
  const mimicActivity& record = records[4];
  EXPECT_EQ(record.kind, MIMIC_ACTIVITY_EVENT_RECORD);
  EXPECT_EQ(record.correlationId, 5u);
  uint64_t eventNs = 0;
  ASSERT_OK(mimicEventGetTimestamp(afterKernels, &eventNs));
  EXPECT_EQ(record.endNs, eventNs);
  EXPECT_EQ(record.endNs, records[2].endNs);

  // The collective: one record per rank, named by its plan, carrying its correlation; the
  // host's two waits close the trace.
  size_t collectives = 0;
  uint64_t collectiveEnd = 0;
  for (size_t i = 5; i + 2 < records.size(); ++i) {
    const mimicActivity& r = records[i];
    EXPECT_EQ(r.correlationId, 6u) << i;
    ASSERT_EQ(r.kind, MIMIC_ACTIVITY_COLLECTIVE) << i;
    ++collectives;
    EXPECT_EQ(std::string(r.name).rfind("AllReduce ", 0), 0u) << r.name;
    EXPECT_EQ(r.bytes, bytes);
    EXPECT_LE(r.startNs, r.endNs);
    EXPECT_GE(r.startNs, records[2].endNs * (r.queueId == ida));
    // Both ranks end together: the collective ends for all of its ranks at once.
    if (collectiveEnd) {
      EXPECT_EQ(r.endNs, collectiveEnd);
    }
    collectiveEnd = r.endNs;
  }
  EXPECT_EQ(collectives, 2u);
  EXPECT_EQ(records[records.size() - 2].kind, MIMIC_ACTIVITY_SYNCHRONIZE);
  EXPECT_EQ(records.back().kind, MIMIC_ACTIVITY_SYNCHRONIZE);
  EXPECT_EQ(records.back().correlationId, 0u);
  for (mimicComm c : comms) EXPECT_EQ(mimicCommDestroy(c), MIMIC_SUCCESS);
}
