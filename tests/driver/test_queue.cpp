// mimicQueueCreate, mimicQueueDestroy, mimicQueueQuery, mimicQueueSynchronize,
// mimicQueueWaitEvent, mimicLaunchHostFunc.
#include <atomic>
#include <climits>
#include <cstdint>
#include <set>
#include <vector>

#include "driver_test.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kPollNs = 1000;  // host.poll_ns, from default.preset via tiny

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

mimicEvent NewEvent(int device) {
  mimicEvent e = nullptr;
  EXPECT_EQ(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &e), MIMIC_SUCCESS);
  return e;
}

uint64_t Timestamp(mimicEvent event) {
  EXPECT_EQ(mimicEventSynchronize(event), MIMIC_SUCCESS);
  uint64_t ns = 0;
  EXPECT_EQ(mimicEventGetTimestamp(event, &ns), MIMIC_SUCCESS);
  return ns;
}

// A pinned host-to-device copy long enough to still be running when the host next looks:
// 32 MiB over tiny's 10 GB/s host link is about 3.4 ms of simulated time.
class LongCopy {
 public:
  static constexpr size_t kBytes = 32 * kMiB;
  static constexpr uint64_t kMinNs = kBytes / 10;  // bytes / (10 bytes per ns)

  explicit LongCopy(int device) {
    EXPECT_EQ(mimicHostAlloc(kBytes, &host_), MIMIC_SUCCESS);
    EXPECT_EQ(mimicMemAlloc(device, kBytes, &dev_), MIMIC_SUCCESS);
  }
  mimicResult start(mimicQueue queue) { return mimicMemcpyAsync(dev_, host_, kBytes, queue); }

 private:
  void* host_ = nullptr;
  void* dev_ = nullptr;
};

void NoOp(void*) {}

void SetFlag(void* flag) {
  static_cast<std::atomic<bool>*>(flag)->store(true);
}

struct Sequence {
  std::vector<int> order;
};
struct Step {
  Sequence* sequence;
  int id;
};
void AppendStep(void* step) {
  auto* s = static_cast<Step*>(step);
  s->sequence->order.push_back(s->id);
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

void CallMimic(void* data) {
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
  calls->launchHostFunc = mimicLaunchHostFunc(nullptr, NoOp, nullptr);
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
  for (int i = 0; i < 10; ++i) queues.push_back(NewQueue(0));
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
  mimicQueue q = NewQueue(0);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueDestroy(q));
}

TEST_F(DriverTest, QueueDestroyNullIsInvalidQueue) {
  // The default queue cannot be destroyed.
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueDestroy(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
}

TEST_F(DriverTest, QueueDestroyEventHandleIsInvalidQueue) {
  mimicEvent e = NewEvent(0);
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
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, nullptr));
  ASSERT_OK(mimicQueueDestroy(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueWaitEvent(q, e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicLaunchHostFunc(q, NoOp, nullptr));
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
  mimicQueue q = NewQueue(0);
  mimicEvent done = NewEvent(0);
  std::atomic<bool> ran{false};
  ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, q));
  ASSERT_OK(mimicLaunchHostFunc(q, SetFlag, &ran));
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
  mimicQueue q = NewQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, QueueQueryDuringLongCopyIsNotReadyUntilSynchronized) {
  LongCopy copy(0);
  mimicQueue q = NewQueue(0);
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(DriverTest, QueueQueryOfDefaultQueueDuringLongCopyIsNotReady) {
  LongCopy copy(0);
  ASSERT_OK(copy.start(nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
}

TEST_F(DriverTest, QueueQueryAdvancesHostClockByPollCost) {
  mimicQueue q = NewQueue(0);
  const uint64_t before = SimTime();
  ASSERT_OK(mimicQueueQuery(q));
  EXPECT_EQ(SimTime() - before, kPollNs);
  ASSERT_OK(mimicQueueQuery(nullptr));
  EXPECT_EQ(SimTime() - before, 2 * kPollNs);
}

TEST_F(DriverTest, QueueQueryPollingEventuallySucceeds) {
  LongCopy copy(0);
  mimicQueue q = NewQueue(0);
  const uint64_t before = SimTime();
  ASSERT_OK(copy.start(q));
  uint64_t polls = 0;
  mimicResult r = MIMIC_NOT_READY;
  while (r == MIMIC_NOT_READY && polls < 1000000) {
    r = mimicQueueQuery(q);
    ++polls;
  }
  EXPECT_RESULT(MIMIC_SUCCESS, r);
  const uint64_t elapsed = SimTime() - before;
  EXPECT_GE(elapsed, LongCopy::kMinNs);
  EXPECT_EQ(elapsed, polls * kPollNs);  // only the polls moved the host clock
  EXPECT_GT(polls, LongCopy::kMinNs / kPollNs);
}

TEST_F(DriverTest, QueueSynchronizeMovesHostClockToCompletion) {
  LongCopy copy(0);
  mimicQueue q = NewQueue(0);
  const uint64_t before = SimTime();
  ASSERT_OK(copy.start(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_GE(SimTime() - before, LongCopy::kMinNs);
}

TEST_F(DriverTest, QueueSynchronizeOfEmptyQueueSucceeds) {
  mimicQueue q = NewQueue(1);
  const uint64_t before = SimTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_EQ(SimTime(), before);
}

TEST_F(DriverTest, QueuesDoNotWaitForEachOther) {
  LongCopy copy(0);
  mimicQueue busy = NewQueue(0);
  mimicQueue idle = NewQueue(0);
  ASSERT_OK(copy.start(busy));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(busy));
}

TEST_F(DriverTest, QueueSynchronizeDoesNotWaitForOtherQueues) {
  LongCopy copy(0);
  mimicQueue busy = NewQueue(0);
  mimicQueue idle = NewQueue(0);
  ASSERT_OK(copy.start(busy));
  const uint64_t before = SimTime();
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(idle));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_LT(SimTime() - before, LongCopy::kMinNs);
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(busy));
}

TEST_F(DriverTest, QueuesSharingAHardwareQueueAreOrdered) {
  // tiny has 4 hardware queues; the default queue keeps hardware queue 0 and created queues take
  // 1, 2, 3, 1, ... so the first and the fourth created queue share one.
  std::vector<mimicQueue> queues;
  for (int i = 0; i < 4; ++i) queues.push_back(NewQueue(0));
  LongCopy copy(0);
  ASSERT_OK(copy.start(queues[0]));
  mimicEvent sharing = NewEvent(0);
  mimicEvent separate = NewEvent(0);
  mimicEvent onDefault = NewEvent(0);
  ASSERT_OK(mimicEventRecord(sharing, queues[3]));
  ASSERT_OK(mimicEventRecord(separate, queues[1]));
  ASSERT_OK(mimicEventRecord(onDefault, nullptr));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(queues[3]));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(queues[1]));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(nullptr));
  EXPECT_GE(Timestamp(sharing), LongCopy::kMinNs);
  EXPECT_LT(Timestamp(separate), LongCopy::kMinNs);
  EXPECT_LT(Timestamp(onDefault), LongCopy::kMinNs);
}

TEST_F(DriverTest, QueueQueryAndSynchronizeEventHandleIsInvalidQueue) {
  mimicQueue asQueue = reinterpret_cast<mimicQueue>(NewEvent(0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueQuery(asQueue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicQueueSynchronize(asQueue));
}

// ---------------------------------------------------------------------------------------------
// mimicQueueWaitEvent

TEST_F(DriverTest, QueueWaitEventUnrecordedIsEventNotRecorded) {
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicQueueWaitEvent(q, e));
  EXPECT_RESULT(MIMIC_ERROR_EVENT_NOT_RECORDED, mimicQueueWaitEvent(nullptr, e));
}

TEST_F(DriverTest, QueueWaitEventNullIsInvalidEvent) {
  mimicQueue q = NewQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(q, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(nullptr, nullptr));
}

TEST_F(DriverTest, QueueWaitEventDestroyedIsInvalidEvent) {
  mimicQueue q = NewQueue(0);
  mimicEvent e = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, q));
  ASSERT_OK(mimicEventDestroy(e));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT, mimicQueueWaitEvent(q, e));
}

TEST_F(DriverTest, QueueWaitEventQueueHandleIsInvalidEvent) {
  mimicQueue q = NewQueue(0);
  EXPECT_RESULT(MIMIC_ERROR_INVALID_EVENT,
                mimicQueueWaitEvent(q, reinterpret_cast<mimicEvent>(NewQueue(0))));
}

TEST_F(DriverTest, QueueWaitEventOrdersTheWaitingQueue) {
  LongCopy copy(0);
  mimicQueue producer = NewQueue(0);
  mimicQueue consumer = NewQueue(0);
  mimicEvent copied = NewEvent(0);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(consumer, copied));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(consumer));
  EXPECT_GE(Timestamp(after), Timestamp(copied));
  EXPECT_GE(Timestamp(after), LongCopy::kMinNs);
}

TEST_F(DriverTest, QueueWithoutWaitEventRunsAhead) {
  // The control for QueueWaitEventOrdersTheWaitingQueue: without the wait, the second queue's
  // record completes long before the copy.
  LongCopy copy(0);
  mimicQueue producer = NewQueue(0);
  mimicQueue consumer = NewQueue(0);
  mimicEvent copied = NewEvent(0);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(copied, producer));
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_LT(Timestamp(after), Timestamp(copied));
}

TEST_F(DriverTest, QueueWaitEventAcrossDevices) {
  LongCopy copy(1);
  mimicQueue onOne = NewQueue(1);
  mimicQueue onZero = NewQueue(0);
  mimicEvent copied = NewEvent(1);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(copy.start(onOne));
  ASSERT_OK(mimicEventRecord(copied, onOne));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueWaitEvent(onZero, copied));
  ASSERT_OK(mimicEventRecord(after, onZero));
  EXPECT_GE(Timestamp(after), Timestamp(copied));
  EXPECT_GE(Timestamp(after), LongCopy::kMinNs);
}

TEST_F(DriverTest, QueueWaitEventUsesTheRecordAtTheTimeOfTheCall) {
  LongCopy copy(0);
  mimicQueue producer = NewQueue(0);
  mimicQueue consumer = NewQueue(0);
  mimicEvent e = NewEvent(0);
  mimicEvent after = NewEvent(0);
  ASSERT_OK(mimicEventRecord(e, producer));  // completes at once
  ASSERT_OK(mimicQueueWaitEvent(consumer, e));
  ASSERT_OK(copy.start(producer));
  ASSERT_OK(mimicEventRecord(e, producer));  // a later record does not affect the queued wait
  ASSERT_OK(mimicEventRecord(after, consumer));
  EXPECT_LT(Timestamp(after), Timestamp(e));
}

// ---------------------------------------------------------------------------------------------
// mimicLaunchHostFunc

TEST_F(DriverTest, LaunchHostFuncNullFunctionIsNullPointer) {
  int data = 0;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicLaunchHostFunc(nullptr, nullptr, &data));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicLaunchHostFunc(NewQueue(0), nullptr, &data));
}

TEST_F(DriverTest, LaunchHostFuncEventHandleAsQueueIsInvalidQueue) {
  mimicQueue asQueue = reinterpret_cast<mimicQueue>(NewEvent(0));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicLaunchHostFunc(asQueue, NoOp, nullptr));
}

TEST_F(DriverTest, LaunchHostFuncRunsByTheTimeTheQueueIsSynchronized) {
  std::atomic<bool> ran{false};
  mimicQueue q = NewQueue(1);
  EXPECT_RESULT(MIMIC_SUCCESS, mimicLaunchHostFunc(q, SetFlag, &ran));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(q));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncOnDefaultQueueRuns) {
  std::atomic<bool> ran{false};
  EXPECT_RESULT(MIMIC_SUCCESS, mimicLaunchHostFunc(nullptr, SetFlag, &ran));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueSynchronize(nullptr));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncWaitsForEarlierWork) {
  LongCopy copy(0);
  mimicQueue q = NewQueue(0);
  std::atomic<bool> ran{false};
  ASSERT_OK(copy.start(q));
  ASSERT_OK(mimicLaunchHostFunc(q, SetFlag, &ran));
  // The simulation never runs ahead of the host clock, which is still before the copy ends.
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  EXPECT_FALSE(ran.load());
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_TRUE(ran.load());
}

TEST_F(DriverTest, LaunchHostFuncsRunInQueueOrder) {
  Sequence sequence;
  Step steps[] = {{&sequence, 1}, {&sequence, 2}, {&sequence, 3}};
  mimicQueue q = NewQueue(0);
  for (Step& step : steps) ASSERT_OK(mimicLaunchHostFunc(q, AppendStep, &step));
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_EQ(sequence.order, (std::vector<int>{1, 2, 3}));
}

TEST_F(DriverTest, MimicCallsFromHostFuncAreNotPermitted) {
  CallsFromHostFunc calls;
  mimicQueue q = NewQueue(0);
  ASSERT_OK(mimicLaunchHostFunc(q, CallMimic, &calls));
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
