// The same program gives the same simulated timestamps on every run. Each run is a fresh child
// process (one simulation per process); the children report their timestamps over a pipe.
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "driver_helpers.h"

namespace {

// A program with several queues, both devices, waits, pageable and pinned copies and polls.
std::vector<uint64_t> runProgram() {
  std::vector<uint64_t> stamps;
  if (mimicInitWithPreset(0, "tiny", nullptr) != MIMIC_SUCCESS) return stamps;
  const size_t bytes = 3u << 20;
  void* host = nullptr;
  void* d0 = nullptr;
  void* d1 = nullptr;
  mimicHostAlloc(bytes, &host);
  mimicMemAlloc(0, bytes, &d0);
  mimicMemAlloc(1, bytes, &d1);
  std::vector<char> pageable(bytes);
  mimicQueue q[3];
  mimicEvent e[6];
  for (int i = 0; i < 3; ++i) mimicQueueCreate(i % 2, 0, 0, &q[i]);
  for (int i = 0; i < 6; ++i) mimicEventCreate(i % 2 == 0 ? 0 : 1, 0, &e[i]);
  for (int round = 0; round < 5; ++round) {
    mimicMemcpyAsync(d0, host, bytes - round * 4096, q[0]);
    mimicEventRecord(e[0], q[0]);
    mimicQueueWaitEvent(q[1], e[0]);
    mimicMemcpyPeerAsync(d1, 1, d0, 0, bytes / 2, q[1]);
    mimicEventRecord(e[1], q[1]);
    mimicMemcpyAsync(d0, pageable.data(), bytes / 3, q[2]);
    mimicEventRecord(e[2], q[2]);
    mimicMemsetAsync(d1, round, bytes, nullptr);
    mimicEventRecord(e[3], nullptr);
    while (mimicEventQuery(e[2]) == MIMIC_NOT_READY) {
    }
    for (int i = 0; i < 4; ++i) {
      uint64_t ns = 0;
      mimicEventSynchronize(e[i]);
      mimicEventGetTimestamp(e[i], &ns);
      stamps.push_back(ns);
    }
  }
  uint64_t now = 0;
  mimicGetSimTime(&now);
  stamps.push_back(now);
  return stamps;
}

TEST(DeterminismTest, RepeatedRunsGiveIdenticalSimulatedTimestamps) {
  std::vector<uint64_t> first = runInChild(runProgram);
  ASSERT_EQ(first.size(), 5u * 4u + 1u);
  EXPECT_GT(first.back(), 0u);
  for (int run = 0; run < 3; ++run) EXPECT_EQ(runInChild(runProgram), first) << "run " << run;
}

}  // namespace
