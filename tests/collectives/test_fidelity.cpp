// Simulated time of the ring AllReduce against the alpha-beta(-gamma) model, n = 2, 4 and 8 on
// the default preset (a ring of devices), 1 KiB .. 64 MiB of f32, in place; n = 4 on tiny.
//
// Model, per ring step (2(n - 1) of them, each moving count/n elements = b bytes per link):
//   alpha = command latency (the peer copy's launch) + HBM latency + one hop of link latency
//   beta  = b / B, B the device-link bandwidth per direction
// and, in the n - 1 reduce-scatter steps only, the reduction kernel that follows the copy on
// the receiving queue:
//   gamma = command latency + the kernel's run time, taken from mimicQueueGetKernelCounters of
//           that kernel (the compute model is validated by the engine tests, not here).
//   t = 2(n - 1)(alpha + b / B) + (n - 1) gamma
// The test records events around the group on every rank's queue and takes the span from the
// earliest start to the latest end.
#include <algorithm>
#include <cstdio>

#include "coll_helpers.h"

namespace {

struct Measured {
  double ns;
  double kernelNs;  // run time of the last reduction kernel (rank 0)
};

Measured timeAllReduce(Clique& q, std::vector<void*>& buffers, size_t count) {
  const int n = q.size();
  std::vector<mimicEvent> start(n), end(n);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &start[r]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &end[r]), MIMIC_SUCCESS);
  }
  // Everything queued before (the set-up copies) is finished first, so that only the
  // collective is timed.
  q.synchronize();
  for (int r = 0; r < n; ++r) EXPECT_EQ(mimicEventRecord(start[r], q.queues[r]), MIMIC_SUCCESS);
  EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(mimicAllReduce(buffers[r], buffers[r], count, mimicFloat32, mimicSum, q.comms[r],
                             q.queues[r]),
              MIMIC_SUCCESS);
  }
  EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
  for (int r = 0; r < n; ++r) EXPECT_EQ(mimicEventRecord(end[r], q.queues[r]), MIMIC_SUCCESS);
  uint64_t first = UINT64_MAX, last = 0;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(mimicEventSynchronize(end[r]), MIMIC_SUCCESS);
    uint64_t s = 0, e = 0;
    EXPECT_EQ(mimicEventGetTimestamp(start[r], &s), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventGetTimestamp(end[r], &e), MIMIC_SUCCESS);
    first = std::min(first, s);
    last = std::max(last, e);
    EXPECT_EQ(mimicEventDestroy(start[r]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventDestroy(end[r]), MIMIC_SUCCESS);
  }
  mimicKernelCounters counters{};
  EXPECT_EQ(mimicQueueGetKernelCounters(q.queues[0], &counters), MIMIC_SUCCESS);
  return {double(last - first), double(counters.endNs - counters.startNs)};
}

void checkRing(const char* preset, int n, size_t maxBytes) {
  ASSERT_EQ(mimicInitWithPreset(0, preset, ("system.num_devices=" + std::to_string(n)).c_str()),
            MIMIC_SUCCESS);
  setenv("MIMIC_COLL_ALGO", "ring", 1);
  mimicDeviceProperties p{};
  ASSERT_EQ(mimicDeviceGetProperties(0, &p), MIMIC_SUCCESS);
  ASSERT_EQ(p.deviceLinkTopology, MIMIC_TOPOLOGY_RING);
  const double alpha = double(p.commandLatencyNs + p.hbmLatencyNs + p.deviceLinkLatencyNs);
  const double bandwidth = p.deviceLinkBandwidthGBps;  // bytes per ns

  Clique q(n);
  std::vector<void*> buffers(n);
  for (int r = 0; r < n; ++r) buffers[r] = devAlloc(r, maxBytes);
  std::printf("ring allreduce, n = %d, f32, preset %s: alpha %.0f ns, B %.0f GB/s\n", n, p.preset,
              alpha, bandwidth);
  std::printf("%10s %10s %10s %8s %10s %8s %10s\n", "bytes", "sim us", "model us", "error",
              "gamma us", "algbw", "busbw GB/s");
  for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
    const size_t count = bytes / 4;
    const Measured m = timeAllReduce(q, buffers, count);
    const double chunk = double(bytes) / n;
    const double gamma = double(p.commandLatencyNs) + m.kernelNs;
    const double model = 2.0 * (n - 1) * (alpha + chunk / bandwidth) + (n - 1) * gamma;
    const double algbw = double(bytes) / m.ns;
    std::printf("%10zu %10.2f %10.2f %7.3f%% %10.2f %8.2f %10.2f\n", bytes, m.ns / 1e3, model / 1e3,
                100.0 * (m.ns - model) / model, gamma / 1e3, algbw, algbw * 2.0 * (n - 1) / n);
    EXPECT_NEAR(m.ns, model, 0.05 * model) << bytes << " bytes on " << n << " ranks";
  }
  for (void* b : buffers) EXPECT_EQ(mimicMemFree(b), MIMIC_SUCCESS);
}

constexpr size_t kMiB = size_t{1} << 20;

TEST(Fidelity, RingAllReduce2) {
  checkRing("default", 2, 64 * kMiB);
}
TEST(Fidelity, RingAllReduce4) {
  checkRing("default", 4, 64 * kMiB);
}
TEST(Fidelity, RingAllReduce8) {
  checkRing("default", 8, 64 * kMiB);
}
// Other figures (25 GB/s links, 500 ns hops, 1 us commands, 100 GB/s HBM), within tiny's 64 MiB.
TEST(Fidelity, RingAllReduceTiny4) {
  checkRing("tiny", 4, 16 * kMiB);
}

}  // namespace
