// The host's position in simulated time.
//
// Simulated time must not depend on how fast the host happens to run, so the host is modelled
// too: its clock advances by a fixed cost per submitted command (the driver's CPU time to
// build and submit it) and per status poll, and jumps to the completion time of whatever it
// blocks on, plus the time the driver takes to notice and wake the thread. The model never runs
// ahead of the host clock unless a host thread is blocked, so every command arrives at a
// deterministic time.
#pragma once

#include <cstdint>

namespace mimic::sim {

class ParamReader;

struct HostClockConfig {
  uint64_t submitNs;  // host time to submit one command
  uint64_t pollNs;    // host time of one status query (mimicQueueQuery, mimicEventQuery)
  uint64_t syncNs;    // from a completion until the host thread blocked on it runs again

  static HostClockConfig read(ParamReader& params);
};

}  // namespace mimic::sim
