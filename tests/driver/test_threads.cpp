// Many host threads at once: nothing lost, no deadlock, data intact.
#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "driver_helpers.h"

namespace {

constexpr int kThreads = 8;
constexpr int kIterations = 2000;
constexpr size_t kBytes = 4096;

void countCall(void* counter) {
  static_cast<std::atomic<int>*>(counter)->fetch_add(1);
}

struct Failure {
  std::atomic<int> count{0};
  std::atomic<int> firstCode{MIMIC_SUCCESS};
  void note(mimicResult r) {
    if (r == MIMIC_SUCCESS || r == MIMIC_NOT_READY) return;
    int expected = MIMIC_SUCCESS;
    firstCode.compare_exchange_strong(expected, r);
    ++count;
  }
};

void worker(int id, mimicQueue shared, std::atomic<int>* calls, Failure* failure,
            std::atomic<int>* mismatches) {
  const int device = id % 2;
  mimicQueue own = nullptr;
  failure->note(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &own));
  void* dev = nullptr;
  void* host = nullptr;
  failure->note(mimicMemAlloc(device, kBytes, &dev));
  failure->note(mimicHostAlloc(kBytes, &host));
  mimicEvent event = nullptr;
  failure->note(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &event));
  for (int i = 0; i < kIterations; ++i) {
    const int value = (id * 31 + i) & 0xff;
    failure->note(mimicMemsetAsync(dev, value, kBytes, own));
    failure->note(mimicEventRecord(event, own));
    failure->note(mimicMemcpyAsync(host, dev, kBytes, own));
    failure->note(mimicLaunchHostFunc(own, countCall, calls));
    if (device == 0) {
      failure->note(mimicQueueWaitEvent(shared, event));
      failure->note(mimicLaunchHostFunc(shared, countCall, calls));
    }
    if (i % 50 == 0) {
      void* scratch = nullptr;
      failure->note(mimicMemAlloc(device, 512, &scratch));
      failure->note(mimicMemFree(scratch));
      failure->note(mimicQueueQuery(own));
    }
    if (i % 100 == 99) {
      failure->note(mimicQueueSynchronize(own));
      const unsigned char* bytes = static_cast<const unsigned char*>(host);
      if (bytes[0] != value || bytes[kBytes - 1] != value) ++*mismatches;
    }
  }
  failure->note(mimicQueueSynchronize(own));
  failure->note(mimicEventDestroy(event));
  failure->note(mimicQueueDestroy(own));
  failure->note(mimicMemFree(dev));
  failure->note(mimicHostFree(host));
}

TEST_F(DriverTest, EightThreadsLoseNoCommandAndDoNotDeadlock) {
  mimicQueue shared = newQueue(0);
  std::atomic<int> calls{0};
  std::atomic<int> mismatches{0};
  Failure failure;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back(worker, t, shared, &calls, &failure, &mismatches);
  }
  for (auto& t : threads) t.join();
  ASSERT_OK(mimicDeviceSynchronize(0));
  ASSERT_OK(mimicDeviceSynchronize(1));
  EXPECT_EQ(failure.count.load(), 0)
      << "first failure: " << mimicGetErrorName(mimicResult(failure.firstCode.load()));
  EXPECT_EQ(mismatches.load(), 0);
  const int onDevice0 = (kThreads + 1) / 2;
  EXPECT_EQ(calls.load(), kThreads * kIterations + onDevice0 * kIterations);
  size_t freeBytes = 0, total = 0;
  ASSERT_OK(mimicMemGetInfo(0, &freeBytes, &total));
  EXPECT_EQ(freeBytes, total);
}

}  // namespace
