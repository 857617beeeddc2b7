// Queue order, event ordering across queues and devices, and host functions.
#include <vector>

#include "driver_helpers.h"

namespace {

constexpr size_t kBig = 16u << 20;
constexpr size_t kSmall = 4096;

class OrderingTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    host = pinnedAlloc(kBig);
    dev = deviceAlloc(kBig);
  }
  void* host = nullptr;
  void* dev = nullptr;
};

TEST_F(OrderingTest, CommandsOnOneQueueCompleteInOrder) {
  mimicQueue q = newQueue();
  std::vector<mimicEvent> after;
  for (size_t bytes : {kBig, kSmall, kBig / 4, kSmall}) {
    ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, q));
    after.push_back(newEvent());
    ASSERT_OK(mimicEventRecord(after.back(), q));
  }
  for (size_t i = 1; i < after.size(); ++i) {
    EXPECT_GT(timestampOf(after[i]), timestampOf(after[i - 1])) << i;
  }
}

TEST_F(OrderingTest, QueuesWithoutEventsAreNotOrdered) {
  mimicQueue slow = newQueue(), fast = newQueue();
  mimicEvent slowDone = newEvent(), fastDone = newEvent();
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, slow));
  ASSERT_OK(mimicEventRecord(slowDone, slow));
  ASSERT_OK(mimicMemcpyAsync(static_cast<char*>(dev) + kSmall, host, kSmall, fast));
  ASSERT_OK(mimicEventRecord(fastDone, fast));
  EXPECT_LT(timestampOf(fastDone), timestampOf(slowDone));
}

TEST_F(OrderingTest, WaitOnAnEventDelaysExactlyThatQueue) {
  mimicQueue producer = newQueue(), consumer = newQueue(), bystander = newQueue();
  mimicEvent produced = newEvent(), consumed = newEvent(), bystanderDone = newEvent();
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, producer));
  ASSERT_OK(mimicEventRecord(produced, producer));
  ASSERT_OK(mimicQueueWaitEvent(consumer, produced));
  ASSERT_OK(mimicMemcpyAsync(host, dev, kSmall, consumer));
  ASSERT_OK(mimicEventRecord(consumed, consumer));
  ASSERT_OK(mimicMemcpyAsync(host, dev, kSmall, bystander));
  ASSERT_OK(mimicEventRecord(bystanderDone, bystander));
  uint64_t producedAt = timestampOf(produced);
  EXPECT_GT(timestampOf(consumed), producedAt);
  EXPECT_LT(timestampOf(bystanderDone), producedAt);
}

TEST_F(OrderingTest, WaitUsesTheRecordMadeBeforeTheWait) {
  mimicQueue a = newQueue(), b = newQueue();
  mimicEvent e = newEvent(), bDone = newEvent();
  ASSERT_OK(mimicEventRecord(e, a));  // completes at once: a is empty
  ASSERT_OK(mimicQueueWaitEvent(b, e));
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, a));
  ASSERT_OK(mimicEventRecord(e, a));  // re-recorded after the wait was queued
  ASSERT_OK(mimicMemcpyAsync(host, dev, kSmall, b));
  ASSERT_OK(mimicEventRecord(bDone, b));
  EXPECT_LT(timestampOf(bDone), timestampOf(e));
}

TEST_F(OrderingTest, WaitWorksAcrossDevices) {
  void* dev1 = deviceAlloc(kSmall, 1);
  mimicQueue q0 = newQueue(0), q1 = newQueue(1);
  mimicEvent onDevice0 = newEvent(0), onDevice1 = newEvent(1);
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, q0));
  ASSERT_OK(mimicEventRecord(onDevice0, q0));
  ASSERT_OK(mimicQueueWaitEvent(q1, onDevice0));
  ASSERT_OK(mimicMemsetAsync(dev1, 7, kSmall, q1));
  ASSERT_OK(mimicEventRecord(onDevice1, q1));
  EXPECT_GT(timestampOf(onDevice1), timestampOf(onDevice0));
}

TEST_F(OrderingTest, HostFunctionsRunInQueueOrder) {
  CallLog log;
  Call first{&log, 1}, second{&log, 2}, third{&log, 3};
  mimicQueue q = newQueue();
  ASSERT_OK(mimicLaunchHostFunc(q, logCall, &first));
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, q));
  ASSERT_OK(mimicLaunchHostFunc(q, logCall, &second));
  ASSERT_OK(mimicLaunchHostFunc(q, logCall, &third));
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_EQ(log.order, (std::vector<int>{1, 2, 3}));
}

TEST_F(OrderingTest, HostFunctionsFollowSimulatedTimeAcrossQueues) {
  CallLog log;
  Call afterBig{&log, 1}, afterSmall{&log, 2};
  mimicQueue slow = newQueue(), fast = newQueue();
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, slow));
  ASSERT_OK(mimicLaunchHostFunc(slow, logCall, &afterBig));
  ASSERT_OK(mimicMemcpyAsync(host, dev, kSmall, fast));
  ASSERT_OK(mimicLaunchHostFunc(fast, logCall, &afterSmall));
  ASSERT_OK(mimicDeviceSynchronize(0));
  EXPECT_EQ(log.order, (std::vector<int>{2, 1}));
}

TEST_F(OrderingTest, HostFunctionHoldsItsQueueUntilItReturns) {
  CallLog log;
  Call call{&log, 1};
  mimicQueue q = newQueue();
  mimicEvent before = newEvent(), after = newEvent();
  ASSERT_OK(mimicEventRecord(before, q));
  ASSERT_OK(mimicLaunchHostFunc(q, logCall, &call));
  ASSERT_OK(mimicEventRecord(after, q));
  EXPECT_GT(timestampOf(after), timestampOf(before));
  EXPECT_EQ(log.order.size(), 1u);
}

TEST_F(OrderingTest, BlockingCopyWaitsOnlyForItsOwnQueue) {
  mimicQueue other = newQueue();
  mimicEvent otherDone = newEvent();
  ASSERT_OK(mimicMemcpyAsync(dev, host, kBig, other));
  ASSERT_OK(mimicEventRecord(otherDone, other));
  char small[64] = {};
  ASSERT_OK(mimicMemcpy(small, dev, sizeof small));
  EXPECT_RESULT(MIMIC_NOT_READY, mimicEventQuery(otherDone));
}

}  // namespace
