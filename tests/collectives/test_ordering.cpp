// Collectives are ordered like any other command: after earlier work on their queues (of every
// rank, since every rank's data is needed), before later work, and across queues of one
// communicator. Also: the algorithm switch and a clique whose size is not a power of two.
#include <cstdlib>

#include "coll_cases.h"

namespace {

using Ordering = CollTest;

uint64_t stamp(mimicEvent e) {
  uint64_t ns = 0;
  EXPECT_EQ(mimicEventSynchronize(e), MIMIC_SUCCESS);
  EXPECT_EQ(mimicEventGetTimestamp(e, &ns), MIMIC_SUCCESS);
  return ns;
}

mimicEvent recordOn(int device, mimicQueue queue) {
  mimicEvent e = nullptr;
  EXPECT_EQ(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &e), MIMIC_SUCCESS);
  EXPECT_EQ(mimicEventRecord(e, queue), MIMIC_SUCCESS);
  return e;
}

constexpr size_t kSlowBytes = size_t{8} << 20;  // about 0.8 ms over tiny's 10 GB/s host link

TEST_F(Ordering, WaitsForEarlierWorkOfEveryRank) {
  Clique q(2);
  const size_t count = 256;
  void* host = nullptr;
  ASSERT_EQ(mimicHostAlloc(kSlowBytes, &host), MIMIC_SUCCESS);
  std::memset(host, 0, kSlowBytes);
  static_cast<int32_t*>(host)[0] = 5;
  void* send[2] = {devAlloc(0, kSlowBytes), devAlloc(1, kSlowBytes)};
  void* recv[2] = {devAlloc(0, count * 4), devAlloc(1, count * 4)};
  EXPECT_EQ(mimicMemsetAsync(send[0], 0, count * 4, q.queues[0]), MIMIC_SUCCESS);
  // Rank 1's input arrives by a slow copy queued just before the collective.
  EXPECT_EQ(mimicMemcpyAsync(send[1], host, kSlowBytes, q.queues[1]), MIMIC_SUCCESS);
  mimicEvent copied = recordOn(1, q.queues[1]);
  ASSERT_COLL_OK(mimicGroupStart());
  for (int r = 0; r < 2; ++r) {
    ASSERT_COLL_OK(
        mimicAllReduce(send[r], recv[r], count, mimicInt32, mimicSum, q.comms[r], q.queues[r]));
  }
  ASSERT_COLL_OK(mimicGroupEnd());
  mimicEvent end0 = recordOn(0, q.queues[0]), end1 = recordOn(1, q.queues[1]);
  EXPECT_GT(stamp(end0), stamp(copied));
  EXPECT_GT(stamp(end1), stamp(copied));
  int32_t first = 0;
  EXPECT_EQ(mimicMemcpy(&first, recv[0], 4), MIMIC_SUCCESS);
  EXPECT_EQ(first, 5);
  EXPECT_EQ(mimicHostFree(host), MIMIC_SUCCESS);
}

TEST_F(Ordering, CountZeroQueuesNothing) {
  Clique q(2);
  void* send = devAlloc(1, kSlowBytes);
  void* host = nullptr;
  ASSERT_EQ(mimicHostAlloc(kSlowBytes, &host), MIMIC_SUCCESS);
  EXPECT_EQ(mimicMemcpyAsync(send, host, kSlowBytes, q.queues[1]), MIMIC_SUCCESS);
  mimicEvent copied = recordOn(1, q.queues[1]);
  mimicEvent before = recordOn(0, q.queues[0]);
  ASSERT_COLL_OK(mimicGroupStart());
  for (int r = 0; r < 2; ++r) {
    ASSERT_COLL_OK(
        mimicAllReduce(nullptr, nullptr, 0, mimicFloat32, mimicSum, q.comms[r], q.queues[r]));
  }
  ASSERT_COLL_OK(mimicGroupEnd());
  mimicEvent after = recordOn(0, q.queues[0]);
  // Rank 0 did not wait for rank 1's copy, and spent no time.
  EXPECT_EQ(stamp(after), stamp(before));
  EXPECT_LT(stamp(after), stamp(copied));
  EXPECT_EQ(mimicHostFree(host), MIMIC_SUCCESS);
}

// The second collective uses other queues; it still follows the first on every rank.
TEST_F(Ordering, ConsecutiveCollectivesOnOtherQueues) {
  Clique a(4), b(4);            // b only for its queues
  const size_t count = 100000;  // the ring
  const std::vector<int32_t> ones(count, 1);
  std::vector<void*> bufs(4);
  for (int r = 0; r < 4; ++r) {
    bufs[r] = devAlloc(r, count * 4);
    EXPECT_EQ(mimicMemcpy(bufs[r], ones.data(), count * 4), MIMIC_SUCCESS);
  }
  std::vector<mimicEvent> firstEnd(4);
  for (Clique* q : {&a, &b}) {
    ASSERT_COLL_OK(mimicGroupStart());
    for (int r = 0; r < 4; ++r) {
      ASSERT_COLL_OK(
          mimicAllReduce(bufs[r], bufs[r], count, mimicInt32, mimicSum, a.comms[r], q->queues[r]));
    }
    ASSERT_COLL_OK(mimicGroupEnd());
    if (q == &a)
      for (int r = 0; r < 4; ++r) firstEnd[r] = recordOn(r, a.queues[r]);
  }
  for (int r = 0; r < 4; ++r) {
    mimicEvent secondEnd = recordOn(r, b.queues[r]);
    EXPECT_GT(stamp(secondEnd), stamp(firstEnd[r]));
    std::vector<int32_t> got(count);
    EXPECT_EQ(mimicMemcpy(got.data(), bufs[r], count * 4), MIMIC_SUCCESS);
    EXPECT_EQ(got, std::vector<int32_t>(count, 16)) << "rank " << r;
  }
}

// The tuner's choice is the fastest plan the model knows of: no forced algorithm or protocol
// is faster by the model's own estimate, for small and large messages.
mimicCollectivePlan planOf(int n, size_t count, const char* algo, const char* proto) {
  algo ? setenv("MIMIC_COLL_ALGO", algo, 1) : unsetenv("MIMIC_COLL_ALGO");
  proto ? setenv("MIMIC_COLL_PROTO", proto, 1) : unsetenv("MIMIC_COLL_PROTO");
  std::vector<int> devices(n);
  for (int r = 0; r < n; ++r) devices[r] = r;
  const mimicCollectiveDesc desc{
      MIMIC_COLLECTIVE_ALL_REDUCE, count, mimicFloat32, mimicSum, 0, n, devices.data()};
  mimicCollectivePlan plan{};
  EXPECT_EQ(mimicCollectiveGetPlan(&desc, &plan), MIMIC_SUCCESS);
  unsetenv("MIMIC_COLL_ALGO");
  unsetenv("MIMIC_COLL_PROTO");
  return plan;
}

TEST_F(Ordering, TheTunerPicksTheFastestPlan) {
  for (size_t count : {size_t{256}, size_t{1} << 22}) {
    const mimicCollectivePlan chosen = planOf(4, count, nullptr, nullptr);
    for (const char* algo : {"ring", "tree"}) {
      for (const char* proto : {"simple", "ll128", "ll"}) {
        const mimicCollectivePlan forced = planOf(4, count, algo, proto);
        EXPECT_STREQ(forced.algorithm, algo);
        EXPECT_STREQ(forced.protocol, proto);
        EXPECT_LE(chosen.estimateNs, forced.estimateNs) << algo << "/" << proto << " " << count;
      }
    }
  }
  // Small messages want the low-latency protocol, large ones the full-bandwidth one.
  EXPECT_STREQ(planOf(4, 256, nullptr, nullptr).protocol, "ll");
  EXPECT_STREQ(planOf(4, size_t{1} << 24, nullptr, nullptr).protocol, "simple");
}

// Every algorithm and protocol that can run on the default preset's ring gives the reference
// result; ones that cannot (direct needs a mesh or a switch) or do not exist fail the group with
// their own codes, naming why, and queue nothing.
TEST_F(Ordering, ForcedChoices) {
  Clique q(4);
  for (const char* algo : {"ring", "tree"}) {
    for (const char* proto : {"simple", "ll128", "ll"}) {
      setenv("MIMIC_COLL_ALGO", algo, 1);
      setenv("MIMIC_COLL_PROTO", proto, 1);
      for (mimicReduceOp op : {mimicSum, mimicAvg, mimicMax})
        runCase({Kind::AllReduce, mimicBfloat16, op, 1001, false, 0}, q);
      runCase({Kind::Broadcast, mimicFloat16, mimicSum, 70000, true, 2}, q);
      runCase({Kind::Reduce, mimicFloat32, mimicMin, 3, false, 1}, q);
    }
  }
  std::vector<void*> bufs;
  for (int r = 0; r < 4; ++r) bufs.push_back(devAlloc(r, 64));
  const auto group = [&] {
    EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
    for (int r = 0; r < 4; ++r) {
      EXPECT_EQ(
          mimicAllReduce(bufs[r], bufs[r], 16, mimicFloat32, mimicSum, q.comms[r], q.queues[r]),
          MIMIC_SUCCESS);
    }
    return mimicGroupEnd();
  };
  setenv("MIMIC_COLL_PROTO", "simple", 1);
  setenv("MIMIC_COLL_ALGO", "direct", 1);
  EXPECT_EQ(group(), MIMIC_ERROR_UNSUPPORTED_COLLECTIVE_CHOICE);
  EXPECT_NE(collDetail().find("not a full mesh or switch"), std::string::npos) << collDetail();
  setenv("MIMIC_COLL_ALGO", "butterfly", 1);
  EXPECT_EQ(group(), MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE);
  EXPECT_NE(collDetail().find("unknown collective algorithm 'butterfly'"), std::string::npos);
  setenv("MIMIC_COLL_ALGO", "ring", 1);
  setenv("MIMIC_COLL_PROTO", "ll64", 1);
  EXPECT_EQ(group(), MIMIC_ERROR_UNKNOWN_COLLECTIVE_CHOICE);
  EXPECT_NE(collDetail().find("unknown collective protocol 'll64'"), std::string::npos);
  unsetenv("MIMIC_COLL_ALGO");
  unsetenv("MIMIC_COLL_PROTO");
  for (void* b : bufs) EXPECT_EQ(mimicMemFree(b), MIMIC_SUCCESS);
}

TEST_F(Ordering, ThreeRanks) {
  Clique q(3);
  for (Kind k : {Kind::AllReduce, Kind::Broadcast, Kind::Reduce, Kind::AllGather,
                 Kind::ReduceScatter, Kind::AllToAll})
    for (size_t count : {size_t{1}, size_t{1000}, size_t{100001}})
      for (bool inPlace : {false, true})
        if (!inPlace || k != Kind::AllToAll)
          runCase({k, mimicFloat32, mimicSum, count, inPlace, 1}, q);
}

}  // namespace
