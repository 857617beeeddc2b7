// Collectives benchmark with nccl-tests' flags and table: AllReduce, AllGather and ReduceScatter
// over every device of the process, out of place and in place, each checked for correctness.
//
//   mimic-bench-collectives [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-d TYPE] [-o OP] [-n ITERS]
//                           [-w WARMUP] [-c 0|1] [-g DEVICES | --devices N] [-C COLLECTIVE]
//
// The preset is MIMIC_PRESET's (else "default"); the device count is -g / --devices, else
// MIMIC_NUM_DEVICES, else 4 (the default preset alone has 2). Columns, as nccl-tests prints
// them, for out of place then in place:
//   size       bytes of the whole buffer (AllReduce's buffer, AllGather's recv, ReduceScatter's
//              send); count is its number of elements
//   time       simulated us per call: from the earliest start event to the latest end event
//              over all ranks' queues, divided by the calls timed back to back
//   algbw      size / time, GB/s
//   busbw      algbw x 2(n-1)/n for AllReduce, x (n-1)/n for AllGather and ReduceScatter: the
//              bandwidth each link carries (nccl-tests' definition)
//   #wrong     elements that differ from the expected result, in a separate checked call on
//              known data (-c 0: "N/A")
// Simulated time is deterministic, so a call takes the same time every iteration: the default
// iterations (-n 5, -w 1) are fewer than nccl-tests' 20 and 5. After the tables: the host wall
// time per small collective, against an empty group.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
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
constexpr const char* kKindNames[] = {"AllReduce", "AllGather", "ReduceScatter"};

struct TypeInfo {
  const char* name;  // nccl-tests' name
  mimicDataType type;
  size_t bytes;
  double unitRoundoff;  // 0: an integer type
};
constexpr TypeInfo kTypes[] = {{"float", mimicFloat32, 4, 0x1p-24},
                               {"half", mimicFloat16, 2, 0x1p-11},
                               {"bfloat16", mimicBfloat16, 2, 0x1p-8},
                               {"int32", mimicInt32, 4, 0},
                               {"int64", mimicInt64, 8, 0},
                               {"uint8", mimicUint8, 1, 0}};
constexpr const char* kOpNames[] = {"sum", "prod", "min", "max", "avg"};

struct Options {
  size_t minBytes = 1024, maxBytes = size_t{256} << 20;
  double factor = 4;
  TypeInfo type = kTypes[0];
  mimicReduceOp op = mimicSum;
  int iters = 5, warmup = 1;
  bool check = true;
  int devices = 0;  // 0: MIMIC_NUM_DEVICES, else 4
  std::vector<Kind> kinds{Kind::AllReduce, Kind::AllGather, Kind::ReduceScatter};
};

// ---- element values, as doubles, in each type's encoding ------------------------------------

uint16_t halfBits(float value) {  // exact for the small integers and powers of two used here
  if (std::isinf(value)) return value > 0 ? 0x7c00 : 0xfc00;
  if (value == 0) return 0;
  int exponent = 0;
  const float mantissa = std::frexp(std::fabs(value), &exponent);  // [0.5, 1)
  if (exponent > 16) return value > 0 ? 0x7c00 : 0xfc00;
  const uint16_t bits = uint16_t(((exponent + 14) << 10) | (uint16_t(mantissa * 2048) & 0x3ff));
  return value < 0 ? uint16_t(bits | 0x8000) : bits;
}

double halfValue(uint16_t bits) {
  const int exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  const double sign = (bits & 0x8000) ? -1 : 1;
  if (exponent == 31) return mantissa ? std::nan("") : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

void store(const TypeInfo& t, uint8_t* at, double value) {
  switch (t.type) {
    case mimicFloat32: {
      const float f = float(value);
      std::memcpy(at, &f, 4);
      break;
    }
    case mimicFloat16: {
      const uint16_t h = halfBits(float(value));
      std::memcpy(at, &h, 2);
      break;
    }
    case mimicBfloat16: {
      const float f = float(value);  // the values used are exact in bfloat16: truncation is exact
      uint32_t bits = 0;
      std::memcpy(&bits, &f, 4);
      const uint16_t b = uint16_t(bits >> 16);
      std::memcpy(at, &b, 2);
      break;
    }
    case mimicInt32: {
      const int32_t i = int32_t(value);
      std::memcpy(at, &i, 4);
      break;
    }
    case mimicInt64: {
      const int64_t i = int64_t(value);
      std::memcpy(at, &i, 8);
      break;
    }
    case mimicUint8:
      *at = uint8_t(value);
      break;
  }
}

double load(const TypeInfo& t, const uint8_t* at) {
  switch (t.type) {
    case mimicFloat32: {
      float f;
      std::memcpy(&f, at, 4);
      return f;
    }
    case mimicFloat16: {
      uint16_t h;
      std::memcpy(&h, at, 2);
      return halfValue(h);
    }
    case mimicBfloat16: {
      uint16_t b;
      std::memcpy(&b, at, 2);
      const uint32_t bits = uint32_t(b) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case mimicInt32: {
      int32_t i;
      std::memcpy(&i, at, 4);
      return i;
    }
    case mimicInt64: {
      int64_t i;
      std::memcpy(&i, at, 8);
      return double(i);
    }
    case mimicUint8:
      return *at;
  }
  return 0;
}

// Rank r's element i: small integers whose sum (at most 3 x 64 = 192), product (one rank
// holds 2, the others 1), minimum and maximum every type holds exactly, so that only avg
// rounds.
double input(mimicReduceOp op, int rank, int ranks, size_t i) {
  if (op == mimicProd) return size_t(rank) == i % size_t(ranks) ? 2 : 1;
  if (op == mimicMin || op == mimicMax) return double((rank * 7 + i * 3) % 5);
  return double((rank * 5 + i * 3) % 4);
}

double reduced(mimicReduceOp op, int ranks, size_t i) {
  double value = input(op, 0, ranks, i);
  for (int r = 1; r < ranks; ++r) {
    const double x = input(op, r, ranks, i);
    value = op == mimicProd  ? value * x
            : op == mimicMin ? std::min(value, x)
            : op == mimicMax ? std::max(value, x)
                             : value + x;
  }
  return op == mimicAvg ? value / ranks : value;
}

// How far a result may be from the exact one: 0 but for avg, whose division (or scaling of
// each input by 1/n) rounds. Floating types: each of the n scaled inputs and the n - 1
// additions round by at most u of their magnitude, all below the largest input 3: 2n u 3.
// Integer types: the quotient is truncated or rounded, below 1 away.
double tolerance(const Options& o, int ranks) {
  if (o.op != mimicAvg) return 0;
  return o.type.unitRoundoff ? 2.0 * ranks * o.type.unitRoundoff * 3 : 0.999;
}

// ---- the ranks and their buffers --------------------------------------------------------------

struct Ranks {
  int n = 0;
  std::vector<mimicComm> comms;
  std::vector<mimicQueue> queues;
  std::vector<void*> send, recv;
  std::vector<mimicEvent> starts, ends;
  void synchronize() {
    for (mimicQueue q : queues) MIMIC_CHECK(mimicQueueSynchronize(q));
  }
};

struct Call {
  Kind kind;
  size_t count;  // elements of the whole buffer
  bool inPlace;
};

// The rank's buffers for the call: (send, recv).
std::pair<void*, void*> buffers(const Ranks& k, const Options& o, const Call& c, int r) {
  uint8_t* recv = static_cast<uint8_t*>(c.inPlace ? k.send[r] : k.recv[r]);
  uint8_t* send = static_cast<uint8_t*>(k.send[r]);
  const size_t part = c.count / k.n * o.type.bytes;
  if (c.inPlace && c.kind == Kind::AllGather) return {recv + r * part, recv};
  if (c.inPlace && c.kind == Kind::ReduceScatter) return {send, send + r * part};
  return {send, recv};
}

void issue(Ranks& k, const Options& o, const Call& c) {
  const size_t part = c.count / k.n;
  COLL_CHECK(mimicGroupStart());
  for (int r = 0; r < k.n; ++r) {
    auto [send, recv] = buffers(k, o, c, r);
    if (c.kind == Kind::AllReduce) {
      COLL_CHECK(mimicAllReduce(send, recv, c.count, o.type.type, o.op, k.comms[r], k.queues[r]));
    } else if (c.kind == Kind::AllGather) {
      COLL_CHECK(mimicAllGather(send, recv, part, o.type.type, k.comms[r], k.queues[r]));
    } else {
      COLL_CHECK(mimicReduceScatter(send, recv, part, o.type.type, o.op, k.comms[r], k.queues[r]));
    }
  }
  COLL_CHECK(mimicGroupEnd());
}

// Runs the call once on known inputs and counts the elements that differ from the expected.
size_t wrongElements(Ranks& k, const Options& o, const Call& c) {
  const size_t part = c.count / k.n, width = o.type.bytes;
  const size_t sendCount = c.kind == Kind::AllGather ? part : c.count;
  std::vector<uint8_t> host(c.count * width);
  for (int r = 0; r < k.n; ++r) {
    for (size_t i = 0; i < sendCount; ++i) store(o.type, &host[i * width], input(o.op, r, k.n, i));
    MIMIC_CHECK(mimicMemcpy(buffers(k, o, c, r).first, host.data(), sendCount * width));
  }
  issue(k, o, c);
  k.synchronize();
  const double allowed = tolerance(o, k.n);
  size_t wrong = 0;
  for (int r = 0; r < k.n; ++r) {
    const size_t recvCount = c.kind == Kind::ReduceScatter ? part : c.count;
    MIMIC_CHECK(mimicMemcpy(host.data(), buffers(k, o, c, r).second, recvCount * width));
    for (size_t i = 0; i < recvCount; ++i) {
      double expected;
      if (c.kind == Kind::AllReduce) {
        expected = reduced(o.op, k.n, i);
      } else if (c.kind == Kind::AllGather) {
        expected = input(o.op, int(i / part), k.n, i % part);
      } else {
        expected = reduced(o.op, k.n, size_t(r) * part + i);
      }
      if (!(std::fabs(load(o.type, &host[i * width]) - expected) <= allowed)) ++wrong;
    }
  }
  return wrong;
}

struct Timing {
  double simUs, wallUs;
};

Timing timeCalls(Ranks& k, const Options& o, const Call& c, int warmup, int calls) {
  for (int i = 0; i < warmup; ++i) issue(k, o, c);  // scratch memory grows on a size's first
  k.synchronize();
  const auto t0 = Clock::now();
  for (int r = 0; r < k.n; ++r) MIMIC_CHECK(mimicEventRecord(k.starts[r], k.queues[r]));
  for (int i = 0; i < calls; ++i) issue(k, o, c);
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

// Prints one collective's table; returns the sum of busbw and the number of rows, for the
// average, and adds the wrong elements to *wrongTotal.
std::pair<double, int> table(Ranks& k, const Options& o, Kind kind, size_t* wrongTotal) {
  const int n = k.n;
  const double factor = (kind == Kind::AllReduce ? 2.0 : 1.0) * (n - 1) / n;
  const bool reduces = kind != Kind::AllGather;
  std::printf("#\n# %s, %d ranks, busbw = algbw x %.4f\n", kKindNames[int(kind)], n, factor);
  std::printf("#%75s%31s\n", "out-of-place", "in-place");
  std::printf("#%12s %13s %8s %6s %6s %8s %7s %7s %6s %8s %7s %7s %6s\n", "size", "count", "type",
              "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
              "#wrong");
  std::printf("#%12s %13s %8s %6s %6s %8s %7s %7s %6s %8s %7s %7s %6s\n", "(B)", "(elements)", "",
              "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  double busSum = 0;
  int rows = 0;
  const size_t grain = size_t(n) * o.type.bytes;  // every rank's part whole
  for (double asked = double(o.minBytes); asked <= double(o.maxBytes); asked *= o.factor) {
    const size_t bytes = size_t(asked) / grain * grain;
    if (bytes == 0) continue;
    std::printf(" %12zu %13zu %8s %6s %6d", bytes, bytes / o.type.bytes, o.type.name,
                reduces ? kOpNames[o.op] : "none", -1);
    for (bool inPlace : {false, true}) {
      const Call call{kind, bytes / o.type.bytes, inPlace};
      const Timing t = timeCalls(k, o, call, o.warmup, o.iters);
      const double algbw = double(bytes) / (t.simUs * 1e3);  // bytes per ns = GB/s
      const double busbw = algbw * factor;
      busSum += busbw;
      ++rows;
      std::printf(" %8.2f %7.2f %7.2f", t.simUs, algbw, busbw);
      if (o.check) {
        const size_t wrong = wrongElements(k, o, call);
        *wrongTotal += wrong;
        std::printf(" %6zu", wrong);
      } else {
        std::printf(" %6s", "N/A");
      }
    }
    std::printf("\n");
    std::fflush(stdout);  // a row at a time, as nccl-tests, also through a pipe
  }
  return {busSum, rows};
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

// ---- command line ----------------------------------------------------------------------------

constexpr const char* kUsage =
    "usage: mimic-bench-collectives [-b MINBYTES] [-e MAXBYTES] [-f FACTOR] [-d TYPE] [-o OP]\n"
    "                               [-n ITERS] [-w WARMUP] [-c 0|1] [-g N | --devices N]\n"
    "                               [-C allreduce|allgather|reducescatter|all]\n"
    "  -b, -e  smallest and largest size in bytes, K/M/G suffixes (default 1K, 256M; capped by\n"
    "          the device memory)\n"
    "  -f      size factor between rows (default 4)\n"
    "  -d      float, half, bfloat16, int32, int64 or uint8 (default float)\n"
    "  -o      sum, prod, min, max or avg (default sum)\n"
    "  -n, -w  timed and warm-up calls per size (default 5 and 1: simulated time is the same\n"
    "          every call)\n"
    "  -c      check each result on known data (default 1)\n"
    "  -g, --devices  devices, one rank each (default MIMIC_NUM_DEVICES, else 4)\n"
    "  -C      the collectives to run (default all)\n";

[[noreturn]] void usageError(const std::string& problem) {
  std::fprintf(stderr,
               "mimic-bench-collectives: %s\nhint: mimic-bench-collectives -h shows the "
               "usage\n",
               problem.c_str());
  std::exit(2);
}

size_t parseBytes(const std::string& flag, const std::string& text) {
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  double scale = 1;
  const std::string suffix = end ? end : "";
  if (suffix == "K" || suffix == "k") {
    scale = 1 << 10;
  } else if (suffix == "M" || suffix == "m") {
    scale = 1 << 20;
  } else if (suffix == "G" || suffix == "g") {
    scale = double(1 << 30);
  } else if (!suffix.empty() || end == text.c_str()) {
    usageError(flag + " takes a size in bytes (e.g. 1K, 32M), not '" + text + "'");
  }
  if (!(value >= 1)) usageError(flag + " must be at least 1 byte, not '" + text + "'");
  return size_t(value * scale);
}

long parseInt(const std::string& flag, const std::string& text, long low, long high) {
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '\0' || value < low || value > high) {
    usageError(flag + " takes a whole number from " + std::to_string(low) + " to " +
               std::to_string(high) + ", not '" + text + "'");
  }
  return value;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "-h" || flag == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc)
      usageError(flag.rfind("-", 0) == 0 ? flag + " needs a value"
                                         : "unknown argument '" + flag + "'");
    const std::string value = argv[++i];
    if (flag == "-b") {
      o.minBytes = parseBytes(flag, value);
    } else if (flag == "-e") {
      o.maxBytes = parseBytes(flag, value);
    } else if (flag == "-f") {
      char* end = nullptr;
      o.factor = std::strtod(value.c_str(), &end);
      if (*end != '\0' || !(o.factor > 1))
        usageError("-f takes a factor above 1, not '" + value + "'");
    } else if (flag == "-d") {
      const auto it = std::find_if(std::begin(kTypes), std::end(kTypes),
                                   [&](const TypeInfo& t) { return value == t.name; });
      if (it == std::end(kTypes)) {
        usageError("unknown type '" + value + "' (float, half, bfloat16, int32, int64, uint8)");
      }
      o.type = *it;
    } else if (flag == "-o") {
      const auto it = std::find(std::begin(kOpNames), std::end(kOpNames), value);
      if (it == std::end(kOpNames))
        usageError("unknown op '" + value + "' (sum, prod, min, max, avg)");
      o.op = mimicReduceOp(it - std::begin(kOpNames));
    } else if (flag == "-n") {
      o.iters = int(parseInt(flag, value, 1, 1000000));
    } else if (flag == "-w") {
      o.warmup = int(parseInt(flag, value, 0, 1000000));
    } else if (flag == "-c") {
      o.check = parseInt(flag, value, 0, 1) == 1;
    } else if (flag == "-g" || flag == "--devices") {
      o.devices = int(parseInt(flag, value, 1, MIMIC_MAX_DEVICES));
    } else if (flag == "-C") {
      if (value == "allreduce") {
        o.kinds = {Kind::AllReduce};
      } else if (value == "allgather") {
        o.kinds = {Kind::AllGather};
      } else if (value == "reducescatter") {
        o.kinds = {Kind::ReduceScatter};
      } else if (value != "all") {
        usageError("unknown collective '" + value + "' (allreduce, allgather, reducescatter, all)");
      }
    } else {
      usageError("unknown option '" + flag + "'");
    }
  }
  if (o.minBytes > o.maxBytes) usageError("-b is above -e");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::string overrides;
  if (o.devices) {
    overrides = "system.num_devices=" + std::to_string(o.devices);
  } else if (!std::getenv("MIMIC_NUM_DEVICES")) {
    overrides = "system.num_devices=4";
  }
  try {
    MIMIC_CHECK(mimicInitWithPreset(0, nullptr, overrides.empty() ? nullptr : overrides.c_str()));
    Ranks k;
    MIMIC_CHECK(mimicDeviceGetCount(&k.n));
    mimicDeviceProperties p{};
    MIMIC_CHECK(mimicDeviceGetProperties(0, &p));
    static const char* const kTopologies[] = {"ring", "full_mesh", "switch"};
    // Two buffers (send, recv) per rank: each at most a quarter of the device.
    o.maxBytes = std::min<size_t>(o.maxBytes, p.totalMemory / 4);
    if (o.minBytes > o.maxBytes) o.minBytes = o.maxBytes;
    std::printf(
        "# mimic-bench-collectives: preset %s, %d devices, %s device links of %.0f GB/s "
        "per direction, %llu ns per hop\n",
        p.preset, k.n, kTopologies[p.deviceLinkTopology], p.deviceLinkBandwidthGBps,
        (unsigned long long)p.deviceLinkLatencyNs);
    std::printf(
        "# minBytes %zu maxBytes %zu step: %g(factor) warmup iters: %d iters: %d "
        "validation: %d; times are simulated\n",
        o.minBytes, o.maxBytes, o.factor, o.warmup, o.iters, int(o.check));
    k.comms.resize(k.n);
    COLL_CHECK(mimicCommInitAll(k.comms.data(), k.n, nullptr));
    for (int r = 0; r < k.n; ++r) {
      k.queues.emplace_back();
      MIMIC_CHECK(mimicQueueCreate(r, 0, MIMIC_QUEUE_PRIORITY_LOW, &k.queues.back()));
      for (auto* buffers : {&k.send, &k.recv}) {
        buffers->emplace_back();
        MIMIC_CHECK(mimicMemAlloc(r, o.maxBytes, &buffers->back()));
        MIMIC_CHECK(mimicMemsetAsync(buffers->back(), 0, o.maxBytes, k.queues.back()));
      }
      k.starts.emplace_back();
      k.ends.emplace_back();
      MIMIC_CHECK(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &k.starts.back()));
      MIMIC_CHECK(mimicEventCreate(r, MIMIC_EVENT_DEFAULT, &k.ends.back()));
    }
    double busSum = 0;
    int rows = 0;
    size_t wrong = 0;
    for (Kind kind : o.kinds) {
      const auto [sum, count] = table(k, o, kind, &wrong);
      busSum += sum;
      rows += count;
    }
    std::printf("# Out of bounds values : %s\n",
                o.check ? (std::to_string(wrong) + (wrong ? " FAILED" : " OK")).c_str() : "N/A");
    std::printf("# Avg bus bandwidth    : %g\n#\n", rows ? busSum / rows : 0.0);

    const int calls = 2000;
    const double emptyUs = emptyGroupUs(k, calls);
    const Options small{8, 8, 2, kTypes[0], mimicSum, calls, 1, false, 0, {}};
    const Timing sim8 = timeCalls(k, small, {Kind::AllReduce, 2, false}, 1, calls);
    std::printf(
        "# host overhead per small collective (%d calls, one synchronize at the end):\n"
        "#   AllReduce of 8 B on %d ranks: %.2f us wall per call (%.2f us per rank), simulated "
        "%.2f us per call (wall/sim %.3f)\n"
        "#   empty group (start, end):      %.3f us wall per call (AllReduce / empty %.0fx)\n",
        calls, k.n, sim8.wallUs, sim8.wallUs / k.n, sim8.simUs, sim8.wallUs / sim8.simUs, emptyUs,
        sim8.wallUs / emptyUs);

    for (int r = 0; r < k.n; ++r) {
      MIMIC_CHECK(mimicQueueSynchronize(k.queues[r]));
      COLL_CHECK(mimicCommDestroy(k.comms[r]));
      MIMIC_CHECK(mimicEventDestroy(k.starts[r]));
      MIMIC_CHECK(mimicEventDestroy(k.ends[r]));
      MIMIC_CHECK(mimicMemFree(k.send[r]));
      MIMIC_CHECK(mimicMemFree(k.recv[r]));
      MIMIC_CHECK(mimicQueueDestroy(k.queues[r]));
    }
    return o.check && wrong ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "mimic-bench-collectives: %s\n", e.what());
    return 1;
  }
}
