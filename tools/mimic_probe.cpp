// mimic-probe: runs one workload of a published-figures row (`mimic validate`) on the preset in
// MIMIC_PRESET and prints its simulated time as one line of JSON. Only the public API is used:
// mimic.h and mimic_collectives.h, as a program written for the device would.
//
//   mimic-probe h2d bytes=N [pinned=true|false] [iterations=N]
//   mimic-probe d2h bytes=N [pinned=true|false] [iterations=N]
//   mimic-probe peer bytes=N [iterations=N]                  device 0 to device 1
//   mimic-probe launch measure=launch_sync|launch_event [iterations=N]
//   mimic-probe allreduce|allgather|reducescatter bytes=N devices=N [nodes=1] [iterations=N]
//                [algo=NAME] [proto=NAME]   (MIMIC_COLL_ALGO / _PROTO, as NCCL_ALGO / _PROTO)
//                (devices / nodes devices on each of the first `nodes` nodes)
//
// Every workload runs once untimed first (module load, scratch growth, engine set-up), then
// `iterations` times back to back (default: 1 for copies, 100 for launches, 256 MiB / bytes
// within 2..20 for collectives, so that the host's launch of the first one weighs little, as
// nccl-tests' 20 timed iterations); sim_ns is the simulated time per iteration:
//   copies       event to event on the copying queue around the copies;
//   launch_sync  host time (mimicGetSimTime) from before an empty kernel's launch to the return
//                of mimicQueueSynchronize, as cudaLaunchKernel + cudaStreamSynchronize costs;
//   launch_event event to event around one empty kernel, the end event synchronized before the
//                next iteration, as SuperBench's kernel-launch "event" time measures it;
//   collectives  from the earliest start event to the latest end event over the ranks' queues,
//                as nccl-tests times them (f32 sum, in place; bytes is nccl-tests' size: the
//                whole buffer of AllReduce, AllGather's output, ReduceScatter's input).
// Output: {"kind": ..., "sim_ns": ..., "iterations": N, "bytes": B, "bus_bytes": B'} where
// bus_bytes / sim_ns is nccl-tests' busbw in GB/s (bytes for the other kinds). "estimated":
// true when a collective's data would not fit in host memory, so sim_ns is the collective
// model's estimate of it alone on the system (mimicCollectiveGetPlan). A usage error
// exits 2, a failed workload 1, each with one line on stderr.
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "mimic/mimic.hpp"
#include "mimic/mimic_collectives.h"
#include "mimic_probe_empty_image.h"  // the empty kernel, assembled from mimic_probe_empty.s

namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Workload {
  std::string kind;
  std::map<std::string, std::string> args;

  bool has(const std::string& key) const { return args.count(key) != 0; }
  uint64_t number(const std::string& key, uint64_t fallback, bool required = false) const {
    auto it = args.find(key);
    if (it == args.end()) {
      if (required) throw UsageError(kind + " needs " + key + "=N");
      return fallback;
    }
    char* end = nullptr;
    const unsigned long long value = std::strtoull(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0' || value == 0 || it->second[0] == '-') {
      throw UsageError(key + "=" + it->second + " is not a positive whole number");
    }
    return value;
  }
  bool flag(const std::string& key, bool fallback) const {
    auto it = args.find(key);
    if (it == args.end()) return fallback;
    if (it->second == "true" || it->second == "1") return true;
    if (it->second == "false" || it->second == "0") return false;
    throw UsageError(key + "=" + it->second + " is not true or false");
  }
};

struct Result {
  uint64_t totalNs = 0;
  uint64_t iterations = 1;
  uint64_t bytes = 0;
  double busBytes = 0;
  bool estimated = false;  // the collective model's plan estimate: the data would not fit
};

void collCheck(mimicResult r, const char* call) {
  if (r == MIMIC_SUCCESS) return;
  const char* detail = nullptr;
  mimicCollGetErrorDetail(&detail);
  throw std::runtime_error(std::string(call) + " failed with " + mimicCollGetErrorName(r) +
                           (detail && *detail ? std::string(": ") + detail : ""));
}
#define COLL_CHECK(call) collCheck((call), #call)

uint64_t timestamp(mimicEvent event) {
  uint64_t ns = 0;
  MIMIC_CHECK(mimicEventGetTimestamp(event, &ns));
  return ns;
}

uint64_t hostNs() {
  uint64_t ns = 0;
  MIMIC_CHECK(mimicGetSimTime(&ns));
  return ns;
}

int deviceCount() {
  int count = 0;
  MIMIC_CHECK(mimicDeviceGetCount(&count));
  return count;
}

// The simulated devices keep their data in host memory. A workload that needs more than most
// of it would be killed by the host (or starve everything else on it), so it fails with the
// reason instead; total memory, not free memory, so that the outcome does not vary by moment.
bool fitsInHostMemory(double bytes) {
  const double total = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  return bytes <= 0.75 * total;
}

void requireHostMemory(double bytes, const std::string& what) {
  const double total = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGESIZE));
  if (!fitsInHostMemory(bytes)) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "needs about %.1f GiB of host memory for %s; this host has %.1f GiB",
                  bytes / double(1 << 30), what.c_str(), total / double(1 << 30));
    throw std::runtime_error(text);
  }
}

// A host buffer that is pinned (mimicHostAlloc) or ordinary pageable memory, written once so
// that its pages exist.
class HostBuffer {
 public:
  HostBuffer(size_t bytes, bool pinned) : pinned_(pinned) {
    if (pinned) {
      MIMIC_CHECK(mimicHostAlloc(bytes, &data_));
    } else {
      pageable_.assign(bytes, 1);
      data_ = pageable_.data();
    }
    std::memset(data_, 1, bytes);
  }
  ~HostBuffer() {
    if (pinned_) mimicHostFree(data_);
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  void* data() const { return data_; }

 private:
  bool pinned_;
  void* data_ = nullptr;
  std::vector<unsigned char> pageable_;
};

class DeviceBuffer {
 public:
  DeviceBuffer(int device, size_t bytes) { MIMIC_CHECK(mimicMemAlloc(device, bytes, &data_)); }
  ~DeviceBuffer() { mimicMemFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// A queue of one device with a start and an end event.
struct Timeline {
  mimicQueue queue = nullptr;
  mimicEvent start = nullptr, end = nullptr;
  explicit Timeline(int device) {
    MIMIC_CHECK(mimicQueueCreate(device, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
    MIMIC_CHECK(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &start));
    MIMIC_CHECK(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &end));
  }
  ~Timeline() {
    mimicEventDestroy(start);
    mimicEventDestroy(end);
    mimicQueueDestroy(queue);
  }
  Timeline(const Timeline&) = delete;
  Timeline& operator=(const Timeline&) = delete;

  template <typename Body>
  uint64_t time(uint64_t iterations, Body&& body) {
    MIMIC_CHECK(mimicEventRecord(start, queue));
    for (uint64_t i = 0; i < iterations; ++i) body();
    MIMIC_CHECK(mimicEventRecord(end, queue));
    MIMIC_CHECK(mimicEventSynchronize(end));
    return timestamp(end) - timestamp(start);
  }
};

Result hostCopy(const Workload& w, bool toDevice) {
  Result r;
  r.bytes = w.number("bytes", 0, true);
  r.iterations = w.number("iterations", 1);
  requireHostMemory(2.0 * double(r.bytes), "the host buffer and the device's data");
  HostBuffer host(r.bytes, w.flag("pinned", true));
  DeviceBuffer device(0, r.bytes);
  Timeline t(0);
  void* dst = toDevice ? device.data() : host.data();
  const void* src = toDevice ? host.data() : device.data();
  MIMIC_CHECK(mimicMemcpyAsync(dst, src, r.bytes, t.queue));
  MIMIC_CHECK(mimicQueueSynchronize(t.queue));
  r.totalNs =
      t.time(r.iterations, [&] { MIMIC_CHECK(mimicMemcpyAsync(dst, src, r.bytes, t.queue)); });
  r.busBytes = double(r.bytes);
  return r;
}

Result peerCopy(const Workload& w) {
  if (deviceCount() < 2) throw UsageError("peer needs 2 devices (MIMIC_NUM_DEVICES=2)");
  Result r;
  r.bytes = w.number("bytes", 0, true);
  r.iterations = w.number("iterations", 1);
  requireHostMemory(2.0 * double(r.bytes), "the two devices' data");
  DeviceBuffer src(0, r.bytes), dst(1, r.bytes);
  Timeline t(0);
  auto copy = [&] {
    MIMIC_CHECK(mimicMemcpyPeerAsync(dst.data(), 1, src.data(), 0, r.bytes, t.queue));
  };
  copy();
  MIMIC_CHECK(mimicQueueSynchronize(t.queue));
  r.totalNs = t.time(r.iterations, copy);
  r.busBytes = double(r.bytes);
  return r;
}

Result launch(const Workload& w) {
  const std::string measure = w.has("measure") ? w.args.at("measure") : "";
  if (measure != "launch_sync" && measure != "launch_event") {
    throw UsageError("launch needs measure=launch_sync or measure=launch_event");
  }
  Result r;
  r.iterations = w.number("iterations", 100);
  mimicModule module = nullptr;
  mimicFunction empty = nullptr;
  MIMIC_CHECK(mimicModuleLoad(0, kMimicProbeEmptyImage, sizeof kMimicProbeEmptyImage, &module));
  MIMIC_CHECK(mimicModuleGetFunction(module, "empty", &empty));
  Timeline t(0);
  auto kernel = [&] {
    MIMIC_CHECK(mimicLaunchKernel(empty, mimicDim3{1, 1, 1}, nullptr, 0, t.queue));
  };
  kernel();
  MIMIC_CHECK(mimicQueueSynchronize(t.queue));
  if (measure == "launch_sync") {
    for (uint64_t i = 0; i < r.iterations; ++i) {
      const uint64_t before = hostNs();
      kernel();
      MIMIC_CHECK(mimicQueueSynchronize(t.queue));
      r.totalNs += hostNs() - before;
    }
  } else {
    for (uint64_t i = 0; i < r.iterations; ++i) r.totalNs += t.time(1, kernel);
  }
  MIMIC_CHECK(mimicModuleUnload(module));
  return r;
}

enum class Collective { AllReduce, AllGather, ReduceScatter };

Result collective(const Workload& w, Collective kind) {
  const int n = int(w.number("devices", 0, true));
  const int nodes = int(w.number("nodes", 1));
  mimicDeviceProperties props{};
  MIMIC_CHECK(mimicDeviceGetProperties(0, &props));
  if (nodes < 1 || n % nodes != 0 || nodes > props.nodes || n / nodes > props.devicesPerNode) {
    throw UsageError("devices=" + std::to_string(n) + " nodes=" + std::to_string(nodes) +
                     ": the system has " + std::to_string(props.nodes) + " node(s) of " +
                     std::to_string(props.devicesPerNode) +
                     " devices (set MIMIC_NUM_DEVICES, or pick a multi-node preset)");
  }
  // The first n / nodes devices of each of the first `nodes` nodes.
  std::vector<int> devices;
  for (int k = 0; k < nodes; ++k) {
    for (int j = 0; j < n / nodes; ++j) devices.push_back(k * props.devicesPerNode + j);
  }
  Result r;
  r.bytes = w.number("bytes", 0, true);
  const size_t count = r.bytes / 4, part = count / size_t(n);
  const bool split = kind != Collective::AllReduce;  // each rank holds count / n elements
  if (r.bytes % 4 != 0 || (split && (part == 0 || count % size_t(n) != 0))) {
    throw UsageError("bytes=" + std::to_string(r.bytes) + " is not a whole number of f32" +
                     (split ? " per rank on " + std::to_string(n) + " ranks" : ""));
  }
  // nccl-tests times back-to-back calls; larger messages need fewer for a stable figure.
  r.iterations =
      w.number("iterations", std::clamp<uint64_t>((uint64_t{256} << 20) / r.bytes, 2, 20));
  const double factor = (kind == Collective::AllReduce ? 2.0 : 1.0) * (n - 1) / n;
  r.busBytes = double(r.bytes) * factor;
  // Each rank's buffer, and the driver's scratch of as much again. When that does not fit,
  // the collective model's own estimate of a lone collective (mimicCollectiveGetPlan) stands
  // in for the run, and the output says so.
  if (!fitsInHostMemory(2.0 * n * double(r.bytes))) {
    static const mimicCollectiveKind kKinds[] = {
        MIMIC_COLLECTIVE_ALL_REDUCE, MIMIC_COLLECTIVE_ALL_GATHER, MIMIC_COLLECTIVE_REDUCE_SCATTER};
    const mimicCollectiveDesc desc{
        kKinds[int(kind)], split ? part : count, mimicFloat32, mimicSum, 0, n, devices.data()};
    mimicCollectivePlan plan{};
    MIMIC_CHECK(mimicCollectiveGetPlan(&desc, &plan));
    r.totalNs = plan.estimateNs;
    r.iterations = 1;
    r.estimated = true;
    return r;
  }
  std::vector<mimicComm> comms(n);
  COLL_CHECK(mimicCommInitAll(comms.data(), n, devices.data()));
  std::vector<std::unique_ptr<Timeline>> ranks;
  std::vector<std::unique_ptr<DeviceBuffer>> buffers;
  for (int d : devices) {
    ranks.push_back(std::make_unique<Timeline>(d));
    buffers.push_back(std::make_unique<DeviceBuffer>(d, r.bytes));
    MIMIC_CHECK(mimicMemsetAsync(buffers.back()->data(), 0, r.bytes, ranks.back()->queue));
  }
  auto issue = [&] {
    COLL_CHECK(mimicGroupStart());
    for (int d = 0; d < n; ++d) {
      float* all = static_cast<float*>(buffers[d]->data());
      float* mine = all + size_t(d) * part;
      mimicQueue q = ranks[d]->queue;
      if (kind == Collective::AllReduce) {
        COLL_CHECK(mimicAllReduce(all, all, count, mimicFloat32, mimicSum, comms[d], q));
      } else if (kind == Collective::AllGather) {
        COLL_CHECK(mimicAllGather(mine, all, part, mimicFloat32, comms[d], q));
      } else {
        COLL_CHECK(mimicReduceScatter(all, mine, part, mimicFloat32, mimicSum, comms[d], q));
      }
    }
    COLL_CHECK(mimicGroupEnd());
  };
  auto synchronize = [&] {
    for (auto& rank : ranks) MIMIC_CHECK(mimicQueueSynchronize(rank->queue));
  };
  issue();
  synchronize();
  for (auto& rank : ranks) MIMIC_CHECK(mimicEventRecord(rank->start, rank->queue));
  for (uint64_t i = 0; i < r.iterations; ++i) issue();
  for (auto& rank : ranks) MIMIC_CHECK(mimicEventRecord(rank->end, rank->queue));
  synchronize();
  uint64_t first = UINT64_MAX, last = 0;
  for (auto& rank : ranks) {
    first = std::min(first, timestamp(rank->start));
    last = std::max(last, timestamp(rank->end));
  }
  r.totalNs = last - first;
  for (mimicComm comm : comms) COLL_CHECK(mimicCommDestroy(comm));
  return r;
}

Result run(const Workload& w) {
  if (w.kind == "h2d" || w.kind == "d2h") return hostCopy(w, w.kind == "h2d");
  if (w.kind == "peer") return peerCopy(w);
  if (w.kind == "launch") return launch(w);
  if (w.kind == "allreduce") return collective(w, Collective::AllReduce);
  if (w.kind == "allgather") return collective(w, Collective::AllGather);
  if (w.kind == "reducescatter") return collective(w, Collective::ReduceScatter);
  throw UsageError("unknown workload kind '" + w.kind +
                   "' (known: h2d, d2h, peer, launch, allreduce, allgather, reducescatter)");
}

const char* const kKeys[] = {"bytes",   "pinned", "measure", "iterations",
                             "devices", "nodes",  "algo",    "proto"};

Workload parseArgs(int argc, char** argv) {
  if (argc < 2) throw UsageError("no workload given");
  Workload w;
  w.kind = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    const size_t eq = arg.find('=');
    const std::string key = arg.substr(0, eq);
    if (eq == std::string::npos ||
        std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys)) {
      throw UsageError("'" + arg + "' is not one of bytes=, pinned=, measure=, iterations=, " +
                       "devices=, nodes=, algo=, proto=");
    }
    w.args[key] = arg.substr(eq + 1);
  }
  return w;
}

}  // namespace

int main(int argc, char** argv) {
  Workload w;
  try {
    w = parseArgs(argc, argv);
    // A row measured with NCCL_ALGO / NCCL_PROTO set forces the same choice here.
    if (w.has("algo")) setenv("MIMIC_COLL_ALGO", w.args.at("algo").c_str(), 1);
    if (w.has("proto")) setenv("MIMIC_COLL_PROTO", w.args.at("proto").c_str(), 1);
    MIMIC_CHECK(mimicInit(0));
    const Result r = run(w);
    std::printf("{\"kind\": \"%s\", \"sim_ns\": %.3f, \"iterations\": %" PRIu64
                ", \"bytes\": %" PRIu64 ", \"bus_bytes\": %.3f, \"estimated\": %s}\n",
                w.kind.c_str(), double(r.totalNs) / double(r.iterations), r.iterations, r.bytes,
                r.busBytes, r.estimated ? "true" : "false");
    return 0;
  } catch (const UsageError& e) {
    std::fprintf(stderr,
                 "mimic-probe: %s\nusage: mimic-probe KIND key=value ... (see "
                 "tools/mimic_probe.cpp)\n",
                 e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mimic-probe: %s: %s\n", w.kind.c_str(), e.what());
    return 1;
  }
}
