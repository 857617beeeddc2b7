// A collective as the model runs it: steps of concurrent transfers. A step starts when the
// previous one has ended; each costs the protocol's per-step latency plus the longest route's
// latency, then moves its transfers over the flow network together.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mimic::sim::coll {

struct Protocol;

// The switch as an end of a transfer: the device sends to it (its uplink only) or receives
// from it (its downlink only); the switch reduces or multicasts in between (NVLS).
constexpr int kSwitch = -1;

struct Transfer {
  int src = 0;          // device, or kSwitch
  int dst = 0;          // device, or kSwitch
  uint64_t bytes = 0;   // payload; the protocol's flags ride on top
  int channel = 0;      // which of the sending (or, from the switch, receiving) device's channels
  bool reduce = false;  // the receiver combines it with its own data (reads that too)
  double wire = 1;      // link bytes per payload byte beyond the protocol's (switch reduction)
};

struct Step {
  std::vector<Transfer> transfers;
  uint64_t extraNs = 0;  // a latency of the algorithm's own (NVLS's multicast barriers)
};

struct Plan {
  std::string algorithm;
  const Protocol* protocol = nullptr;
  int channels = 1;
  std::vector<Step> steps;
};

}  // namespace mimic::sim::coll
