// The slow_link fault (mimicDebugSetFaults, mimic_debug.h): device links at 1/F of their
// bandwidth. Only the bandwidth part of a link transfer grows, so a slowed run takes longer than
// a run at full speed by exactly that part times (F - 1):
//   peer copy of S bytes, alone on its link:        S / B
//   ring AllReduce of b bytes on n ranks:            2(n - 1) (b / n) / B
// B the device-link bandwidth (tiny: 25 GB/s, a quarter of HBM's, so the links are what limits
// every transfer here). Command, HBM, hop and protocol step latencies are unchanged.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>

#include "coll_helpers.h"
#include "mimic/mimic_debug.h"

namespace {

constexpr size_t kMiB = size_t{1} << 20;

std::string errorDetail() {
  const char* detail = nullptr;
  EXPECT_EQ(mimicGetErrorDetail(&detail), MIMIC_SUCCESS);
  return detail ? detail : "";
}

double linkBytesPerNs() {
  mimicDeviceProperties p{};
  EXPECT_EQ(mimicDeviceGetProperties(0, &p), MIMIC_SUCCESS);
  return p.deviceLinkBandwidthGBps;  // GB/s = bytes per ns
}

// Simulated time from the earliest start to the latest end of what `enqueue` puts on `queues`
// (queue i on device i of `devices`).
uint64_t spanNs(const std::vector<int>& devices, const std::vector<mimicQueue>& queues,
                const std::function<void()>& enqueue) {
  const size_t n = queues.size();
  std::vector<mimicEvent> start(n), end(n);
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(mimicEventCreate(devices[i], MIMIC_EVENT_DEFAULT, &start[i]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventCreate(devices[i], MIMIC_EVENT_DEFAULT, &end[i]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicQueueSynchronize(queues[i]), MIMIC_SUCCESS);
  }
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(mimicEventRecord(start[i], queues[i]), MIMIC_SUCCESS);
  enqueue();
  for (size_t i = 0; i < n; ++i) EXPECT_EQ(mimicEventRecord(end[i], queues[i]), MIMIC_SUCCESS);
  uint64_t first = UINT64_MAX, last = 0;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(mimicEventSynchronize(end[i]), MIMIC_SUCCESS);
    uint64_t s = 0, e = 0;
    EXPECT_EQ(mimicEventGetTimestamp(start[i], &s), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventGetTimestamp(end[i], &e), MIMIC_SUCCESS);
    first = std::min(first, s);
    last = std::max(last, e);
    EXPECT_EQ(mimicEventDestroy(start[i]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventDestroy(end[i]), MIMIC_SUCCESS);
  }
  return last - first;
}

// One peer copy of `bytes` from device `from` to device `to`, on a queue of `from`.
uint64_t peerCopyNs(int from, int to, size_t bytes) {
  void* src = devAlloc(from, bytes);
  void* dst = devAlloc(to, bytes);
  mimicQueue queue = nullptr;
  EXPECT_EQ(mimicQueueCreate(from, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue), MIMIC_SUCCESS);
  const uint64_t ns = spanNs({from}, {queue}, [&] {
    EXPECT_EQ(mimicMemcpyPeerAsync(dst, to, src, from, bytes, queue), MIMIC_SUCCESS);
  });
  EXPECT_EQ(mimicQueueDestroy(queue), MIMIC_SUCCESS);
  EXPECT_EQ(mimicMemFree(src), MIMIC_SUCCESS);
  EXPECT_EQ(mimicMemFree(dst), MIMIC_SUCCESS);
  return ns;
}

// Ranks 0 and 1 on devices 0 and 1.
uint64_t allReduceNs(Clique& q, const std::vector<void*>& buffers, size_t bytes) {
  return spanNs({0, 1}, q.queues, [&] {
    EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
    for (int r = 0; r < q.size(); ++r) {
      EXPECT_EQ(mimicAllReduce(buffers[r], buffers[r], bytes / 4, mimicFloat32, mimicSum,
                               q.comms[r], q.queues[r]),
                MIMIC_SUCCESS);
    }
    EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
  });
}

// Starts at full speed, whatever an earlier test in this process planned.
class SlowLinkTest : public CollTest {
 protected:
  void SetUp() override {
    CollTest::SetUp();
    ASSERT_EQ(mimicDebugSetFaults(""), MIMIC_SUCCESS);
  }
};

// Rounding: each flow's end is a whole nanosecond.
constexpr double kSlackNs = 2;

TEST_F(SlowLinkTest, PeerCopyTakesTheLinkPartFTimes) {
  const size_t bytes = 4 * kMiB;
  const double linkNs = double(bytes) / linkBytesPerNs();
  const uint64_t fast = peerCopyNs(0, 1, bytes);
  for (const double factor : {4.0, 2.5}) {
    ASSERT_EQ(mimicDebugSetFaults(("slow_link=" + std::to_string(factor)).c_str()), MIMIC_SUCCESS);
    const uint64_t slow = peerCopyNs(0, 1, bytes);
    std::printf("peer copy of %zu bytes: %llu ns, slow_link=%g: %llu ns\n", bytes,
                (unsigned long long)fast, factor, (unsigned long long)slow);
    EXPECT_NEAR(double(slow) - double(fast), (factor - 1) * linkNs, kSlackNs)
        << "slow_link=" << factor << ": " << fast << " ns at full speed, " << slow << " slowed";
  }
  ASSERT_EQ(mimicDebugSetFaults(""), MIMIC_SUCCESS);
  EXPECT_EQ(peerCopyNs(0, 1, bytes), fast);  // links at full speed again
}

TEST_F(SlowLinkTest, SlowLinkBetweenSlowsOnlyThatPair) {
  const size_t bytes = 1 * kMiB;
  const uint64_t fast01 = peerCopyNs(0, 1, bytes);
  const uint64_t fast23 = peerCopyNs(2, 3, bytes);
  ASSERT_EQ(mimicDebugSetFaults("slow_link=3,slow_link_between=1-0"), MIMIC_SUCCESS);
  EXPECT_NEAR(double(peerCopyNs(0, 1, bytes)) - double(fast01),
              2 * double(bytes) / linkBytesPerNs(), kSlackNs);
  EXPECT_NEAR(double(peerCopyNs(1, 0, bytes)) - double(fast01),
              2 * double(bytes) / linkBytesPerNs(), kSlackNs);
  EXPECT_EQ(peerCopyNs(2, 3, bytes), fast23);
}

TEST_F(SlowLinkTest, TwoRankAllReduceTakesTheLinkPartFTimes) {
  const int n = 2;
  const size_t bytes = 8 * kMiB;
  const double factor = 4;
  // Ring AllReduce with bare data (simple): 2(n - 1) steps, each moving b / n bytes over every
  // rank's link. Forced, so that the slowed links do not change the tuner's choice.
  const double linkNs = 2.0 * (n - 1) * (double(bytes) / n) / linkBytesPerNs();
  setenv("MIMIC_COLL_ALGO", "ring", 1);
  setenv("MIMIC_COLL_PROTO", "simple", 1);
  Clique q(n);
  std::vector<void*> buffers{devAlloc(0, bytes), devAlloc(1, bytes)};
  const uint64_t fast = allReduceNs(q, buffers, bytes);
  ASSERT_EQ(mimicDebugSetFaults("slow_link=4"), MIMIC_SUCCESS);
  const uint64_t slow = allReduceNs(q, buffers, bytes);
  std::printf("AllReduce of %zu bytes on 2 ranks: %llu ns, slow_link=4: %llu ns\n", bytes,
              (unsigned long long)fast, (unsigned long long)slow);
  EXPECT_NEAR(double(slow) - double(fast), (factor - 1) * linkNs, kSlackNs)
      << fast << " ns at full speed, " << slow << " slowed";
  // Reproducible: the same plan gives the same time.
  EXPECT_EQ(allReduceNs(q, buffers, bytes), slow);
  for (void* b : buffers) EXPECT_EQ(mimicMemFree(b), MIMIC_SUCCESS);
}

TEST_F(SlowLinkTest, LinkSlowdownIsReported) {
  double factor = 0;
  ASSERT_EQ(mimicDebugGetLinkSlowdown(&factor), MIMIC_SUCCESS);
  EXPECT_EQ(factor, 1.0);
  ASSERT_EQ(mimicDebugSetFaults("slow_link=2.5,slow_link_between=2-3"), MIMIC_SUCCESS);
  ASSERT_EQ(mimicDebugGetLinkSlowdown(&factor), MIMIC_SUCCESS);
  EXPECT_EQ(factor, 2.5);
  EXPECT_EQ(mimicDebugGetLinkSlowdown(nullptr), MIMIC_ERROR_NULL_POINTER);
}

TEST_F(SlowLinkTest, BadSlowLinkSpecsNameTheKey) {
  const struct {
    const char* spec;
    const char* detail;
  } cases[] = {
      {"slow_link=1", "fault 'slow_link' needs a number above 1"},
      {"slow_link=0.5", "fault 'slow_link' needs a number above 1"},
      {"slow_link=-4", "fault 'slow_link' needs a number above 1"},
      {"slow_link=4x", "not '4x'"},
      {"slow_link=nan", "not 'nan'"},
      {"slow_link=inf", "not 'inf'"},
      {"slow_link=1001", "at most 1000"},
      {"slow_link=", "fault 'slow_link' needs a number"},
      {"slow_link", "fault 'slow_link' needs a value"},
      {"slow_link=2,slow_link_between=1-1", "fault 'slow_link_between' needs two different"},
      {"slow_link=2,slow_link_between=0-4", "each below 4 (the number of devices), not '0-4'"},
      {"slow_link=2,slow_link_between=0", "fault 'slow_link_between' needs two different"},
      {"slow_link=2,slow_link_between=-1-2", "fault 'slow_link_between' needs two different"},
      {"slow_link=2,slow_link_between=0-1x", "not '0-1x'"},
      {"slow_link_between=0-1", "fault 'slow_link_between' needs 'slow_link=F'"},
      {"slow_links=2", "unknown fault 'slow_links'"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(mimicDebugSetFaults(c.spec), MIMIC_ERROR_INVALID_VALUE) << c.spec;
    EXPECT_NE(errorDetail().find(c.detail), std::string::npos) << c.spec << ": " << errorDetail();
  }
  EXPECT_NE(errorDetail().find("slow_link, slow_link_between"), std::string::npos);
}

}  // namespace
