// Driver hand-off costs, host wall time, measured in one run:
//   round trip  one empty command (a host function) and a queue synchronize; target median
//               <= 10 us
//   throughput  asynchronous enqueues per second until the queue drains; target >= 200k/s
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "mimic/mimic.hpp"

namespace {

using Clock = std::chrono::steady_clock;

void nothing(void*) {}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, size_t(p * double(values.size())))];
}

void roundTrip(mimicQueue queue) {
  const int warmup = 2000, samples = 20000;
  std::vector<double> us;
  us.reserve(samples);
  for (int i = 0; i < warmup + samples; ++i) {
    auto t0 = Clock::now();
    MIMIC_CHECK(mimicLaunchHostFunc(queue, nothing, nullptr));
    MIMIC_CHECK(mimicQueueSynchronize(queue));
    auto t1 = Clock::now();
    if (i >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  const double median = percentile(us, 0.5);
  std::printf(
      "round trip   host function + synchronize: median %.2f us, p99 %.2f us"
      "   target median <= 10 us: %s (%.2fx)\n",
      median, percentile(us, 0.99), median <= 10.0 ? "met" : "MISSED", 10.0 / median);
}

void throughput(mimicQueue queue, void* dev) {
  const int commands = 200000;
  for (int round = 0; round < 2; ++round) {  // the first round warms up
    auto t0 = Clock::now();
    for (int i = 0; i < commands; ++i) MIMIC_CHECK(mimicMemsetAsync(dev, i & 0xff, 1, queue));
    auto t1 = Clock::now();
    MIMIC_CHECK(mimicQueueSynchronize(queue));
    auto t2 = Clock::now();
    if (round == 0) continue;
    const double enqueue = commands / std::chrono::duration<double>(t1 - t0).count();
    const double drained = commands / std::chrono::duration<double>(t2 - t0).count();
    std::printf(
        "throughput   1-byte memsets: %.0f enqueues/s, %.0f commands/s completed"
        "   target >= 200000/s: %s (%.2fx)\n",
        enqueue, drained, enqueue >= 200000 ? "met" : "MISSED", enqueue / 200000.0);
  }
}

}  // namespace

int main() {
  try {
    MIMIC_CHECK(mimicInit(0));
    mimicQueue queue;
    MIMIC_CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));
    void* dev = nullptr;
    MIMIC_CHECK(mimicMemAlloc(0, 4096, &dev));
    roundTrip(queue);
    throughput(queue, dev);
  } catch (const mimic::Error& e) {
    std::fprintf(stderr, "mimic-bench-driver: %s\n", e.what());
    return 1;
  }
  return 0;
}
