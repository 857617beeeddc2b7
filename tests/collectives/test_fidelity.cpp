// Simulated time of the ring collectives against the alpha-beta(-gamma) model, n = 2, 4 and 8
// on the default preset (a ring of devices), 1 KiB .. 256 MiB of f32 in all, in place; n = 4 on
// tiny (up to 16 MiB: tiny has 64 MiB of HBM per device).
//
// Model, per ring step (each moving c = b / n bytes over every rank's link to its next rank):
//   alpha = command latency (the peer copy's launch) + HBM latency + one hop of link latency
//   beta  = c / B, B the device-link bandwidth per direction
// and, in the reduce-scatter steps only, the reduction kernel that follows the copy on the
// receiving queue:
//   gamma = command latency + the kernel's run time, taken from mimicQueueGetKernelCounters of
//           that kernel (the compute model is validated by the engine tests, not here).
//   AllReduce      t = 2(n - 1)(alpha + c / B) + (n - 1) gamma   busbw = b / t x 2(n - 1) / n
//   ReduceScatter  t = (n - 1)(alpha + c / B + gamma)             busbw = b / t x (n - 1) / n
//   AllGather      t = (n - 1)(alpha + c / B)                     busbw = b / t x (n - 1) / n
// b is the whole buffer: AllReduce's count x 4, ReduceScatter's send, AllGather's recv. The
// test records events around the group on every rank's queue and takes the span from the
// earliest start to the latest end. AllReduce of 256 MiB on 8 devices takes 2.6 GiB of host
// memory and about 5 s; the ten cases take about 17 s together under ctest.
#include <algorithm>
#include <cstdio>

#include "coll_helpers.h"

namespace {

struct Measured {
  double ns;
  double kernelNs;  // run time of the last reduction kernel (rank 0)
};

enum class Kind { AllReduce, ReduceScatter, AllGather };
const char* const kNames[] = {"allreduce", "reduce_scatter", "allgather"};

// One collective over b bytes of f32 in buffers (in place: rank r's slice is its part).
Measured timeCollective(Clique& q, std::vector<void*>& buffers, Kind kind, size_t bytes) {
  const int n = q.size();
  const size_t count = bytes / 4, part = count / n;
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
    float* all = static_cast<float*>(buffers[r]);
    float* mine = all + size_t(r) * part;
    mimicResult result = MIMIC_SUCCESS;
    if (kind == Kind::AllReduce) {
      result = mimicAllReduce(all, all, count, mimicFloat32, mimicSum, q.comms[r], q.queues[r]);
    } else if (kind == Kind::ReduceScatter) {
      result = mimicReduceScatter(all, mine, part, mimicFloat32, mimicSum, q.comms[r], q.queues[r]);
    } else {
      result = mimicAllGather(mine, all, part, mimicFloat32, q.comms[r], q.queues[r]);
    }
    EXPECT_EQ(result, MIMIC_SUCCESS);
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
  mimicKernelCounters counters{};  // AllGather runs no kernel
  if (kind != Kind::AllGather) {
    EXPECT_EQ(mimicQueueGetKernelCounters(q.queues[0], &counters), MIMIC_SUCCESS);
  }
  return {double(last - first), double(counters.endNs - counters.startNs)};
}

void checkRing(const char* preset, int n, size_t maxBytes, Kind kind = Kind::AllReduce) {
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
  std::printf("ring %s, n = %d, f32, preset %s: alpha %.0f ns, B %.0f GB/s\n", kNames[int(kind)], n,
              p.preset, alpha, bandwidth);
  std::printf("%10s %10s %10s %8s %10s %8s %10s\n", "bytes", "sim us", "model us", "error",
              "gamma us", "algbw", "busbw GB/s");
  for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
    const Measured m = timeCollective(q, buffers, kind, bytes);
    const double step = alpha + double(bytes) / n / bandwidth;
    const double gamma = kind == Kind::AllGather ? 0.0 : double(p.commandLatencyNs) + m.kernelNs;
    const double model = (kind == Kind::AllReduce ? 2 : 1) * (n - 1) * step + (n - 1) * gamma;
    const double algbw = double(bytes) / m.ns;
    const double busbw = algbw * (kind == Kind::AllReduce ? 2 : 1) * (n - 1) / n;
    std::printf("%10zu %10.2f %10.2f %7.3f%% %10.2f %8.2f %10.2f\n", bytes, m.ns / 1e3, model / 1e3,
                100.0 * (m.ns - model) / model, gamma / 1e3, algbw, busbw);
    EXPECT_NEAR(m.ns, model, 0.05 * model)
        << kNames[int(kind)] << ", " << bytes << " bytes on " << n << " ranks";
  }
  for (void* b : buffers) EXPECT_EQ(mimicMemFree(b), MIMIC_SUCCESS);
}

constexpr size_t kMiB = size_t{1} << 20;

TEST(Fidelity, RingAllReduce2) {
  checkRing("default", 2, 256 * kMiB);
}
TEST(Fidelity, RingAllReduce4) {
  checkRing("default", 4, 256 * kMiB);
}
TEST(Fidelity, RingAllReduce8) {
  checkRing("default", 8, 256 * kMiB);
}
TEST(Fidelity, RingReduceScatter2) {
  checkRing("default", 2, 256 * kMiB, Kind::ReduceScatter);
}
TEST(Fidelity, RingReduceScatter4) {
  checkRing("default", 4, 256 * kMiB, Kind::ReduceScatter);
}
TEST(Fidelity, RingReduceScatter8) {
  checkRing("default", 8, 256 * kMiB, Kind::ReduceScatter);
}
TEST(Fidelity, RingAllGather2) {
  checkRing("default", 2, 256 * kMiB, Kind::AllGather);
}
TEST(Fidelity, RingAllGather4) {
  checkRing("default", 4, 256 * kMiB, Kind::AllGather);
}
TEST(Fidelity, RingAllGather8) {
  checkRing("default", 8, 256 * kMiB, Kind::AllGather);
}
// Other figures (25 GB/s links, 500 ns hops, 1 us commands, 100 GB/s HBM), within tiny's 64 MiB.
TEST(Fidelity, RingAllReduceTiny4) {
  checkRing("tiny", 4, 16 * kMiB);
}

}  // namespace
