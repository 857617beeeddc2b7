// The driver's activity trace (mimic_trace.h): records wait here, in call order, until read;
// a record's times come from its command's completion once the simulation has run it.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>

#include "mimic/mimic_trace.h"
#include "sim/command.h"
#include "sim/compute_engine.h"
#include "sim/system_config.h"

namespace mimic::driver {

// The counters of a finished kernel, as mimicQueueGetKernelCounters reports them.
void fillCounters(const sim::KernelLaunch& launch, const sim::SystemConfig& config,
                  mimicKernelCounters* out);

class Tracer {
 public:
  explicit Tracer(const sim::SystemConfig& config) : config_(config) {}

  bool active() const { return active_.load(std::memory_order_relaxed); }
  // Both return false if tracing already was in (or out of) that state.
  bool start(size_t capacity);
  bool stop();

  // Adds `record`, stamped with the calling thread's correlation id. Its start and end are
  // taken from `begin` (or `done`) and `done` when set; a kernel's counters from `launch`.
  void add(mimicActivity record, std::shared_ptr<sim::Completion> done = nullptr,
           std::shared_ptr<sim::Completion> begin = nullptr,
           std::shared_ptr<sim::KernelLaunch> launch = nullptr);
  size_t read(mimicActivity* out, size_t capacity);
  uint64_t dropped() const { return dropped_.load(); }

  static uint64_t exchangeCorrelation(uint64_t id);
  static uint64_t correlation();

 private:
  struct Pending {
    mimicActivity record;
    std::shared_ptr<sim::Completion> begin, done;
    std::shared_ptr<sim::KernelLaunch> launch;
  };

  const sim::SystemConfig& config_;
  std::atomic<bool> active_{false};
  std::atomic<uint64_t> dropped_{0};
  std::mutex mutex_;
  size_t capacity_ = 0;
  std::deque<Pending> pending_;
};

// A record of `kind` for work on `device`'s queue `queueId`, everything else empty.
mimicActivity newActivity(mimicActivityKind kind, int device, uint64_t queueId);

}  // namespace mimic::driver
