// mimicLaunchHostTask and mimicMemGetHostView: the two hooks for work done off the device
// (the c10d backend's transfers between processes).
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "driver_helpers.h"

namespace {

// A task that lasts `lengthNs` from its start (or ends at `endNs` if that is set), remembers
// when it started, and optionally blocks the simulation for `blockMs` of wall time.
struct Task {
  uint64_t lengthNs = 0;
  uint64_t endNs = 0;
  int blockMs = 0;
  std::atomic<uint64_t> startNs{0};
  std::atomic<bool> ran{false};
};

uint64_t runTask(void* data, uint64_t startNs) {
  auto* task = static_cast<Task*>(data);
  if (task->blockMs) std::this_thread::sleep_for(std::chrono::milliseconds(task->blockMs));
  task->startNs = startNs;
  task->ran = true;
  return task->endNs ? task->endNs : startNs + task->lengthNs;
}

// Records `before`, runs `task`, records `after`; returns after - before in simulated ns.
uint64_t timeTask(mimicQueue queue, Task& task) {
  mimicEvent before = newEvent(), after = newEvent();
  EXPECT_EQ(mimicEventRecord(before, queue), MIMIC_SUCCESS);
  EXPECT_EQ(mimicLaunchHostTask(queue, runTask, &task), MIMIC_SUCCESS);
  EXPECT_EQ(mimicEventRecord(after, queue), MIMIC_SUCCESS);
  const uint64_t span = timestampOf(after) - timestampOf(before);
  EXPECT_EQ(task.startNs.load(), timestampOf(before));
  mimicEventDestroy(before);
  mimicEventDestroy(after);
  return span;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// mimicLaunchHostTask

TEST_F(DriverTest, HostTaskHoldsItsQueueUntilTheTimeItReturns) {
  mimicQueue queue = newQueue();
  Task task;
  task.lengthNs = 50000;
  EXPECT_EQ(timeTask(queue, task), 50000u);
  ASSERT_OK(mimicQueueDestroy(queue));
}

TEST_F(DriverTest, HostTaskEndingBeforeItsStartTakesNoTime) {
  mimicQueue queue = newQueue();
  Task first, task;
  first.lengthNs = 10000;
  ASSERT_OK(mimicLaunchHostTask(queue, runTask, &first));
  task.endNs = 1;  // long past by the time it starts
  EXPECT_EQ(timeTask(queue, task), 0u);
  ASSERT_OK(mimicQueueDestroy(queue));
}

TEST_F(DriverTest, HostTaskThatBlocksDoesNotChangeSimulatedTime) {
  mimicQueue queue = newQueue();
  Task quick, slow;
  quick.lengthNs = slow.lengthNs = 7000;
  slow.blockMs = 100;
  EXPECT_EQ(timeTask(queue, slow), timeTask(queue, quick));
  ASSERT_OK(mimicQueueDestroy(queue));
}

TEST_F(DriverTest, HostTaskLeavesOtherQueuesRunning) {
  mimicQueue held = newQueue(), other = newQueue();
  Task task;
  task.lengthNs = 1000000;
  mimicEvent otherDone = newEvent(), heldDone = newEvent();
  ASSERT_OK(mimicLaunchHostTask(held, runTask, &task));
  ASSERT_OK(mimicEventRecord(heldDone, held));
  ASSERT_OK(mimicEventRecord(otherDone, other));
  EXPECT_LT(timestampOf(otherDone) + 900000, timestampOf(heldDone));
  ASSERT_OK(mimicQueueDestroy(held));
  ASSERT_OK(mimicQueueDestroy(other));
}

TEST_F(DriverTest, HostTaskRejectsNullFunctionAndBadQueue) {
  Task task;
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicLaunchHostTask(nullptr, nullptr, &task));
  mimicQueue queue = newQueue();
  ASSERT_OK(mimicQueueDestroy(queue));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_QUEUE, mimicLaunchHostTask(queue, runTask, &task));
  EXPECT_FALSE(task.ran);
}

// ---------------------------------------------------------------------------------------------
// mimicMemGetHostView

TEST_F(DriverTest, HostViewShowsSubmittedWorkWithoutWaiting) {
  auto* data = static_cast<uint8_t*>(deviceAlloc(4096));
  ASSERT_OK(mimicMemsetAsync(data, 0x5a, 4096, nullptr));
  void* view = nullptr;
  ASSERT_OK(mimicMemGetHostView(data + 100, 200, &view));
  const auto* bytes = static_cast<const uint8_t*>(view);
  EXPECT_EQ(bytes[0], 0x5a);
  EXPECT_EQ(bytes[199], 0x5a);
  ASSERT_OK(mimicMemFree(data));
}

TEST_F(DriverTest, HostViewWritesAreSeenByLaterCommands) {
  auto* data = static_cast<uint8_t*>(deviceAlloc(64));
  ASSERT_OK(mimicMemsetAsync(data, 0, 64, nullptr));
  void* view = nullptr;
  ASSERT_OK(mimicMemGetHostView(data, 64, &view));
  std::memset(view, 7, 64);
  uint8_t host[64] = {};
  ASSERT_OK(mimicMemcpy(host, data, sizeof host));
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[63], 7);
  ASSERT_OK(mimicMemFree(data));
}

TEST_F(DriverTest, HostViewChecksItsArguments) {
  auto* data = static_cast<uint8_t*>(deviceAlloc(64));
  void* view = reinterpret_cast<void*>(0x1);
  uint8_t host[8];
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemGetHostView(nullptr, 8, &view));
  EXPECT_RESULT(MIMIC_ERROR_NULL_POINTER, mimicMemGetHostView(data, 8, nullptr));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_SIZE, mimicMemGetHostView(data, 0, &view));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemGetHostView(host, 8, &view));
  EXPECT_RESULT(MIMIC_ERROR_OUT_OF_BOUNDS, mimicMemGetHostView(data + 60, 8, &view));
  EXPECT_EQ(view, reinterpret_cast<void*>(0x1));
  ASSERT_OK(mimicMemFree(data));
  EXPECT_RESULT(MIMIC_ERROR_INVALID_DEVICE_POINTER, mimicMemGetHostView(data, 8, &view));
}
