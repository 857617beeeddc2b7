// Contention between the collectives of different cliques on the default preset (4 devices on a
// ring). sim/topology.cpp gives link i (i -> i+1 mod n) one flow-network resource per direction
// and routes a transfer the shorter way round (forward on a tie); sim/flow_network.cpp shares a
// resource's bandwidth max-min fairly between the flows crossing it. A 2-rank ring AllReduce on
// devices {a, b} (forced: MIMIC_COLL_ALGO=ring, MIMIC_COLL_PROTO=simple) sends a -> b and
// b -> a, so it loads exactly the resources of those routes, and the HBM of both devices.
//
// Every clique gets its own queues. With host.submit_ns = 0 every command submitted between two
// synchronisations arrives at the same simulated time; on top of that all the queues wait for a
// gate (a host function on a queue of its own), and a clique's time runs from the gate to the
// last of its queues' end events. (Not a host task: the simulation runs those eagerly, ahead of
// the host's clock, so commands submitted after one would start at a racy simulated time.)
#include <algorithm>
#include <cstdio>

#include "coll_helpers.h"

namespace {

constexpr size_t kBytes = size_t{4} << 20;  // 4 MiB of f32: 42 us of link time on 2 ranks

struct Ranks {
  explicit Ranks(std::vector<int> devs) : devices(devs), comms(devs.size()), queues(devs.size()) {
    EXPECT_EQ(mimicCommInitAll(comms.data(), int(devs.size()), devs.data()), MIMIC_SUCCESS)
        << collDetail();
    for (size_t r = 0; r < devs.size(); ++r) {
      EXPECT_EQ(mimicQueueCreate(devs[r], 0, MIMIC_QUEUE_PRIORITY_LOW, &queues[r]), MIMIC_SUCCESS);
      buffers.push_back(devAlloc(devs[r], kBytes));
      EXPECT_EQ(mimicEventCreate(devs[r], MIMIC_EVENT_DEFAULT, &ends.emplace_back()),
                MIMIC_SUCCESS);
    }
  }
  ~Ranks() {
    for (size_t r = 0; r < devices.size(); ++r) {
      EXPECT_EQ(mimicQueueSynchronize(queues[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicCommDestroy(comms[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicQueueDestroy(queues[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicMemFree(buffers[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicEventDestroy(ends[r]), MIMIC_SUCCESS);
    }
  }
  std::vector<int> devices;
  std::vector<mimicComm> comms;
  std::vector<mimicQueue> queues;
  std::vector<void*> buffers;
  std::vector<mimicEvent> ends;
};

void nothing(void*) {}

class Contention : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(mimicInitWithPreset(0, "default", "system.num_devices=4,host.submit_ns=0"),
              MIMIC_SUCCESS);
    setenv("MIMIC_COLL_ALGO", "ring", 1);
    setenv("MIMIC_COLL_PROTO", "simple", 1);
    mimicDeviceProperties p{};
    ASSERT_EQ(mimicDeviceGetProperties(0, &p), MIMIC_SUCCESS);
    ASSERT_EQ(p.deviceLinkTopology, MIMIC_TOPOLOGY_RING);
    bandwidth_ = p.deviceLinkBandwidthGBps;  // bytes per ns
    ASSERT_EQ(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &gateQueue_), MIMIC_SUCCESS);
    ASSERT_EQ(mimicEventCreate(0, MIMIC_EVENT_DEFAULT, &gate_), MIMIC_SUCCESS);
  }
  void TearDown() override {
    unsetenv("MIMIC_COLL_ALGO");
    unsetenv("MIMIC_COLL_PROTO");
    EXPECT_EQ(mimicEventDestroy(gate_), MIMIC_SUCCESS);
    EXPECT_EQ(mimicQueueDestroy(gateQueue_), MIMIC_SUCCESS);
  }

  // One AllReduce of kBytes on every clique, all released by the same gate; the simulated ns
  // each clique took.
  std::vector<double> run(const std::vector<Ranks*>& cliques) {
    for (Ranks* c : cliques)
      for (mimicQueue q : c->queues) EXPECT_EQ(mimicQueueSynchronize(q), MIMIC_SUCCESS);
    EXPECT_EQ(mimicLaunchHostFunc(gateQueue_, nothing, nullptr), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventRecord(gate_, gateQueue_), MIMIC_SUCCESS);
    for (Ranks* c : cliques) {
      for (mimicQueue q : c->queues) EXPECT_EQ(mimicQueueWaitEvent(q, gate_), MIMIC_SUCCESS);
      EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
      for (size_t r = 0; r < c->devices.size(); ++r) {
        EXPECT_EQ(mimicAllReduce(c->buffers[r], c->buffers[r], kBytes / 4, mimicFloat32, mimicSum,
                                 c->comms[r], c->queues[r]),
                  MIMIC_SUCCESS);
      }
      EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
      for (size_t r = 0; r < c->devices.size(); ++r)
        EXPECT_EQ(mimicEventRecord(c->ends[r], c->queues[r]), MIMIC_SUCCESS);
    }
    uint64_t start = 0;
    EXPECT_EQ(mimicEventSynchronize(gate_), MIMIC_SUCCESS);
    EXPECT_EQ(mimicEventGetTimestamp(gate_, &start), MIMIC_SUCCESS);
    std::vector<double> ns;
    for (Ranks* c : cliques) {
      uint64_t last = 0;
      for (mimicEvent e : c->ends) {
        uint64_t t = 0;
        EXPECT_EQ(mimicEventSynchronize(e), MIMIC_SUCCESS);
        EXPECT_EQ(mimicEventGetTimestamp(e, &t), MIMIC_SUCCESS);
        last = std::max(last, t);
      }
      ns.push_back(double(last - start));
    }
    return ns;
  }

  // Each clique alone, then all of them together.
  struct Times {
    double alone, together;
  };
  std::vector<Times> compare(const std::vector<Ranks*>& cliques, const char* what) {
    std::vector<Times> times;
    for (Ranks* c : cliques) times.push_back({run({c})[0], 0});
    const std::vector<double> together = run(cliques);
    for (size_t i = 0; i < cliques.size(); ++i) {
      times[i].together = together[i];
      std::printf("%-24s clique %zu: alone %8.2f us, concurrent %8.2f us (%.4fx)\n", what, i,
                  times[i].alone / 1e3, together[i] / 1e3, together[i] / times[i].alone);
    }
    return times;
  }
  // The link part of a ring AllReduce on n ranks: 2(n - 1) copies of kBytes / n at B.
  double linkNs(int n) const { return 2.0 * (n - 1) * double(kBytes) / n / bandwidth_; }

  mimicQueue gateQueue_ = nullptr;
  mimicEvent gate_ = nullptr;
  double bandwidth_ = 0;
};

// {0,1} uses 0->1 and 1->0, {2,3} uses 2->3 and 3->2: no resource in common (HBM is per
// device), so neither slows the other at all.
TEST_F(Contention, DisjointLinksRunAtFullSpeed) {
  Ranks a({0, 1}), b({2, 3});
  for (const Times& t : compare({&a, &b}, "{0,1} + {2,3}"))
    EXPECT_NEAR(t.together, t.alone, 0.01 * t.alone);
}

// Two communicators on the same devices {0,1}: both directions of link 0 carry both cliques'
// transfers at half the bandwidth each, so the link time doubles; the latencies do not grow.
TEST_F(Contention, SharedLinkHalvesBandwidth) {
  Ranks a({0, 1}), b({0, 1});
  for (const Times& t : compare({&a, &b}, "{0,1} + {0,1}")) {
    EXPECT_GE(t.together, 1.5 * t.alone);
    EXPECT_NEAR(t.together, t.alone + linkNs(2), 0.02 * t.together);
  }
}

// Multi-hop routes: on a ring of 4, devices 2 apart are routed forward (a tie), so {0,2} sends
// over 0->1->2 and 2->3->0, {1,3} over 1->2->3 and 3->0->1: every forward link carries one
// transfer of each clique (the reverse links none).
TEST_F(Contention, SharedMultiHopRoutes) {
  Ranks a({0, 2}), b({1, 3});
  for (const Times& t : compare({&a, &b}, "{0,2} + {1,3} (2 hops)")) {
    EXPECT_GE(t.together, 1.5 * t.alone);
    EXPECT_NEAR(t.together, t.alone + linkNs(2), 0.01 * t.together);
  }
}

// {0,1} and {1,2} share device 1 but no link (0<->1 and 1<->2 are different resources): only
// device 1's HBM carries both, far below its bandwidth, so neither slows down; sharing a link
// would add linkNs(2), 42 us.
TEST_F(Contention, SharedDeviceOnly) {
  Ranks a({0, 1}), b({1, 2});
  for (const Times& t : compare({&a, &b}, "{0,1} + {1,2}")) {
    EXPECT_NEAR(t.together, t.alone, 0.01 * t.alone);
  }
}

// A ring follows the devices, not the rank order (as NCCL builds its rings from the topology):
// ranks {0,3,2,1} still send 0->1->2->3->0, so the two cliques share every forward link and
// each takes the link time of the other on top of its own.
TEST_F(Contention, RingsFollowTheDevicesNotTheRankOrder) {
  Ranks forward({0, 1, 2, 3}), shuffled({0, 3, 2, 1});
  for (const Times& t : compare({&forward, &shuffled}, "ranks 0123 + ranks 0321")) {
    EXPECT_NEAR(t.together, t.alone + linkNs(4), 0.02 * t.together);
  }
}

}  // namespace
