// mimicEventCreate, mimicEventDestroy, mimicEventRecord, mimicEventQuery,
// mimicEventSynchronize, mimicEventElapsedTime, mimicEventGetTimestamp.
#include <cstdint>
#include <set>

#include "driver_test.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

uint64_t SimTime() {
  uint64_t ns = 0;
  EXPECT_EQ(mimicGetSimTime(&ns), MIMIC_SUCCESS);
  return ns;
}

mimicQueue NewQueue(int device) {
  mimicQueue q = nullptr;
  EXPECT_EQ(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &q), MIMIC_SUCCESS);
  return q;
}

mimicEvent NewEvent(int device, unsigned flags = MIMIC_EVENT_DEFAULT) {
  mimicEvent e = nullptr;
  EXPECT_EQ(mimicEventCreate(device, flags, &e), MIMIC_SUCCESS);
  return e;
}

uint64_t Timestamp(mimicEvent event) {
  EXPECT_EQ(mimicEventSynchronize(event), MIMIC_SUCCESS);
  uint64_t ns = 0;
  EXPECT_EQ(mimicEventGetTimestamp(event, &ns), MIMIC_SUCCESS);
  return ns;
}

// A pinned host-to-device copy of `bytes`; at tiny's 10 GB/s it takes at least bytes / 10 ns.
class Copy {
 public:
  Copy(int device, size_t bytes) : bytes_(bytes) {
    EXPECT_EQ(mimicHostAlloc(bytes, &host_), MIMIC_SUCCESS);
    EXPECT_EQ(mimicMemAlloc(device, bytes, &dev_), MIMIC_SUCCESS);
  }
  mimicResult start(mimicQueue queue) { return mimicMemcpyAsync(dev_, host_, bytes_, queue); }
  uint64_t minNs() const { return bytes_ / 10; }

 private:
  size_t bytes_;
  void* host_ = nullptr;
  void* dev_ = nullptr;
};

// 32 MiB: about 3.4 ms, still running when the host next looks.
constexpr size_t kLongCopy = 32 * kMiB;

}  // namespace

// ---------------------------------------------------------------------------------------------
// mimicEventCreate

TEST_F(DriverTest, EventCreateReturnsDistinctHandles) {
  std::set<mimicEvent> events;
  for (int device = 0; device < 2; ++device) {
    for (unsigned flags : {MIMIC_EVENT_DEFAULT, MIMIC_EVENT_DISABLE_TIMING}) {
      mimicEvent e = nullptr;
      EXPECT_RESULT(MIMIC_SUCCESS, mimicEventCreate(device, flags, &e));
      EXPECT_NE(e, nullptr);
      events.insert(e);
    }
  }
  EXPECT_EQ(events.size(), 4u);
}

TEST_F(DriverTest, EventCreateNullOutputIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicEventCreate(0, 0, nullptr));
}

TEST_F(DriverTest, EventCreateBadDeviceIsInvalidDevice) {
  mimicEvent e = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicEventCreate(-1, 0, &e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicEventCreate(2, 0, &e));
  EXPECT_EQ(e, nullptr);
}

TEST_F(DriverTest, EventCreateUndefinedFlagsIsInvalidFlags) {
  mimicEvent e = nullptr;
  for (unsigned flags : {2u, 3u, 4u, 0x80000000u}) {
    SCOPED_TRACE(flags);
    EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicEventCreate(0, flags, &e));
  }
  EXPECT_EQ(e, nullptr);
}

// ---------------------------------------------------------------------------------------------
// mimicEventDestroy

TEST_F(DriverTest, EventDestroySucceedsOnce) {
  mimicEvent e = NewEvent(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(e));
}

TEST_F(DriverTest, EventDestroyNullIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(nullptr));
}

TEST_F(DriverTest, EventDestroyQueueHandleIsInvalidEvent) {
  mimicQueue q = NewQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(reinterpret_cast<mimicEvent>(q)));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(q));  // the queue survived
}

TEST_F(DriverTest, EventDestroyForgedHandleIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT,
                mimicEventDestroy(reinterpret_cast<mimicEvent>(uintptr_t{0x7654322})));
}

TEST_F(DriverTest, DestroyedEventIsRejectedEverywhere) {
  mimicEvent e = NewEvent(0);
  mimicEvent other = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicEventRecord(other, nullptr));
  ASSERT_OK(mimicEventSynchronize(e));
  ASSERT_OK(mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(e, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventQuery(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventSynchronize(e));
  float ms = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, e, other));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, other, e));
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventGetTimestamp(e, &ns));
}

TEST_F(DriverTest, DestroyingAnEventAQueuedWaitRefersToStillLetsTheQueueComplete) {
  Copy copy(0, kLongCopy);
  mimicQueue producer = NewQueue(0);
  mimicQueue consumer = NewQueue(0);
  mimicEvent doomed = NewEvent(0);
  mimicEvent copied = NewEvent(0);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(doomed, producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  ASSERT_OK(mimicQueueWaitEvent(consumer, doomed));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(doomed));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(consumer));
  // The wait still held the consumer until the copy was done.
  EXPECT_GE(Timestamp(after), Timestamp(copied));
  EXPECT_GE(Timestamp(after), copy.minNs());
}

TEST_F(DriverTest, DestroyingAnEventWithAPendingRecordLetsTheQueueComplete) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

// ---------------------------------------------------------------------------------------------
// mimicEventRecord

TEST_F(DriverTest, EventRecordOnOwnDeviceQueueSucceeds) {
  mimicEvent e = NewEvent(1);
  mimicQueue q = NewQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
}

TEST_F(DriverTest, EventRecordNullEventIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(nullptr, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(nullptr, NewQueue(0)));
}

TEST_F(DriverTest, EventRecordQueueHandleAsEventIsInvalidEvent) {
  mimicQueue q = NewQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(reinterpret_cast<mimicEvent>(q), q));
}

TEST_F(DriverTest, EventRecordDestroyedQueueIsInvalidQueue) {
  mimicEvent e = NewEvent(0);
  mimicQueue q = NewQueue(0);
  ASSERT_OK(mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(e));
}

TEST_F(DriverTest, EventRecordQueueOfOtherDeviceIsWrongDevice) {
  mimicEvent on0 = NewEvent(0);
  mimicEvent on1 = NewEvent(1);
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicEventRecord(on0, NewQueue(1)));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicEventRecord(on1, NewQueue(0)));
  // Nothing was recorded.
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(on0));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(on1));
}

TEST_F(DriverTest, EventRecordNullQueueIsTheEventDevicesDefaultQueue) {
  Copy copy(1, kLongCopy);
  ASSERT_OK(copy.start(nullptr));  // device 1's default queue: dst is on device 1
  mimicEvent on1 = NewEvent(1);
  mimicEvent on0 = NewEvent(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(on1, nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(on0, nullptr));
  // on1 sits behind the copy on device 1's default queue; on0 on device 0's idle one.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(on1));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(on0));
  EXPECT_GE(Timestamp(on1), copy.minNs());
  EXPECT_LT(Timestamp(on0), copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// Unrecorded events

TEST_F(DriverTest, UnrecordedEventIsEventNotRecorded) {
  mimicEvent e = NewEvent(0);
  mimicEvent recorded = NewEvent(0);
  ASSERT_OK(mimicEventRecord(recorded, nullptr));
  ASSERT_OK(mimicEventSynchronize(recorded));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(e));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventSynchronize(e));
  float ms = -3;
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventElapsedTime(&ms, e, recorded));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventElapsedTime(&ms, recorded, e));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventElapsedTime(&ms, e, e));
  EXPECT_FLOAT_EQ(ms, -3);
  uint64_t ns = 77;
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventGetTimestamp(e, &ns));
  EXPECT_EQ(ns, uint64_t{77});
}

// ---------------------------------------------------------------------------------------------
// MIMIC_EVENT_DISABLE_TIMING

TEST_F(DriverTest, DisableTimingEventHasNoTimes) {
  mimicEvent untimed = NewEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  mimicEvent timed = NewEvent(0);
  ASSERT_OK(mimicEventRecord(untimed, nullptr));
  ASSERT_OK(mimicEventRecord(timed, nullptr));
  ASSERT_OK(mimicEventSynchronize(timed));
  float ms = -3;
  EXPECT_RESULT(MIMIC_ERROR_EVENT_TIMING_DISABLED, mimicEventElapsedTime(&ms, untimed, timed));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_TIMING_DISABLED, mimicEventElapsedTime(&ms, timed, untimed));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_TIMING_DISABLED, mimicEventElapsedTime(&ms, untimed, untimed));
  EXPECT_FLOAT_EQ(ms, -3);
  uint64_t ns = 77;
  EXPECT_RESULT(MIMIC_ERROR_EVENT_TIMING_DISABLED, mimicEventGetTimestamp(untimed, &ns));
  EXPECT_EQ(ns, uint64_t{77});
}

TEST_F(DriverTest, DisableTimingEventStillQueriesAndSynchronizes) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent untimed = NewEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(untimed, q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(untimed));
  const uint64_t before = SimTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(untimed));
  EXPECT_GE(SimTime() - before, copy.minNs() / 2);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(untimed));
}

TEST_F(DriverTest, DisableTimingEventCanBeWaitedOn) {
  Copy copy(0, kLongCopy);
  mimicQueue producer = NewQueue(0);
  mimicQueue consumer = NewQueue(0);
  mimicEvent untimed = NewEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(untimed, producer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(consumer, untimed));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_GE(Timestamp(after), copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// mimicEventQuery / mimicEventSynchronize

TEST_F(DriverTest, EventQueryIsNotReadyUntilTheRecordCompletes) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
  // The record completing means the queue's earlier work has too.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(DriverTest, EventQueryPollingEventuallySucceeds) {
  Copy copy(0, 4 * kMiB);
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  const uint64_t before = SimTime();
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  int polls = 0;
  mimicResult r = MIMIC_NOT_READY;
  while (r == MIMIC_NOT_READY && polls < 1000000) {
    r = mimicEventQuery(e);
    ++polls;
  }
  EXPECT_RESULT(MIMIC_SUCCESS, r);
  EXPECT_GT(polls, 1);
  EXPECT_GE(SimTime() - before, copy.minNs());
}

TEST_F(DriverTest, EventQueryAdvancesHostClockByPollCost) {
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  const uint64_t before = SimTime();
  ASSERT_OK(mimicEventQuery(e));
  EXPECT_EQ(SimTime() - before, uint64_t{1000});  // host.poll_ns of tiny (from default)
}

TEST_F(DriverTest, EventSynchronizeMovesHostClockToTheRecord) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  const uint64_t now = SimTime();
  uint64_t ts = 0;
  ASSERT_OK(mimicEventGetTimestamp(e, &ts));
  EXPECT_EQ(now, ts);
  EXPECT_GE(ts, copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// mimicEventElapsedTime / mimicEventGetTimestamp

TEST_F(DriverTest, ElapsedTimeNullMsIsNullPointer) {
  mimicEvent a = NewEvent(0), b = NewEvent(0);
  ASSERT_OK(mimicEventRecord(a, nullptr));
  ASSERT_OK(mimicEventRecord(b, nullptr));
  ASSERT_OK(mimicEventSynchronize(b));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicEventElapsedTime(nullptr, a, b));
}

TEST_F(DriverTest, ElapsedTimeNullEventsAreInvalidEvent) {
  mimicEvent a = NewEvent(0);
  ASSERT_OK(mimicEventRecord(a, nullptr));
  ASSERT_OK(mimicEventSynchronize(a));
  float ms = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, nullptr, a));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, a, nullptr));
}

TEST_F(DriverTest, GetTimestampNullOutputIsNullPointer) {
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicEventGetTimestamp(e, nullptr));
}

TEST_F(DriverTest, GetTimestampNullEventIsInvalidEvent) {
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventGetTimestamp(nullptr, &ns));
}

TEST_F(DriverTest, ElapsedTimeAroundACopyIsPositive) {
  Copy copy(0, kMiB);
  mimicQueue q = NewQueue(0);
  mimicEvent start = NewEvent(0), end = NewEvent(0);
  ASSERT_OK(mimicEventRecord(start, q));
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(end, q));
  ASSERT_OK(mimicEventSynchronize(end));
  float ms = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, start, end));
  // 1 MiB over a 10 GB/s link is at least 0.1048576 ms; latencies add a few microseconds.
  EXPECT_GE(ms, 0.1048f);
  EXPECT_LT(ms, 1.0f);
}

TEST_F(DriverTest, ElapsedTimeIsTheDifferenceOfTimestamps) {
  Copy copy(0, 2 * kMiB);
  mimicQueue q = NewQueue(0);
  mimicEvent start = NewEvent(0), end = NewEvent(0);
  ASSERT_OK(mimicEventRecord(start, q));
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(end, q));
  const uint64_t t0 = Timestamp(start);
  const uint64_t t1 = Timestamp(end);
  ASSERT_GT(t1, t0);
  float ms = 0;
  ASSERT_OK(mimicEventElapsedTime(&ms, start, end));
  EXPECT_FLOAT_EQ(ms, static_cast<float>(static_cast<double>(t1 - t0) / 1e6));
  EXPECT_GE(t1 - t0, copy.minNs());
}

TEST_F(DriverTest, ElapsedTimeIsNegativeWhenSwapped) {
  Copy copy(0, kMiB);
  mimicQueue q = NewQueue(0);
  mimicEvent start = NewEvent(0), end = NewEvent(0);
  ASSERT_OK(mimicEventRecord(start, q));
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(end, q));
  ASSERT_OK(mimicEventSynchronize(end));
  float forward = 0, backward = 0;
  ASSERT_OK(mimicEventElapsedTime(&forward, start, end));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&backward, end, start));
  EXPECT_GT(forward, 0.0f);
  EXPECT_FLOAT_EQ(backward, -forward);
}

TEST_F(DriverTest, ElapsedTimeOfAnEventWithItselfIsZero) {
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicEventSynchronize(e));
  float ms = -1;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, e, e));
  EXPECT_EQ(ms, 0.0f);
}

TEST_F(DriverTest, ElapsedTimeBeforeTheRecordCompletesIsNotReady) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent start = NewEvent(0), end = NewEvent(0);
  ASSERT_OK(mimicEventRecord(start, q));
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(end, q));
  float ms = -3;
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventElapsedTime(&ms, start, end));
  EXPECT_FLOAT_EQ(ms, -3);
  uint64_t ns = 77;
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventGetTimestamp(end, &ns));
  EXPECT_EQ(ns, uint64_t{77});
  ASSERT_OK(mimicEventSynchronize(end));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, start, end));
  EXPECT_GT(ms, 3.0f);
}

TEST_F(DriverTest, ElapsedTimeAcrossDevicesUsesTheSharedClock) {
  Copy copy(1, kMiB);
  mimicQueue q1 = NewQueue(1);
  mimicEvent start = NewEvent(0), end = NewEvent(1);
  ASSERT_OK(mimicEventRecord(start, nullptr));
  ASSERT_OK(copy.start(q1));
  ASSERT_OK(mimicEventRecord(end, q1));
  const uint64_t t0 = Timestamp(start);
  const uint64_t t1 = Timestamp(end);
  float ms = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, start, end));
  EXPECT_FLOAT_EQ(ms, static_cast<float>(static_cast<double>(t1 - t0) / 1e6));
}

// ---------------------------------------------------------------------------------------------
// Re-recording

TEST_F(DriverTest, ReRecordingReplacesTheRecord) {
  Copy copy(0, kLongCopy);
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, q));
  const uint64_t first = Timestamp(e);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(e, q));
  // The first record has completed, but the event now stands for the second.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventGetTimestamp(e, &ns));
  const uint64_t second = Timestamp(e);
  EXPECT_GE(second - first, copy.minNs());
}

TEST_F(DriverTest, ReRecordingOnAnotherQueueOfTheDeviceReplacesTheRecord) {
  Copy copy(0, kLongCopy);
  mimicQueue busy = NewQueue(0);
  mimicQueue idle = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(copy.start(busy));
  ASSERT_OK(mimicEventRecord(e, busy));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  ASSERT_OK(mimicEventRecord(e, idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
  EXPECT_LT(Timestamp(e), copy.minNs());
}
