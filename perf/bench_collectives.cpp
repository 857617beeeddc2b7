// Collectives benchmark in the style of nccl-tests: AllReduce, AllGather and ReduceScatter of
// f32 (Sum) over every device of the process, in place, from 1 KiB to 256 MiB (x4 per row).
//
//   mimic-bench-collectives [--devices N]
//
// The preset is MIMIC_PRESET's (else "default"); the device count is --devices N, else
// MIMIC_NUM_DEVICES, else 4 (the default preset alone has 2). Columns, per collective:
//   size       bytes of the whole buffer (AllReduce's buffer, AllGather's recv, ReduceScatter's
//              send); count is its number of f32 elements, as in nccl-tests
//   algo       the collective model's algorithm/protocol (MIMIC_COLL_ALGO / _PROTO force them)
//   sim us     simulated time per call: from the earliest start event to the latest end event
//              over all ranks' queues, divided by the calls timed back to back
//   algbw      size / sim time, GB/s
//   busbw      algbw x 2(n-1)/n for AllReduce, x (n-1)/n for AllGather and ReduceScatter: the
//              bandwidth each link carries, comparable with the link's (nccl-tests' definition)
//   bus/B      busbw over the device-link bandwidth per direction, from the same run
//   wall us    host wall time per call: the host submitting the group and the simulation
//              running it (functional execution included), until the queues are synchronized
// Then the host overhead of a small collective: wall time per 8-byte AllReduce (group start, n
// calls, group end) over 2000 calls and one final synchronize, against an empty group.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "mimic/mimic.hpp"
#include "mimic/mimic_collectives.h"

namespace {

using Clock = std::chrono::steady_clock;

void collCheck(mimicResult r, const char* call) {
  if (r == MIMIC_SUCCESS) return;
  const char* detail = nullptr;
  mimicCollGetErrorDetail(&detail);
  throw std::runtime_error(std::string(call) + ": " + mimicCollGetErrorName(r) + " " +
                           (detail ? detail : ""));
}
#define COLL_CHECK(call) collCheck((call), #call)

enum class Kind { AllReduce, AllGather, ReduceScatter };

struct Ranks {
  int n = 0;
  std::vector<mimicComm> comms;
  std::vector<mimicQueue> queues;
  std::vector<void*> buffers;
  std::vector<mimicEvent> starts, ends;
  void synchronize() {
    for (mimicQueue q : queues) MIMIC_CHECK(mimicQueueSynchronize(q));
  }
};

// Queues one collective of `bytes` on every rank, as one group.
void issue(Ranks& k, Kind kind, size_t bytes) {
  const size_t count = bytes / 4, part = count / k.n;
  COLL_CHECK(mimicGroupStart());
  for (int r = 0; r < k.n; ++r) {
    float* all = static_cast<float*>(k.buffers[r]);
    float* mine = all + size_t(r) * part;
    if (kind == Kind::AllReduce) {
      COLL_CHECK(mimicAllReduce(all, all, count, mimicFloat32, mimicSum, k.comms[r], k.queues[r]));
    } else if (kind == Kind::AllGather) {
      COLL_CHECK(mimicAllGather(mine, all, part, mimicFloat32, k.comms[r], k.queues[r]));
    } else {
      COLL_CHECK(
          mimicReduceScatter(all, mine, part, mimicFloat32, mimicSum, k.comms[r], k.queues[r]));
    }
  }
  COLL_CHECK(mimicGroupEnd());
}

struct Timing {
  double simUs, wallUs;
};

Timing timeCalls(Ranks& k, Kind kind, size_t bytes, int calls) {
  issue(k, kind, bytes);  // warm-up: scratch memory grows on the first call of a size
  k.synchronize();
  const auto t0 = Clock::now();
  for (int r = 0; r < k.n; ++r) MIMIC_CHECK(mimicEventRecord(k.starts[r], k.queues[r]));
  for (int i = 0; i < calls; ++i) issue(k, kind, bytes);
  for (int r = 0; r < k.n; ++r) MIMIC_CHECK(mimicEventRecord(k.ends[r], k.queues[r]));
  k.synchronize();
  const double wall = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
  uint64_t first = UINT64_MAX, last = 0;
  for (int r = 0; r < k.n; ++r) {
    uint64_t s = 0, e = 0;
    MIMIC_CHECK(mimicEventGetTimestamp(k.starts[r], &s));
    MIMIC_CHECK(mimicEventGetTimestamp(k.ends[r], &e));
    first = std::min(first, s);
    last = std::max(last, e);
  }
  return {double(last - first) / 1e3 / calls, wall / calls};
}

// The collective model's choice for the call: "ring/simple" and so on.
std::string planName(int n, Kind kind, size_t bytes) {
  static const mimicCollectiveKind kKinds[] = {
      MIMIC_COLLECTIVE_ALL_REDUCE, MIMIC_COLLECTIVE_ALL_GATHER, MIMIC_COLLECTIVE_REDUCE_SCATTER};
  std::vector<int> devices(n);
  for (int r = 0; r < n; ++r) devices[r] = r;
  const size_t count = kind == Kind::AllReduce ? bytes / 4 : bytes / 4 / n;
  const mimicCollectiveDesc desc{kKinds[int(kind)], count, mimicFloat32, mimicSum, 0, n,
                                 devices.data()};
  mimicCollectivePlan plan{};
  MIMIC_CHECK(mimicCollectiveGetPlan(&desc, &plan));
  return std::string(plan.algorithm) + "/" + plan.protocol;
}

void table(Ranks& k, Kind kind, double linkGBps, size_t maxBytes) {
  static const char* const kNames[] = {"AllReduce", "AllGather", "ReduceScatter"};
  const int n = k.n;
  const double factor = (kind == Kind::AllReduce ? 2.0 : 1.0) * (n - 1) / n;
  std::printf("\n%s, f32%s, n = %d, busbw = algbw x %.4f\n", kNames[int(kind)],
              kind == Kind::AllGather ? "" : ", sum", n, factor);
  std::printf("%12s %11s %18s %11s %9s %9s %7s %11s\n", "size(B)", "count", "algo", "sim(us)",
              "algbw", "busbw", "bus/B", "wall(us)");
  for (size_t bytes = 1024; bytes <= maxBytes; bytes *= 4) {
    const int calls = int(std::clamp<size_t>((size_t{16} << 20) / bytes, 1, 20));
    const Timing t = timeCalls(k, kind, bytes, calls);
    const double algbw = double(bytes) / (t.simUs * 1e3);  // bytes per ns = GB/s
    const double busbw = algbw * factor;
    std::printf("%12zu %11zu %18s %11.2f %9.2f %9.2f %7.3f %11.1f\n", bytes, bytes / 4,
                planName(n, kind, bytes).c_str(), t.simUs, algbw, busbw, busbw / linkGBps,
                t.wallUs);
  }
}

// Wall time per empty group (start, end), over `calls` of them and a synchronize.
double emptyGroupUs(Ranks& k, int calls) {
  k.synchronize();
  const auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) {
    COLL_CHECK(mimicGroupStart());
    COLL_CHECK(mimicGroupEnd());
  }
  k.synchronize();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  std::string overrides;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
      overrides = std::string("system.num_devices=") + argv[++i];
    } else {
      std::fprintf(stderr, "usage: mimic-bench-collectives [--devices N]\n");
      return 2;
    }
  }
  if (overrides.empty() && !std::getenv("MIMIC_NUM_DEVICES")) overrides = "system.num_devices=4";
  try {
    MIMIC_CHECK(mimicInitWithPreset(0, nullptr, overrides.empty() ? nullptr : overrides.c_str()));
    Ranks k;
    MIMIC_CHECK(mimicDeviceGetCount(&k.n));
    mimicDeviceProperties p{};
    MIMIC_CHECK(mimicDeviceGetProperties(0, &p));
    static const char* const kTopologies[] = {"ring", "full_mesh", "switch"};
    std::printf(
        "mimic-bench-collectives: preset %s, %d devices, %s device links of %.0f GB/s per "
        "direction, %llu ns per hop\n",
        p.preset, k.n, kTopologies[p.deviceLinkTopology], p.deviceLinkBandwidthGBps,
        (unsigned long long)p.deviceLinkLatencyNs);
    const size_t maxBytes = std::min<size_t>(size_t{256} << 20, p.totalMemory / 4);
    k.comms.resize(k.n);
    COLL_CHECK(mimicCommInitAll(k.comms.data(), k.n, nullptr));
    for (int r = 0; r < k.n; ++r) {
      k.queues.emplace_back();
      MIMIC_CHECK(mimicQueueCreate(r, 0, MIMIC_QUEUE_PRIORITY_LOW, &k.queues.back()));
      k.buffers.emplace_back();
      MIMIC_CHECK(mimicMemAlloc(r, maxBytes, &k.buffers.back()));
      MIMIC_CHECK(mimicMemsetAsync(k.buffers.back(), 0, maxBytes, k.queues.back()));
      k.starts.emplace_back();
      k.ends.emplace_back();
      MIMIC_CHECK(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &k.starts.back()));
      MIMIC_CHECK(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &k.ends.back()));
    }
    const auto t0 = Clock::now();
    for (Kind kind : {Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter})
      table(k, kind, p.deviceLinkBandwidthGBps, maxBytes);

    const int calls = 2000;
    const double emptyUs = emptyGroupUs(k, calls);
    const Timing sim8 = timeCalls(k, Kind::AllReduce, 8, calls);
    std::printf(
        "\nhost overhead per small collective (%d calls, one synchronize at the end):\n"
        "  AllReduce of 8 B on %d ranks: %.2f us wall per call (%.2f us per rank), simulated "
        "%.2f us per call (wall/sim %.3f)\n"
        "  empty group (start, end):      %.3f us wall per call (AllReduce / empty %.0fx)\n",
        calls, k.n, sim8.wallUs, sim8.wallUs / k.n, sim8.simUs, sim8.wallUs / sim8.simUs, emptyUs,
        sim8.wallUs / emptyUs);
    std::printf("wall time of the runs above %.1f s\n",
                std::chrono::duration<double>(Clock::now() - t0).count());

    for (int r = 0; r < k.n; ++r) {
      MIMIC_CHECK(mimicQueueSynchronize(k.queues[r]));
      COLL_CHECK(mimicCommDestroy(k.comms[r]));
      MIMIC_CHECK(mimicEventDestroy(k.starts[r]));
      MIMIC_CHECK(mimicEventDestroy(k.ends[r]));
      MIMIC_CHECK(mimicMemFree(k.buffers[r]));
      MIMIC_CHECK(mimicQueueDestroy(k.queues[r]));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mimic-bench-collectives: %s\n", e.what());
    return 1;
  }
  return 0;
}
