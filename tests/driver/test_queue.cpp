// mimicQueueCreate, mimicQueueDestroy, mimicQueueQuery, mimicQueueSynchronize,
// mimicQueueWaitEvent, mimicLaunchHostFunc.
#include <atomic>
#include <climits>
#include <cstdint>
#include <set>
#include <vector>

#include "driver_helpers.h"

namespace {

void setFlag(void* flag) {
  static_cast<std::atomic<bool>*>(flag)->store(true);
}

// What mimic calls return when made from inside a host function.
struct CallsFromHostFunc {
  bool ran = false;
  mimicResult init = MIMIC_SUCCESS;
  mimicResult initWithPreset = MIMIC_SUCCESS;
  mimicResult getCount = MIMIC_SUCCESS;
  mimicResult getSimTime = MIMIC_SUCCESS;
  mimicResult memAlloc = MIMIC_SUCCESS;
  mimicResult queueCreate = MIMIC_SUCCESS;
  mimicResult queueQuery = MIMIC_SUCCESS;
  mimicResult queueSynchronize = MIMIC_SUCCESS;
  mimicResult deviceSynchronize = MIMIC_SUCCESS;
  mimicResult eventCreate = MIMIC_SUCCESS;
  mimicResult launchHostFunc = MIMIC_SUCCESS;
  int count = -5;
  void* allocated = nullptr;
};

void callMimic(void* data) {
  auto* calls = static_cast<CallsFromHostFunc*>(data);
  calls->ran = true;
  calls->init = mimicInit(0);
  calls->initWithPreset = mimicInitWithPreset(0, "tiny", nullptr);
  calls->getCount = mimicDeviceGetCount(&calls->count);
  uint64_t ns = 0;
  calls->getSimTime = mimicGetSimTime(&ns);
  calls->memAlloc = mimicMemAlloc(0, 256, &calls->allocated);
  mimicQueue q = nullptr;
  calls->queueCreate = mimicQueueCreate(0, 0, 0, &q);
  calls->queueQuery = mimicQueueQuery(nullptr);
  // Would deadlock if permitted: the simulation thread would wait for itself.
  calls->queueSynchronize = mimicQueueSynchronize(nullptr);
  calls->deviceSynchronize = mimicDeviceSynchronize(0);
  mimicEvent e = nullptr;
  calls->eventCreate = mimicEventCreate(0, 0, &e);
  calls->launchHostFunc = mimicLaunchHostFunc(nullptr, noOp, nullptr);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// mimicQueueCreate

TEST_F(DriverTest, QueueCreateReturnsDistinctHandles) {
  std::set<mimicQueue> queues;
  for (int device = 0; device < 2; ++device) {
    for (int i = 0; i < 3; ++i) {
      mimicQueue q = nullptr;
      EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(device, 0, 0, &q));
      EXPECT_NE(q, nullptr);
      queues.insert(q);
    }
  }
  EXPECT_EQ(queues.size(), 6u);
}

TEST_F(DriverTest, QueueCreateNullOutputIsNullPointer) {
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicQueueCreate(0, 0, 0, nullptr));
}

TEST_F(DriverTest, QueueCreateBadDeviceIsInvalidDevice) {
  mimicQueue q = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicQueueCreate(-1, 0, 0, &q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE, mimicQueueCreate(2, 0, 0, &q));
  EXPECT_EQ(q, nullptr);
}

TEST_F(DriverTest, QueueCreateNonZeroFlagsIsInvalidFlags) {
  mimicQueue q = nullptr;
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicQueueCreate(0, 1, 0, &q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_FLAGS, mimicQueueCreate(0, 0x80000000u, 0, &q));
  EXPECT_EQ(q, nullptr);
}

TEST_F(DriverTest, QueueCreateBadPriorityIsInvalidPriority) {
  mimicQueue q = nullptr;
  for (int priority : {1, -2, 2, 100, INT_MAX, INT_MIN}) {
    SCOPED_TRACE(priority);
    EXPECT_RESULT(MIMIC_ERROR_INVALID_PRIORITY, mimicQueueCreate(0, 0, priority, &q));
  }
  EXPECT_EQ(q, nullptr);
}

TEST_F(DriverTest, QueueCreateLowAndHighPrioritySucceed) {
  mimicQueue low = nullptr, high = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(0, 0, 0, &low));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(1, 0, -1, &high));
  EXPECT_NE(low, nullptr);
  EXPECT_NE(high, nullptr);
  mimicQueue low2 = nullptr, high2 = nullptr;
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &low2));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_HIGH, &high2));
}

TEST_F(DriverTest, MoreQueuesThanHardwareQueuesAllWork) {
  void* dev = nullptr;
  ASSERT_OK(mimicMemAlloc(0, 4096, &dev));
  std::vector<mimicQueue> queues;
  for (int i = 0; i < 10; ++i) queues.push_back(newQueue(0));
  for (size_t i = 0; i < queues.size(); ++i) {
    EXPECT_RESULT(MIMIC_SUCCESS, mimicMemsetAsync(static_cast<char*>(dev) + 256 * i,
                                                  static_cast<int>(i), 256, queues[i]));
  }
  for (mimicQueue q : queues) EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  std::vector<unsigned char> back(4096);
  ASSERT_OK(mimicMemcpy(back.data(), dev, back.size()));
  for (size_t i = 0; i < queues.size(); ++i) EXPECT_EQ(back[256 * i + 255], i);
}

// ---------------------------------------------------------------------------------------------
// mimicQueueDestroy

TEST_F(DriverTest, QueueDestroySucceedsOnce) {
  mimicQueue q = newQueue(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueDestroy(q));
}

TEST_F(DriverTest, QueueDestroyNullIsInvalidQueue) {
  // The default queue cannot be destroyed.
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueDestroy(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
}

TEST_F(DriverTest, QueueDestroyEventHandleIsInvalidQueue) {
  mimicEvent e = newEvent(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueDestroy(reinterpret_cast<mimicQueue>(e)));
  // The event survived.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(e, nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventDestroy(e));
}

TEST_F(DriverTest, QueueDestroyForgedHandleIsInvalidQueue) {
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE,
                mimicQueueDestroy(reinterpret_cast<mimicQueue>(uintptr_t{0x12345671})));
}

TEST_F(DriverTest, DestroyedQueueIsRejectedEverywhere) {
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueWaitEvent(q, e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicLaunchHostFunc(q, noOp, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicEventRecord(e, q));
}

TEST_F(DriverTest, QueueDestroyLetsQueuedWorkComplete) {
  const size_t bytes = 4 * kMiB;
  std::vector<unsigned char> data(bytes, 0x3C);
  void* host = nullptr;
  void* dev = nullptr;
  ASSERT_OK(mimicHostAlloc(bytes, &host));
  ASSERT_OK(mimicMemAlloc(0, bytes, &dev));
  std::copy(data.begin(), data.end(), static_cast<unsigned char*>(host));
  mimicQueue q = newQueue(0);
  mimicEvent done = newEvent(0);
  std::atomic<bool> ran{false};
  ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, q));
  ASSERT_OK(mimicLaunchHostFunc(q, setFlag, &ran));
  ASSERT_OK(mimicEventRecord(done, q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicEventSynchronize(done));
  EXPECT_TRUE(ran.load());
  std::vector<unsigned char> back(bytes);
  ASSERT_OK(mimicMemcpy(back.data(), dev, bytes));
  EXPECT_EQ(back, data);
}

// ---------------------------------------------------------------------------------------------
// mimicQueueQuery / mimicQueueSynchronize

TEST_F(DriverTest, QueueQueryOfEmptyQueueIsSuccess) {
  mimicQueue q = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, QueueQueryDuringLongCopyIsNotReadyUntilSynchronized) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(DriverTest, QueueQueryOfDefaultQueueDuringLongCopyIsNotReady) {
  PinnedCopy copy(0);
  ASSERT_OK(copy.start(nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, QueueQueryAdvancesHostClockByPollCost) {
  mimicQueue q = newQueue(0);
  const uint64_t before = simTime();
  ASSERT_OK(mimicQueueQuery(q));
  EXPECT_EQ(simTime() - before, kPollNs);
  ASSERT_OK(mimicQueueQuery(nullptr));
  EXPECT_EQ(simTime() - before, 2 * kPollNs);
}

TEST_F(DriverTest, QueueQueryPollingEventuallySucceeds) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  const uint64_t before = simTime();
  ASSERT_OK(copy.start(q));
  uint64_t polls = 0;
  mimicResult r = MIMIC_NOT_READY;
  while (r == MIMIC_NOT_READY && polls < 1000000) {
    r = mimicQueueQuery(q);
    ++polls;
  }
  EXPECT_RESULT(MIMIC_SUCCESS, r);
  const uint64_t elapsed = simTime() - before;
  EXPECT_GE(elapsed, copy.minNs());
  EXPECT_EQ(elapsed, polls * kPollNs);  // only the polls moved the host clock
  EXPECT_GT(polls, copy.minNs() / kPollNs);
}

TEST_F(DriverTest, QueueSynchronizeMovesHostClockToCompletion) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  const uint64_t before = simTime();
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_GE(simTime() - before, copy.minNs());
}

TEST_F(DriverTest, QueueSynchronizeOfEmptyQueueSucceeds) {
  mimicQueue q = newQueue(1);
  const uint64_t before = simTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_EQ(simTime(), before);
}

TEST_F(DriverTest, QueuesDoNotWaitForEachOther) {
  PinnedCopy copy(0);
  mimicQueue busy = newQueue(0);
  mimicQueue idle = newQueue(0);
  ASSERT_OK(copy.start(busy));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(busy));
}

TEST_F(DriverTest, QueueSynchronizeDoesNotWaitForOtherQueues) {
  PinnedCopy copy(0);
  mimicQueue busy = newQueue(0);
  mimicQueue idle = newQueue(0);
  ASSERT_OK(copy.start(busy));
  const uint64_t before = simTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_LT(simTime() - before, copy.minNs());
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(busy));
}

TEST_F(DriverTest, QueuesSharingAHardwareQueueAreOrdered) {
  // tiny has 4 hardware queues; the default queue keeps hardware queue 0 and created queues take
  // 1, 2, 3, 1, ... so the first and the fourth created queue share one.
  std::vector<mimicQueue> queues;
  for (int i = 0; i < 4; ++i) queues.push_back(newQueue(0));
  PinnedCopy copy(0);
  ASSERT_OK(copy.start(queues[0]));
  mimicEvent sharing = newEvent(0);
  mimicEvent separate = newEvent(0);
  mimicEvent onDefault = newEvent(0);
  ASSERT_OK(mimicEventRecord(sharing, queues[3]));
  ASSERT_OK(mimicEventRecord(separate, queues[1]));
  ASSERT_OK(mimicEventRecord(onDefault, nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(queues[3]));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queues[1]));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
  EXPECT_GE(timestampOf(sharing), copy.minNs());
  EXPECT_LT(timestampOf(separate), copy.minNs());
  EXPECT_LT(timestampOf(onDefault), copy.minNs());
}

TEST_F(DriverTest, QueueQueryAndSynchronizeEventHandleIsInvalidQueue) {
  mimicQueue asQueue = reinterpret_cast<mimicQueue>(newEvent(0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueQuery(asQueue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueSynchronize(asQueue));
}

// ---------------------------------------------------------------------------------------------
// mimicQueueWaitEvent

TEST_F(DriverTest, QueueWaitEventUnrecordedIsEventNotRecorded) {
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicQueueWaitEvent(q, e));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicQueueWaitEvent(nullptr, e));
}

TEST_F(DriverTest, QueueWaitEventNullIsInvalidEvent) {
  mimicQueue q = newQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(q, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(nullptr, nullptr));
}

TEST_F(DriverTest, QueueWaitEventDestroyedIsInvalidEvent) {
  mimicQueue q = newQueue(0);
  mimicEvent e = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, q));
  ASSERT_OK(mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(q, e));
}

TEST_F(DriverTest, QueueWaitEventQueueHandleIsInvalidEvent) {
  mimicQueue q = newQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT,
                mimicQueueWaitEvent(q, reinterpret_cast<mimicEvent>(newQueue(0))));
}

TEST_F(DriverTest, QueueWaitEventOrdersTheWaitingQueue) {
  PinnedCopy copy(0);
  mimicQueue producer = newQueue(0);
  mimicQueue consumer = newQueue(0);
  mimicEvent copied = newEvent(0);
  mimicEvent after = newEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(consumer, copied));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(consumer));
  EXPECT_GE(timestampOf(after), timestampOf(copied));
  EXPECT_GE(timestampOf(after), copy.minNs());
}

TEST_F(DriverTest, QueueWithoutWaitEventRunsAhead) {
  // The control for QueueWaitEventOrdersTheWaitingQueue: without the wait, the second queue's
  // record completes long before the copy.
  PinnedCopy copy(0);
  mimicQueue producer = newQueue(0);
  mimicQueue consumer = newQueue(0);
  mimicEvent copied = newEvent(0);
  mimicEvent after = newEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_LT(timestampOf(after), timestampOf(copied));
}

TEST_F(DriverTest, QueueWaitEventAcrossDevices) {
  PinnedCopy copy(1);
  mimicQueue onOne = newQueue(1);
  mimicQueue onZero = newQueue(0);
  mimicEvent copied = newEvent(1);
  mimicEvent after = newEvent(0);
  ASSERT_OK(copy.start(onOne));
  ASSERT_OK(mimicEventRecord(copied, onOne));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(onZero, copied));
  ASSERT_OK(mimicEventRecord(after, onZero));
  EXPECT_GE(timestampOf(after), timestampOf(copied));
  EXPECT_GE(timestampOf(after), copy.minNs());
}

TEST_F(DriverTest, QueueWaitEventUsesTheRecordAtTheTimeOfTheCall) {
  PinnedCopy copy(0);
  mimicQueue producer = newQueue(0);
  mimicQueue consumer = newQueue(0);
  mimicEvent e = newEvent(0);
  mimicEvent after = newEvent(0);
  ASSERT_OK(mimicEventRecord(e, producer));  // completes at once
  ASSERT_OK(mimicQueueWaitEvent(consumer, e));
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(e, producer));  // a later record does not affect the queued wait
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_LT(timestampOf(after), timestampOf(e));
}

// ---------------------------------------------------------------------------------------------
// mimicLaunchHostFunc

TEST_F(DriverTest, LaunchHostFuncNullFunctionIsNullPointer) {
  int data = 0;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicLaunchHostFunc(nullptr, nullptr, &data));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicLaunchHostFunc(newQueue(0), nullptr, &data));
}

TEST_F(DriverTest, LaunchHostFuncEventHandleAsQueueIsInvalidQueue) {
  mimicQueue asQueue = reinterpret_cast<mimicQueue>(newEvent(0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicLaunchHostFunc(asQueue, noOp, nullptr));
}

TEST_F(DriverTest, LaunchHostFuncRunsByTheTimeTheQueueIsSynchronized) {
  std::atomic<bool> ran{false};
  mimicQueue q = newQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicLaunchHostFunc(q, setFlag, &ran));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncOnDefaultQueueRuns) {
  std::atomic<bool> ran{false};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicLaunchHostFunc(nullptr, setFlag, &ran));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncWaitsForEarlierWork) {
  PinnedCopy copy(0);
  mimicQueue q = newQueue(0);
  std::atomic<bool> ran{false};
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicLaunchHostFunc(q, setFlag, &ran));
  // The simulation never runs ahead of the host clock, which is still before the copy ends.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_FALSE(ran.load());
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncsRunInQueueOrder) {
  CallLog log;
  Call calls[] = {{&log, 1}, {&log, 2}, {&log, 3}};
  mimicQueue q = newQueue(0);
  for (Call& call : calls) ASSERT_OK(mimicLaunchHostFunc(q, logCall, &call));
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_EQ(log.order, (std::vector<int>{1, 2, 3}));
}

TEST_F(DriverTest, MimicCallsFromHostFuncAreNotPermitted) {
  CallsFromHostFunc calls;
  mimicQueue q = newQueue(0);
  ASSERT_OK(mimicLaunchHostFunc(q, callMimic, &calls));
  ASSERT_OK(mimicQueueSynchronize(q));
  ASSERT_TRUE(calls.ran);
  const mimicResult np = MIMIC_ERROR_NOT_PERMITTED;
  EXPECT_EQ(calls.init, np) << mimicGetErrorName(calls.init);
  EXPECT_EQ(calls.initWithPreset, np) << mimicGetErrorName(calls.initWithPreset);
  EXPECT_EQ(calls.getCount, np) << mimicGetErrorName(calls.getCount);
  EXPECT_EQ(calls.getSimTime, np) << mimicGetErrorName(calls.getSimTime);
  EXPECT_EQ(calls.memAlloc, np) << mimicGetErrorName(calls.memAlloc);
  EXPECT_EQ(calls.queueCreate, np) << mimicGetErrorName(calls.queueCreate);
  EXPECT_EQ(calls.queueQuery, np) << mimicGetErrorName(calls.queueQuery);
  EXPECT_EQ(calls.queueSynchronize, np) << mimicGetErrorName(calls.queueSynchronize);
  EXPECT_EQ(calls.deviceSynchronize, np) << mimicGetErrorName(calls.deviceSynchronize);
  EXPECT_EQ(calls.eventCreate, np) << mimicGetErrorName(calls.eventCreate);
  EXPECT_EQ(calls.launchHostFunc, np) << mimicGetErrorName(calls.launchHostFunc);
  EXPECT_EQ(calls.count, -5);
  EXPECT_EQ(calls.allocated, nullptr);
  size_t freeBytes = 0, totalBytes = 0;
  ASSERT_OK(mimicMemGetInfo(0, &freeBytes, &totalBytes));
  EXPECT_EQ(freeBytes, totalBytes);
  // The queue and the calling thread are unaffected.
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicGetLastError());
}
