// Simulated time against the preset's own analytic model (tiny preset).
#include <algorithm>
#include <vector>

#include "driver_helpers.h"

namespace {

class TimingTest : public DriverTest {
 protected:
  void SetUp() override {
    DriverTest::SetUp();
    props = propertiesOf(0);
  }

  // Simulated ns between two records around one copy on `queue`.
  uint64_t timeCopy(void* dst, const void* src, size_t bytes, mimicQueue queue = nullptr) {
    mimicEvent start = newEvent(), end = newEvent();
    EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(start, queue));
    EXPECT_RESULT(MIMIC_SUCCESS, mimicMemcpyAsync(dst, src, bytes, queue));
    EXPECT_RESULT(MIMIC_SUCCESS, mimicEventRecord(end, queue));
    uint64_t ns = timestampOf(end) - timestampOf(start);
    mimicEventDestroy(start);
    mimicEventDestroy(end);
    return ns;
  }

  double pinnedModelNs(size_t bytes) const {
    return double(props.commandLatencyNs + props.hostLinkLatencyNs) +
           double(bytes) / props.hostLinkBandwidthGBps;
  }

  // Simulated ns from one start until each of two copies of `bytes`, started together on queues
  // of their own, completes.
  struct TwoCopyTimes {
    uint64_t first = 0, second = 0;
  };
  void timeTwoCopies(void* dst1, const void* src1, void* dst2, const void* src2, size_t bytes,
                     TwoCopyTimes* ns) {
    mimicQueue q1 = newQueue(), q2 = newQueue();
    mimicEvent start = newEvent(), end1 = newEvent(), end2 = newEvent();
    ASSERT_OK(mimicEventRecord(start, q1));
    ASSERT_OK(mimicQueueWaitEvent(q2, start));
    ASSERT_OK(mimicMemcpyAsync(dst1, src1, bytes, q1));
    ASSERT_OK(mimicMemcpyAsync(dst2, src2, bytes, q2));
    ASSERT_OK(mimicEventRecord(end1, q1));
    ASSERT_OK(mimicEventRecord(end2, q2));
    const uint64_t t0 = timestampOf(start);
    ns->first = timestampOf(end1) - t0;
    ns->second = timestampOf(end2) - t0;
  }

  mimicDeviceProperties props{};
};

TEST_F(TimingTest, PinnedHostToDeviceIsLatencyPlusBytesOverBandwidth) {
  const size_t maxBytes = 32u << 20;
  void* host = pinnedAlloc(maxBytes);
  void* dev = deviceAlloc(maxBytes);
  for (size_t bytes : {size_t(4096), size_t(1) << 20, maxBytes}) {
    EXPECT_WITHIN_PERCENT(timeCopy(dev, host, bytes), pinnedModelNs(bytes), 1) << bytes;
  }
}

TEST_F(TimingTest, PinnedDeviceToHostIsLatencyPlusBytesOverBandwidth) {
  const size_t bytes = 16u << 20;
  void* host = pinnedAlloc(bytes);
  void* dev = deviceAlloc(bytes);
  EXPECT_WITHIN_PERCENT(timeCopy(host, dev, bytes), pinnedModelNs(bytes), 1);
}

TEST_F(TimingTest, TwoCopiesOnOneHostLinkShareItsBandwidth) {
  const size_t bytes = 16u << 20;
  char* host = static_cast<char*>(pinnedAlloc(2 * bytes));
  char* dev = static_cast<char*>(deviceAlloc(2 * bytes));
  TwoCopyTimes ns;
  ASSERT_NO_FATAL_FAILURE(timeTwoCopies(dev, host, dev + bytes, host + bytes, bytes, &ns));
  const double shared = double(props.commandLatencyNs + props.hostLinkLatencyNs) +
                        2.0 * double(bytes) / props.hostLinkBandwidthGBps;
  EXPECT_WITHIN_PERCENT(ns.first, shared, 1);
  EXPECT_WITHIN_PERCENT(ns.second, shared, 1);
}

TEST_F(TimingTest, OppositeDirectionsDoNotShareTheHostLink) {
  const size_t bytes = 16u << 20;
  char* host = static_cast<char*>(pinnedAlloc(2 * bytes));
  char* dev = static_cast<char*>(deviceAlloc(2 * bytes));
  TwoCopyTimes ns;
  ASSERT_NO_FATAL_FAILURE(timeTwoCopies(dev, host, host + bytes, dev + bytes, bytes, &ns));
  EXPECT_WITHIN_PERCENT(ns.first, pinnedModelNs(bytes), 1);
  EXPECT_WITHIN_PERCENT(ns.second, pinnedModelNs(bytes), 1);
}

TEST_F(TimingTest, PageableCopiesAreStagedAtTheStagingBandwidth) {
  const size_t bytes = 16u << 20;
  std::vector<char> pageable(bytes, 1);
  void* dev = deviceAlloc(bytes);
  // tiny: staging 5 GB/s below the 10 GB/s link, 256 KiB chunks (sim/presets/tiny.preset).
  const double staging = 5.0, chunk = 256 << 10;
  const double model = double(props.commandLatencyNs + props.hostLinkLatencyNs) + chunk / staging +
                       double(bytes) / staging;
  EXPECT_WITHIN_PERCENT(timeCopy(dev, pageable.data(), bytes), model, 1);
  EXPECT_WITHIN_PERCENT(timeCopy(pageable.data(), dev, bytes), model, 1);
  EXPECT_GT(timeCopy(dev, pageable.data(), bytes), 1.5 * pinnedModelNs(bytes));
}

TEST_F(TimingTest, PageableDeviceToHostReturnsOnlyWhenComplete) {
  const size_t bytes = 8u << 20;
  std::vector<char> pageable(bytes);
  void* dev = deviceAlloc(bytes);
  mimicQueue q = newQueue();
  uint64_t before = 0, after = 0;
  ASSERT_OK(mimicGetSimTime(&before));
  ASSERT_OK(mimicMemcpyAsync(pageable.data(), dev, bytes, q));
  ASSERT_OK(mimicGetSimTime(&after));
  EXPECT_GE(after - before, uint64_t(double(bytes) / props.hostLinkBandwidthGBps));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(TimingTest, PinnedDeviceToHostReturnsBeforeCompletion) {
  const size_t bytes = 8u << 20;
  void* host = pinnedAlloc(bytes);
  void* dev = deviceAlloc(bytes);
  mimicQueue q = newQueue();
  uint64_t before = 0, after = 0;
  ASSERT_OK(mimicGetSimTime(&before));
  ASSERT_OK(mimicMemcpyAsync(host, dev, bytes, q));
  ASSERT_OK(mimicGetSimTime(&after));
  EXPECT_EQ(after, before);
  EXPECT_RESULT(MIMIC_NOT_READY, mimicQueueQuery(q));
  ASSERT_OK(mimicQueueSynchronize(q));
  EXPECT_RESULT(MIMIC_SUCCESS, mimicQueueQuery(q));
}

TEST_F(TimingTest, PeerCopyIsLinkLatencyPlusBytesOverLinkBandwidth) {
  const size_t bytes = 16u << 20;
  void* src = deviceAlloc(bytes, 0);
  void* dst = deviceAlloc(bytes, 1);
  const double model =
      double(props.commandLatencyNs + props.hbmLatencyNs + props.deviceLinkLatencyNs) +
      double(bytes) / props.deviceLinkBandwidthGBps;
  EXPECT_WITHIN_PERCENT(timeCopy(dst, src, bytes, newQueue(0)), model, 1);
}

TEST_F(TimingTest, MemsetRunsAtHbmBandwidth) {
  const size_t bytes = 32u << 20;
  void* dev = deviceAlloc(bytes);
  mimicEvent start = newEvent(), end = newEvent();
  ASSERT_OK(mimicEventRecord(start, nullptr));
  ASSERT_OK(mimicMemsetAsync(dev, 0, bytes, nullptr));
  ASSERT_OK(mimicEventRecord(end, nullptr));
  const double model =
      double(props.commandLatencyNs + props.hbmLatencyNs) + double(bytes) / props.hbmBandwidthGBps;
  EXPECT_WITHIN_PERCENT(timestampOf(end) - timestampOf(start), model, 1);
}

TEST_F(TimingTest, ElapsedTimeMatchesTimestamps) {
  const size_t bytes = 4u << 20;
  void* host = pinnedAlloc(bytes);
  void* dev = deviceAlloc(bytes);
  mimicEvent start = newEvent(), end = newEvent();
  ASSERT_OK(mimicEventRecord(start, nullptr));
  ASSERT_OK(mimicMemcpyAsync(dev, host, bytes, nullptr));
  ASSERT_OK(mimicEventRecord(end, nullptr));
  uint64_t t0 = timestampOf(start), t1 = timestampOf(end);
  float ms = 0;
  ASSERT_OK(mimicEventElapsedTime(&ms, start, end));
  EXPECT_NEAR(ms, double(t1 - t0) / 1e6, 1e-6);
  EXPECT_WITHIN_PERCENT(ms * 1e6, pinnedModelNs(bytes), 1);
}

TEST_F(TimingTest, CopiesBeyondTheCopyEnginesWaitForOne) {
  const size_t bytes = 4u << 20;
  const int copies = props.copyEngines + 1;
  void* dev = deviceAlloc(bytes * copies);
  std::vector<mimicQueue> queues;
  std::vector<mimicEvent> ends;
  mimicEvent start = newEvent();
  ASSERT_OK(mimicEventRecord(start, nullptr));
  // Device-to-device copies: HBM is shared by all, so the engine limit shows as a later start.
  for (int i = 0; i < copies; ++i) {
    queues.push_back(newQueue());
    ends.push_back(newEvent());
    ASSERT_OK(mimicQueueWaitEvent(queues[i], start));
  }
  for (int i = 0; i < copies; ++i) {
    char* base = static_cast<char*>(dev);
    ASSERT_OK(mimicMemcpyAsync(base + i * bytes, base + ((i + 1) % copies) * bytes, bytes / 2,
                               queues[i]));
    ASSERT_OK(mimicEventRecord(ends[i], queues[i]));
  }
  // All copies wanted to start together; one had to wait until an engine came free, then ran
  // alone with all of HBM.
  uint64_t t0 = timestampOf(start);
  std::vector<uint64_t> done;
  for (mimicEvent e : ends) done.push_back(timestampOf(e) - t0);
  std::sort(done.begin(), done.end());
  const double halfCopy = double(bytes / 2);
  const double together = double(props.commandLatencyNs + props.hbmLatencyNs) +
                          halfCopy * 2 * props.copyEngines / props.hbmBandwidthGBps;
  EXPECT_WITHIN_PERCENT(done.front(), together, 1);
  EXPECT_EQ(done[props.copyEngines - 1], done.front());
  EXPECT_WITHIN_PERCENT(done.back(),
                        together + props.hbmLatencyNs + halfCopy * 2 / props.hbmBandwidthGBps, 1);
}

}  // namespace
