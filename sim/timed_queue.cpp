#include "sim/timed_queue.h"

#include <algorithm>

namespace mimic::sim {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

}  // namespace

TimedQueue::TimedQueue(sc_core::sc_module_name name) : sc_module(name) {
  SC_HAS_PROCESS(TimedQueue);
  SC_METHOD(runDue);
  sensitive << due_;
  dont_initialize();
}

void TimedQueue::at(SimTime when, std::function<void()> fn) {
  uint32_t slot;
  if (freeSlots_.empty()) {
    slot = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::move(fn));
  } else {
    slot = freeSlots_.back();
    freeSlots_.pop_back();
    slots_[slot] = std::move(fn);
  }
  heap_.push_back({std::max(when, nowNs()), scheduled_++, slot});
  std::push_heap(heap_.begin(), heap_.end(), later);
  if (!running_) wakeAt(heap_.front().when);
}

void TimedQueue::wakeAt(SimTime when) {
  if (when >= wakeAt_) return;
  const SimTime now = nowNs();
  // A pending later notification is overridden by an earlier one (SystemC's rule).
  due_.notify(sc_core::sc_time(static_cast<double>(when - now), sc_core::SC_NS));
  wakeAt_ = when;
}

void TimedQueue::runDue() {
  const SimTime now = nowNs();
  wakeAt_ = UINT64_MAX;
  running_ = true;
  while (!heap_.empty() && heap_.front().when <= now) {
    std::pop_heap(heap_.begin(), heap_.end(), later);
    const uint32_t slot = heap_.back().slot;
    heap_.pop_back();
    std::function<void()> fn = std::move(slots_[slot]);
    freeSlots_.push_back(slot);
    fn();  // may schedule more, now or later
  }
  running_ = false;
  if (!heap_.empty()) wakeAt(heap_.front().when);
}

}  // namespace mimic::sim
