// mimicEventCreate, mimicEventDestroy, mimicEventRecord, mimicEventQuery,
// mimicEventSynchronize, mimicEventElapsedTime, mimicEventGetTimestamp.
#include <cstdint>
#include <set>

#include "driver_helpers.h"

namespace {

// Records `start`, starts `copy`, then records `end`, all on `queue`.
void bracketCopy(PinnedCopy& copy, mimicQueue queue, mimicEvent start, mimicEvent end) {
  ASSERT_OK(mimicEventRecord(start, queue));
  ASSERT_OK(copy.start(queue));
  ASSERT_OK(mimicEventRecord(end, queue));
}

// Every timing query that involves `event` fails with `expected` and leaves its output alone;
// `other` is an event whose record has completed.
void expectNoTimes(mimicEvent event, mimicEvent other, mimicResult expected) {
  float ms = -3;
  EXPECT_RESULT(expected, mimicEventElapsedTime(&ms, event, other));
  EXPECT_RESULT(expected, mimicEventElapsedTime(&ms, other, event));
  EXPECT_RESULT(expected, mimicEventElapsedTime(&ms, event, event));
  EXPECT_FLOAT_EQ(ms, -3);
  uint64_t ns = 77;
  EXPECT_RESULT(expected, mimicEventGetTimestamp(event, &ns));
  EXPECT_EQ(ns, uint64_t{77});
}

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
  mimicEvent e = newEvent(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(e));
}

TEST_F(DriverTest, EventDestroyNullIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(nullptr));
}

TEST_F(DriverTest, EventDestroyQueueHandleIsInvalidEvent) {
  mimicQueue q = newQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventDestroy(reinterpret_cast<mimicEvent>(q)));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(q));  // the queue survived
}

TEST_F(DriverTest, EventDestroyForgedHandleIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT,
                mimicEventDestroy(reinterpret_cast<mimicEvent>(uintptr_t{0x7654322})));
}

TEST_F(DriverTest, DestroyedEventIsRejectedEverywhere) {
  mimicEvent e = newEvent(0);
  mimicEvent other = newEvent(0);
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
  PinnedCopy copy(0);
  mimicQueue producer = newQueue(0);
  mimicQueue consumer = newQueue(0);
  mimicEvent doomed = newEvent(0);
  mimicEvent copied = newEvent(0);
  mimicEvent after = newEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(doomed, producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  ASSERT_OK(mimicQueueWaitEvent(consumer, doomed));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(doomed));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(consumer));
  // The wait still held the consumer until the copy was done.
  EXPECT_GE(timestampOf(after), timestampOf(copied));
  EXPECT_GE(timestampOf(after), copy.minNs());
}

TEST_F(DriverTest, DestroyingAnEventWithAPendingRecordLetsTheQueueComplete) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

// ---------------------------------------------------------------------------------------------
// mimicEventRecord

TEST_F(DriverTest, EventRecordOnOwnDeviceQueueSucceeds) {
  mimicEvent e = newEvent(1);
  mimicQueue q = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
}

TEST_F(DriverTest, EventRecordNullEventIsInvalidEvent) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(nullptr, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(nullptr, newQueue(0)));
}

TEST_F(DriverTest, EventRecordQueueHandleAsEventIsInvalidEvent) {
  mimicQueue q = newQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventRecord(reinterpret_cast<mimicEvent>(q), q));
}

TEST_F(DriverTest, EventRecordDestroyedQueueIsInvalidQueue) {
  mimicEvent e = newEvent(0);
  mimicQueue q = newQueue(0);
  ASSERT_OK(mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(e));
}

TEST_F(DriverTest, EventRecordQueueOfOtherDeviceIsWrongDevice) {
  mimicEvent on0 = newEvent(0);
  mimicEvent on1 = newEvent(1);
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicEventRecord(on0, newQueue(1)));
  EXPECT_RESULT(MIMIC_ERROR_WRONG_DEVICE, mimicEventRecord(on1, newQueue(0)));
  // Nothing was recorded.
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(on0));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(on1));
}

TEST_F(DriverTest, EventRecordNullQueueIsTheEventDevicesDefaultQueue) {
  PinnedCopy copy(1);
  ASSERT_OK(copy.start(nullptr));  // device 1's default queue: dst is on device 1
  mimicEvent on1 = newEvent(1);
  mimicEvent on0 = newEvent(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(on1, nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(on0, nullptr));
  // on1 sits behind the copy on device 1's default queue; on0 on device 0's idle one.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(on1));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(on0));
  EXPECT_GE(timestampOf(on1), copy.minNs());
  EXPECT_LT(timestampOf(on0), copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// Unrecorded events

TEST_F(DriverTest, UnrecordedEventIsEventNotRecorded) {
  mimicEvent e = newEvent(0);
  mimicEvent recorded = newEvent(0);
  ASSERT_OK(mimicEventRecord(recorded, nullptr));
  ASSERT_OK(mimicEventSynchronize(recorded));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventQuery(e));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicEventSynchronize(e));
  expectNoTimes(e, recorded, MIMIC_ERROR_EVENT_NOT_RECORDED);
}

// ---------------------------------------------------------------------------------------------
// MIMIC_EVENT_DISABLE_TIMING

TEST_F(DriverTest, DisableTimingEventHasNoTimes) {
  mimicEvent untimed = newEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  mimicEvent timed = newEvent(0);
  ASSERT_OK(mimicEventRecord(untimed, nullptr));
  ASSERT_OK(mimicEventRecord(timed, nullptr));
  ASSERT_OK(mimicEventSynchronize(timed));
  expectNoTimes(untimed, timed, MIMIC_ERROR_EVENT_TIMING_DISABLED);
}

TEST_F(DriverTest, DisableTimingEventStillQueriesAndSynchronizes) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent untimed = newEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(untimed, q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(untimed));
  const uint64_t before = simTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(untimed));
  EXPECT_GE(simTime() - before, copy.minNs() / 2);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(untimed));
}

TEST_F(DriverTest, DisableTimingEventCanBeWaitedOn) {
  PinnedCopy copy(0);
  mimicQueue producer = newQueue(0);
  mimicQueue consumer = newQueue(0);
  mimicEvent untimed = newEvent(0, MIMIC_EVENT_DISABLE_TIMING);
  mimicEvent after = newEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(untimed, producer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(consumer, untimed));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_GE(timestampOf(after), copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// mimicEventQuery / mimicEventSynchronize

TEST_F(DriverTest, EventQueryIsNotReadyUntilTheRecordCompletes) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
  // The record completing means the queue's earlier work has too.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(DriverTest, EventQueryPollingEventuallySucceeds) {
  PinnedCopy copy(0, 4 * kMiB);
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  const uint64_t before = simTime();
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
  EXPECT_GE(simTime() - before, copy.minNs());
}

TEST_F(DriverTest, EventQueryAdvancesHostClockByPollCost) {
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  const uint64_t before = simTime();
  ASSERT_OK(mimicEventQuery(e));
  EXPECT_EQ(simTime() - before, kPollNs);
}

TEST_F(DriverTest, EventSynchronizeMovesHostClockToTheRecord) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicEventRecord(e, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(e));
  const uint64_t now = simTime();
  uint64_t ts = 0;
  ASSERT_OK(mimicEventGetTimestamp(e, &ts));
  EXPECT_EQ(now, ts);
  EXPECT_GE(ts, copy.minNs());
}

// ---------------------------------------------------------------------------------------------
// mimicEventElapsedTime / mimicEventGetTimestamp

TEST_F(DriverTest, ElapsedTimeNullMsIsNullPointer) {
  mimicEvent a = newEvent(0), b = newEvent(0);
  ASSERT_OK(mimicEventRecord(a, nullptr));
  ASSERT_OK(mimicEventRecord(b, nullptr));
  ASSERT_OK(mimicEventSynchronize(b));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicEventElapsedTime(nullptr, a, b));
}

TEST_F(DriverTest, ElapsedTimeNullEventsAreInvalidEvent) {
  mimicEvent a = newEvent(0);
  ASSERT_OK(mimicEventRecord(a, nullptr));
  ASSERT_OK(mimicEventSynchronize(a));
  float ms = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, nullptr, a));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventElapsedTime(&ms, a, nullptr));
}

TEST_F(DriverTest, GetTimestampNullOutputIsNullPointer) {
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicEventSynchronize(e));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicEventGetTimestamp(e, nullptr));
}

TEST_F(DriverTest, GetTimestampNullEventIsInvalidEvent) {
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicEventGetTimestamp(nullptr, &ns));
}

TEST_F(DriverTest, ElapsedTimeAroundACopyIsPositive) {
  PinnedCopy copy(0, kMiB);
  mimicQueue q = newQueue(0);
  mimicEvent start = newEvent(0), end = newEvent(0);
  ASSERT_NO_FATAL_FAILURE(bracketCopy(copy, q, start, end));
  ASSERT_OK(mimicEventSynchronize(end));
  float ms = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, start, end));
  // 1 MiB over a 10 GB/s link is at least 0.1048576 ms; latencies add a few microseconds.
  EXPECT_GE(ms, 0.1048f);
  EXPECT_LT(ms, 1.0f);
}

TEST_F(DriverTest, ElapsedTimeIsTheDifferenceOfTimestamps) {
  PinnedCopy copy(0, 2 * kMiB);
  mimicQueue q = newQueue(0);
  mimicEvent start = newEvent(0), end = newEvent(0);
  ASSERT_NO_FATAL_FAILURE(bracketCopy(copy, q, start, end));
  const uint64_t t0 = timestampOf(start);
  const uint64_t t1 = timestampOf(end);
  ASSERT_GT(t1, t0);
  float ms = 0;
  ASSERT_OK(mimicEventElapsedTime(&ms, start, end));
  EXPECT_FLOAT_EQ(ms, static_cast<float>(static_cast<double>(t1 - t0) / 1e6));
  EXPECT_GE(t1 - t0, copy.minNs());
}

TEST_F(DriverTest, ElapsedTimeIsNegativeWhenSwapped) {
  PinnedCopy copy(0, kMiB);
  mimicQueue q = newQueue(0);
  mimicEvent start = newEvent(0), end = newEvent(0);
  ASSERT_NO_FATAL_FAILURE(bracketCopy(copy, q, start, end));
  ASSERT_OK(mimicEventSynchronize(end));
  float forward = 0, backward = 0;
  ASSERT_OK(mimicEventElapsedTime(&forward, start, end));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&backward, end, start));
  EXPECT_GT(forward, 0.0f);
  EXPECT_FLOAT_EQ(backward, -forward);
}

TEST_F(DriverTest, ElapsedTimeOfAnEventWithItselfIsZero) {
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicEventSynchronize(e));
  float ms = -1;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, e, e));
  EXPECT_EQ(ms, 0.0f);
}

TEST_F(DriverTest, ElapsedTimeBeforeTheRecordCompletesIsNotReady) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent start = newEvent(0), end = newEvent(0);
  ASSERT_NO_FATAL_FAILURE(bracketCopy(copy, q, start, end));
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
  PinnedCopy copy(1, kMiB);
  mimicQueue q1 = newQueue(1);
  mimicEvent start = newEvent(0), end = newEvent(1);
  ASSERT_OK(mimicEventRecord(start, nullptr));
  ASSERT_OK(copy.start(q1));
  ASSERT_OK(mimicEventRecord(end, q1));
  const uint64_t t0 = timestampOf(start);
  const uint64_t t1 = timestampOf(end);
  float ms = 0;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventElapsedTime(&ms, start, end));
  EXPECT_FLOAT_EQ(ms, static_cast<float>(static_cast<double>(t1 - t0) / 1e6));
}

// ---------------------------------------------------------------------------------------------
// Re-recording

TEST_F(DriverTest, ReRecordingReplacesTheRecord) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, q));
  const uint64_t first = timestampOf(e);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(e, q));
  // The first record has completed, but the event now stands for the second.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  uint64_t ns = 0;
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventGetTimestamp(e, &ns));
  const uint64_t second = timestampOf(e);
  EXPECT_GE(second - first, copy.minNs());
}

TEST_F(DriverTest, ReRecordingOnAnotherQueueOfTheDeviceReplacesTheRecord) {
  PinnedCopy copy(0);
  mimicQueue busy = newQueue(0);
  mimicQueue idle = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(copy.start(busy));
  ASSERT_OK(mimicEventRecord(e, busy));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(e));
  ASSERT_OK(mimicEventRecord(e, idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventQuery(e));
  EXPECT_LT(timestampOf(e), copy.minNs());
}
