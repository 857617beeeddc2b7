// racecheck (MIMIC_SANITIZE=racecheck): two queues touch the same device bytes, at least one
// of them writing, and no event or host wait orders them — a missing wait_stream or
// record_stream. Ordering is tracked with vector clocks (one entry per queue), so a race is
// found whether or not the simulated timing happened to order the two commands.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "sanitizer.h"
#include "sim/command.h"

namespace mimic::sim {
class Simulator;
}

namespace mimic::driver {

struct DeviceAccess {
  int device;
  uint64_t low;
  uint64_t high;
  bool write;
};

class RaceChecker {
 public:
  RaceChecker(sim::Simulator& sim, Sanitizer& sanitizer) : sim_(sim), sanitizer_(sanitizer) {}
  bool enabled() const { return sanitizer_.on(MIMIC_SANITIZE_RACECHECK); }

  // A command about to be queued on queue `queueId`; `what` names it in reports.
  void onCommand(uint64_t queueId, const std::vector<DeviceAccess>& accesses,
                 const std::string& what, uint64_t correlation);
  // Any command queued: a host wait for it orders the host after the queue up to it.
  void onSubmit(uint64_t queueId, const sim::Completion* completion);
  // An event record or wait queued on a queue (the record's completion, for host waits);
  // events are known by their handles.
  void onEventRecord(const void* event, uint64_t queueId, const sim::Completion* completion);
  void onQueueWait(uint64_t queueId, const void* event);
  void onEventDestroy(const void* event);
  // The host waited for these commands: what it queues next is ordered after them.
  void onHostWait(const std::vector<std::shared_ptr<sim::Completion>>& completions);
  // Freed memory forgets its accesses (mimicMemFree waits for the device first).
  void onFree(int device, uint64_t base, uint64_t size);

 private:
  using Clock = std::vector<uint64_t>;  // by queue id
  struct Prior {
    uint64_t low, high;
    bool write;
    uint64_t queue, epoch, correlation;
    std::string what;
  };
  struct QueueClock {
    Clock clock;
    const sim::Completion* last = nullptr;  // the queue's latest command
    Clock lastClock;                        // the queue's clock when it was queued
  };
  static void join(Clock& into, const Clock& from);
  QueueClock& queue(uint64_t id);
  void report(const Prior& earlier, const Prior& later, int device);
  std::string issuer(const Prior& access) const;

  sim::Simulator& sim_;
  Sanitizer& sanitizer_;
  std::mutex mutex_;
  Clock host_;
  std::map<uint64_t, QueueClock> queues_;
  std::map<const void*, std::pair<const sim::Completion*, Clock>> events_;
  // Recent accesses by device and queue, oldest first.
  std::map<int, std::map<uint64_t, std::deque<Prior>>> recent_;
};

}  // namespace mimic::driver
