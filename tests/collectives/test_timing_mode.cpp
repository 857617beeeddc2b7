// Collectives in timing-only mode (MIMIC_MODE=timing): the same algorithm, protocol and simulated
// start and end of every collective as in full mode, the same argument checks and mismatch
// codes, and no byte of a bulk call's buffers read or written (nor a staging copy made), while a
// small call (control data) moves its bytes as in full mode. Each mode needs a
// simulation of its own, so every run happens in a child process (driver_helpers.h's
// runInChild); a child's first number says whether its own checks all passed.
#include <algorithm>
#include <iterator>
#include <string>

#include "../driver/driver_helpers.h"
#include "coll_cases.h"
#include "mimic/mimic_trace.h"

namespace {

using Numbers = std::vector<uint64_t>;

constexpr Kind kKinds[] = {Kind::AllReduce, Kind::Broadcast,     Kind::Reduce,
                           Kind::AllGather, Kind::ReduceScatter, Kind::AllToAll};

// Elements per rank that each call reads and writes.
size_t sendCountOf(Kind k, size_t count, int n) {
  return k == Kind::ReduceScatter || k == Kind::AllToAll ? count * n : count;
}
size_t recvCountOf(Kind k, size_t count, int n) {
  return k == Kind::AllGather || k == Kind::AllToAll ? count * n : count;
}

// Each of `kinds` at three sizes (elements per rank, from 1 KiB) on the first `ranks`
// devices, one after the other on the same queues; per collective record: its device, start,
// end, bytes and its label (algorithm and protocol) as characters.
void runSweep(int ranks, size_t largest, const std::vector<Kind>& kinds, Numbers& out) {
  Clique q(ranks);
  for (Kind kind : kinds) {
    for (size_t count : {size_t{256}, largest / 16, largest}) {
      const Case c{kind, mimicFloat32, mimicSum, count, false, ranks - 1};
      std::vector<void*> sends(ranks), recvs(ranks);
      for (int r = 0; r < ranks; ++r) {
        sends[r] = devAlloc(r, sendCountOf(kind, count, ranks) * 4);
        recvs[r] = devAlloc(r, recvCountOf(kind, count, ranks) * 4);
      }
      EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(issue(c, q, r, sends[r], recvs[r]), MIMIC_SUCCESS) << collDetail();
      }
      EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
      q.synchronize();
      for (int r = 0; r < ranks; ++r) {
        EXPECT_EQ(mimicMemFree(sends[r]), MIMIC_SUCCESS);
        EXPECT_EQ(mimicMemFree(recvs[r]), MIMIC_SUCCESS);
      }
    }
  }
  std::vector<mimicActivity> records(4096);
  size_t read = 0;
  EXPECT_EQ(mimicTraceRead(records.data(), records.size(), &read), MIMIC_SUCCESS);
  size_t collectives = 0;
  for (size_t i = 0; i < read; ++i) {
    const mimicActivity& a = records[i];
    if (a.kind != MIMIC_ACTIVITY_COLLECTIVE) continue;
    ++collectives;
    out.insert(out.end(), {uint64_t(a.device), a.startNs, a.endNs, a.bytes});
    for (const char* p = a.name; *p; ++p) out.push_back(uint64_t(*p));
  }
  EXPECT_EQ(collectives, kinds.size() * 3 * size_t(ranks));
}

// On tiny (4 devices on a ring) with 2 and 4 ranks, and on two nodes of h100-4x8 (16 ranks, so
// that the tree and hierarchical algorithms across nodes are in the running).
// The largest size keeps full mode's AllToAll (n x n blocks staged) within 64 MiB.
Numbers collectiveTimes(const char* preset, const char* overrides, std::vector<int> rankCounts,
                        size_t largest, const std::vector<Kind>& kinds) {
  if (mimicInitWithPreset(0, preset, overrides) != MIMIC_SUCCESS) return {};
  EXPECT_EQ(mimicTraceStart(4096), MIMIC_SUCCESS);
  Numbers out{0};
  for (int ranks : rankCounts) runSweep(ranks, largest, kinds, out);
  out[0] = ::testing::Test::HasFailure() ? 0 : 1;
  return out;
}

Numbers tinyTimes() {
  return collectiveTimes("tiny", "system.num_devices=4", {2, 4}, size_t{1} << 20,
                         {std::begin(kKinds), std::end(kKinds)});
}
Numbers twoNodeTimes() {
  // h100-4x8's algorithms run no AllToAll (direct runs it on a ring of devices only).
  return collectiveTimes(
      "h100-4x8", "system.num_devices=16,network.nodes=2", {16}, size_t{1} << 16,
      {Kind::AllReduce, Kind::Broadcast, Kind::Reduce, Kind::AllGather, Kind::ReduceScatter});
}

void expectSameTimes(Numbers (*program)()) {
  const Numbers full = runInChild(program, "MIMIC_MODE", "full");
  const Numbers timing = runInChild(program, "MIMIC_MODE", "timing");
  ASSERT_FALSE(full.empty());
  EXPECT_EQ(full[0], 1u) << "the full-mode child's own checks failed";
  EXPECT_EQ(timing[0], 1u) << "the timing-mode child's own checks failed";
  // Not a vacuous comparison: every record has a positive duration.
  ASSERT_GT(full.size(), 100u);
  EXPECT_EQ(full, timing);
}

TEST(CollectivesTimingMode, SameSimulatedTimesAsFullModeOnOneNode) {
  expectSameTimes(tinyTimes);
}

TEST(CollectivesTimingMode, SameSimulatedTimesAsFullModeAcrossTwoNodes) {
  expectSameTimes(twoNodeTimes);
}

// Every buffer of 4 ranks starts with a pattern written through the host view; after each kind
// of collective (in place and not) of `count` elements per rank, records whether every byte of
// every buffer still holds it, and a hash of all of them.
Numbers patternAfter(size_t count) {
  if (mimicInitWithPreset(0, "tiny", "system.num_devices=4") != MIMIC_SUCCESS) return {};
  Numbers out{0};
  constexpr int n = 4;
  Clique q(n);
  for (Kind kind : kKinds) {
    for (bool inPlace : {false, true}) {
      if (kind == Kind::AllToAll && inPlace) continue;  // AllToAll cannot run in place
      const Case c{kind, mimicInt32, mimicMax, count, inPlace, 1};
      const size_t bytes = std::max(sendCountOf(kind, count, n), recvCountOf(kind, count, n)) * 4;
      std::vector<void*> sends(n), recvs(n);
      std::vector<uint8_t*> views;
      for (int r = 0; r < n; ++r) {
        sends[r] = devAlloc(r, bytes);
        recvs[r] = inPlace ? sends[r] : devAlloc(r, bytes);
        for (void* p :
             inPlace ? std::vector<void*>{sends[r]} : std::vector<void*>{sends[r], recvs[r]}) {
          void* view = nullptr;
          EXPECT_EQ(mimicMemGetHostView(p, bytes, &view), MIMIC_SUCCESS);
          auto* b = static_cast<uint8_t*>(view);
          for (size_t i = 0; i < bytes; ++i) b[i] = uint8_t(i * 7 + r * 13 + views.size());
          views.push_back(b);
        }
      }
      EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
      for (int r = 0; r < n; ++r) EXPECT_EQ(issue(c, q, r, sends[r], recvs[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
      q.synchronize();
      // Recomputed in the same order as written: rank, then send before receive.
      bool kept = true;
      uint64_t hash = 1469598103934665603u;  // FNV-1a
      size_t v = 0;
      for (int r = 0; r < n; ++r) {
        for (int buffer = 0; buffer < (inPlace ? 1 : 2); ++buffer, ++v) {
          for (size_t i = 0; i < bytes; ++i) {
            kept = kept && views[v][i] == uint8_t(i * 7 + r * 13 + v);
            hash = (hash ^ views[v][i]) * 1099511628211u;
          }
        }
        EXPECT_EQ(mimicMemFree(sends[r]), MIMIC_SUCCESS);
        if (!inPlace) {
          EXPECT_EQ(mimicMemFree(recvs[r]), MIMIC_SUCCESS);
        }
      }
      out.insert(out.end(), {uint64_t(kept), hash});
    }
  }
  out[0] = ::testing::Test::HasFailure() ? 0 : 1;
  return out;
}

// Whether each case kept its pattern (patternAfter's flags without the hashes).
std::vector<bool> keptFlags(const Numbers& after) {
  std::vector<bool> kept;
  for (size_t i = 1; i < after.size(); i += 2) kept.push_back(after[i] == 1);
  return kept;
}

constexpr size_t kCases = 11;

// 128 KiB per rank and buffer at least: above what timing mode moves (timing_mode_transfers.h).
Numbers bulkPattern() {
  return patternAfter(32 * 1024);
}
// 1 KiB per rank and buffer: control data, which timing mode moves.
Numbers smallPattern() {
  return patternAfter(256);
}

TEST(CollectivesTimingMode, NoByteOfABulkCollectiveIsReadOrWritten) {
  const Numbers timing = runInChild(bulkPattern, "MIMIC_MODE", "timing");
  ASSERT_EQ(timing.size(), 1 + 2 * kCases);
  EXPECT_EQ(timing[0], 1u) << "the child's own checks failed";
  EXPECT_EQ(keptFlags(timing), std::vector<bool>(kCases, true));
  // The same program in full mode writes every receive buffer: the check can fail.
  const Numbers full = runInChild(bulkPattern, "MIMIC_MODE", "full");
  ASSERT_EQ(full.size(), 1 + 2 * kCases);
  EXPECT_EQ(keptFlags(full), std::vector<bool>(kCases, false));
}

TEST(CollectivesTimingMode, SmallCollectivesMoveTheirBytesAsInFullMode) {
  const Numbers timing = runInChild(smallPattern, "MIMIC_MODE", "timing");
  ASSERT_EQ(timing.size(), 1 + 2 * kCases);
  EXPECT_EQ(timing[0], 1u) << "the child's own checks failed";
  EXPECT_EQ(keptFlags(timing), std::vector<bool>(kCases, false));
  EXPECT_EQ(timing, runInChild(smallPattern, "MIMIC_MODE", "full"));
}

// An AllReduce, an AllGather and a ReduceScatter of 256 MiB per rank on 2 devices of the default
// preset; the growth of the resident set.
Numbers residentGrowth() {
  if (mimicInitWithPreset(0, "default", "system.num_devices=2") != MIMIC_SUCCESS) return {};
  constexpr size_t count = size_t{64} << 20;  // f32: 256 MiB
  Clique q(2);
  const uint64_t before = residentBytes();
  for (Kind kind : {Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter}) {
    const Case c{kind, mimicFloat32, mimicSum, kind == Kind::AllReduce ? count : count / 2, false,
                 0};
    void* send[2] = {devAlloc(0, count * 4), devAlloc(1, count * 4)};
    void* recv[2] = {devAlloc(0, count * 4), devAlloc(1, count * 4)};
    EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
    for (int r = 0; r < 2; ++r) EXPECT_EQ(issue(c, q, r, send[r], recv[r]), MIMIC_SUCCESS);
    EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS) << collDetail();
    q.synchronize();
    for (int r = 0; r < 2; ++r) {
      EXPECT_EQ(mimicMemFree(send[r]), MIMIC_SUCCESS);
      EXPECT_EQ(mimicMemFree(recv[r]), MIMIC_SUCCESS);
    }
  }
  const uint64_t after = residentBytes();
  return {::testing::Test::HasFailure() ? 0u : 1u, after > before ? after - before : 0};
}

TEST(CollectivesTimingMode, CommitsNoHostMemory) {
  const Numbers timing = runInChild(residentGrowth, "MIMIC_MODE", "timing");
  ASSERT_EQ(timing.size(), 2u);
  EXPECT_EQ(timing[0], 1u) << "the child's own checks failed";
  // Moved, the AllReduce alone would commit its 2 x 256 MiB receive buffers and a 256 MiB
  // scratch; the simulation's own bookkeeping is far below 1/8 of one buffer.
  EXPECT_LT(timing[1], uint64_t(32) << 20);
}

// The argument checks and the ranks' agreement in timing mode: each call's code.
Numbers argumentCodes() {
  if (mimicInitWithPreset(0, "tiny", "system.num_devices=4") != MIMIC_SUCCESS) return {};
  Clique q(2);
  constexpr size_t count = 16;
  void* buf[2] = {devAlloc(0, count * 4), devAlloc(1, count * 4)};
  const auto mismatched = [&](const Case& c0, const Case& c1) {
    EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
    EXPECT_EQ(issue(c0, q, 0, buf[0], buf[0]), MIMIC_SUCCESS);
    EXPECT_EQ(issue(c1, q, 1, buf[1], buf[1]), MIMIC_SUCCESS);
    return uint64_t(mimicGroupEnd());
  };
  const Case base{Kind::AllReduce, mimicFloat32, mimicSum, count, true, 0};
  Numbers out;
  Case other = base;
  other.count = 8;
  out.push_back(mismatched(base, other));
  other = base;
  other.type = mimicInt32;
  out.push_back(mismatched(base, other));
  other = base;
  other.op = mimicMax;
  out.push_back(mismatched(base, other));
  other = base;
  other.kind = Kind::Broadcast;
  out.push_back(mismatched(base, other));
  Case b0 = base, b1 = base;
  b0.kind = b1.kind = Kind::Broadcast;
  b1.root = 1;
  out.push_back(mismatched(b0, b1));
  // Only rank 0 calls.
  EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
  EXPECT_EQ(issue(base, q, 0, buf[0], buf[0]), MIMIC_SUCCESS);
  out.push_back(uint64_t(mimicGroupEnd()));
  // One rank's own bad arguments, checked as it calls: past its allocation, a root outside the
  // group, an unknown type.
  EXPECT_EQ(mimicGroupStart(), MIMIC_SUCCESS);
  out.push_back(uint64_t(
      mimicAllReduce(buf[0], buf[0], count + 1, mimicFloat32, mimicSum, q.comms[0], q.queues[0])));
  out.push_back(
      uint64_t(mimicBroadcast(buf[0], buf[0], count, mimicFloat32, 2, q.comms[0], q.queues[0])));
  out.push_back(uint64_t(
      mimicAllReduce(buf[0], buf[0], count, mimicDataType(6), mimicSum, q.comms[0], q.queues[0])));
  EXPECT_EQ(mimicGroupEnd(), MIMIC_SUCCESS);
  return out;
}

TEST(CollectivesTimingMode, ArgumentErrorsAndMismatchesAsInFullMode) {
  const Numbers expected{
      MIMIC_ERROR_GROUP_MISMATCH, MIMIC_ERROR_GROUP_MISMATCH, MIMIC_ERROR_GROUP_MISMATCH,
      MIMIC_ERROR_GROUP_MISMATCH, MIMIC_ERROR_GROUP_MISMATCH, MIMIC_ERROR_GROUP_INCOMPLETE,
      MIMIC_ERROR_OUT_OF_BOUNDS,  MIMIC_ERROR_INVALID_ROOT,   MIMIC_ERROR_INVALID_DATATYPE};
  EXPECT_EQ(runInChild(argumentCodes, "MIMIC_MODE", "timing"), expected);
  EXPECT_EQ(runInChild(argumentCodes, "MIMIC_MODE", "full"), expected);
}

}  // namespace
