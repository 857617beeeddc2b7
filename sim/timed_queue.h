// Callbacks due at simulated times, run by one SC_METHOD in the order (time, order scheduled).
//
// Units that keep time themselves (the compute units replaying workgroup traces) use it instead
// of SC_THREADs of their own: a step costs a heap operation rather than a context switch, the
// number of units does not multiply the threads of the simulation, and callbacks due at the
// same time always run in the same order.
#pragma once

#include <systemc>

#include <cstdint>
#include <functional>
#include <vector>

#include "sim/sim_time.h"

namespace mimic::sim {

class TimedQueue : public sc_core::sc_module {
 public:
  explicit TimedQueue(sc_core::sc_module_name name);

  // Runs `fn` at simulated time `when` (not earlier than now), in simulation context.
  void at(SimTime when, std::function<void()> fn);

 private:
  // The heap orders small entries; the callbacks wait in slots of their own, so that sifting
  // moves no std::function.
  struct Entry {
    SimTime when;
    uint64_t order;
    uint32_t slot;
  };
  static bool later(const Entry& a, const Entry& b) {
    return a.when != b.when ? a.when > b.when : a.order > b.order;
  }
  void runDue();
  void wakeAt(SimTime when);

  std::vector<Entry> heap_;
  std::vector<std::function<void()>> slots_;
  std::vector<uint32_t> freeSlots_;
  uint64_t scheduled_ = 0;
  SimTime wakeAt_ = UINT64_MAX;  // the time due_ is notified for, if any
  bool running_ = false;         // runDue reschedules when it is done
  sc_core::sc_event due_;
};

}  // namespace mimic::sim
