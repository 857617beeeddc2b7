#include "racecheck.h"

#include <algorithm>

#include "sim/device.h"
#include "sim/device_memory.h"
#include "sim/simulator.h"

namespace mimic::driver {
namespace {

// Accesses kept per queue and device: enough for the commands in flight between two
// synchronisations of a training step; older ones are assumed ordered (a missed race, never a
// false one).
constexpr size_t kRecentPerQueue = 4096;

}  // namespace

void RaceChecker::join(Clock& into, const Clock& from) {
  if (into.size() < from.size()) into.resize(from.size(), 0);
  for (size_t i = 0; i < from.size(); ++i) into[i] = std::max(into[i], from[i]);
}

RaceChecker::QueueClock& RaceChecker::queue(uint64_t id) {
  QueueClock& q = queues_[id];
  if (q.clock.size() <= id) q.clock.resize(id + 1, 0);
  return q;
}

void RaceChecker::onCommand(uint64_t queueId, const std::vector<DeviceAccess>& accesses,
                            const std::string& what, uint64_t correlation) {
  std::lock_guard<std::mutex> lock(mutex_);
  QueueClock& q = queue(queueId);
  join(q.clock, host_);
  const uint64_t epoch = ++q.clock[queueId];
  for (const DeviceAccess& a : accesses) {
    const Prior now{a.low, a.high, a.write, queueId, epoch, correlation, what};
    for (const auto& [other, recent] : recent_[a.device]) {
      if (other == queueId) continue;
      // Epochs grow along a queue's list: only its newest accesses can be unordered.
      const uint64_t orderedUpTo = other < q.clock.size() ? q.clock[other] : 0;
      for (auto p = recent.rbegin(); p != recent.rend() && p->epoch > orderedUpTo; ++p) {
        if (p->high <= a.low || a.high <= p->low || (!p->write && !a.write)) continue;
        report(*p, now, a.device);
      }
    }
  }
  for (const DeviceAccess& a : accesses) {
    std::deque<Prior>& recent = recent_[a.device][queueId];
    recent.push_back({a.low, a.high, a.write, queueId, epoch, correlation, what});
    if (recent.size() > kRecentPerQueue) recent.pop_front();
  }
}

void RaceChecker::onSubmit(uint64_t queueId, const sim::Completion* completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  QueueClock& q = queue(queueId);
  q.last = completion;
  q.lastClock = q.clock;
}

void RaceChecker::onEventRecord(const void* event, uint64_t queueId,
                                const sim::Completion* completion) {
  std::lock_guard<std::mutex> lock(mutex_);
  QueueClock& q = queue(queueId);
  join(q.clock, host_);
  events_[event] = {completion, q.clock};
}

void RaceChecker::onQueueWait(uint64_t queueId, const void* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = events_.find(event);
  if (it != events_.end()) join(queue(queueId).clock, it->second.second);
}

void RaceChecker::onEventDestroy(const void* event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(event);
}

void RaceChecker::onHostWait(const std::vector<std::shared_ptr<sim::Completion>>& completions) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& c : completions) {
    for (const auto& [id, q] : queues_)
      if (q.last == c.get()) join(host_, q.lastClock);
    for (const auto& [event, record] : events_)
      if (record.first == c.get()) join(host_, record.second);
  }
}

void RaceChecker::onFree(int device, uint64_t base, uint64_t size) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [queueId, recent] : recent_[device]) {
    recent.erase(
        std::remove_if(recent.begin(), recent.end(),
                       [&](const Prior& p) { return p.low < base + size && base < p.high; }),
        recent.end());
  }
}

std::string RaceChecker::issuer(const Prior& access) const {
  return "queue " + std::to_string(access.queue) + ", correlation " +
         std::to_string(access.correlation) + sanitizer_.hostOp(access.correlation);
}

void RaceChecker::report(const Prior& earlier, const Prior& later, int device) {
  const std::string key = std::to_string(device) + "|" + earlier.what + "|" + later.what + "|" +
                          std::to_string(earlier.queue) + "|" + std::to_string(later.queue);
  const uint64_t low = std::max(earlier.low, later.low);
  sanitizer_.report(FindingKind::Race, key,
                    later.what + " (" + issuer(later) + ") " + (later.write ? "writes" : "reads") +
                        " bytes that " + earlier.what + " (" + issuer(earlier) + ") " +
                        (earlier.write ? "wrote" : "read") +
                        ", and no event or host wait orders them (a missing wait_stream or "
                        "record_stream?): device " +
                        std::to_string(device) + ", " + sim_.device(device).memory().describe(low));
}

}  // namespace mimic::driver
