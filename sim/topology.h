// The device-to-device links and how a peer transfer is routed over them.
//
//   ring       device i links to device i+1 (mod n); a transfer takes the shorter way round
//   full_mesh  every ordered pair of devices has its own link
//   switch     every device has one uplink to and one downlink from a switch
//
// Every link is full duplex: each direction is a separate flow-network resource with the whole
// per-direction bandwidth. A route's latency is the per-hop latency times the hops.
//
// Fault injection can slow links down (LinkSlowdown): a slowed link carries each byte `factor`
// times (its weight in the flow network), so every transfer over it gets 1/factor of the
// bandwidth it would have had, shared as before. Latency is unchanged.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "sim/flow_network.h"
#include "sim/sim_time.h"

namespace mimic::sim {

class ParamReader;

struct DeviceLinkConfig {
  std::string topology;
  double bandwidthGBps;  // per link, per direction, peak
  double efficiency;     // the share of the peak that large transfers reach
  uint64_t latencyNs;    // per hop

  static DeviceLinkConfig read(ParamReader& params);
};

struct LinkSlowdown {
  double factor = 1;  // 1: full speed
  int deviceA = -1;   // only the links of the routes between these two devices; -1: every link
  int deviceB = -1;
};

struct Route {
  std::vector<int> links;  // flow-network resource ids, in order
  uint64_t latencyNs = 0;
};

class Topology {
 public:
  // Adds one flow-network resource per link direction.
  Topology(const DeviceLinkConfig& config, int numDevices, FlowNetwork& network);

  Route route(int srcDevice, int dstDevice) const;

  // Transfers that start after simulated time `since` see `slowdown`. Any thread: the host
  // passes its own clock, so which transfers are slowed never depends on host speed.
  void slowDown(const LinkSlowdown& slowdown, SimTime since);
  // The route's links as flow-network path uses, weighted by the slow-down in effect at `now`
  // (a transfer's start). Simulation thread, with `now` never decreasing.
  std::vector<PathUse> linkPath(const Route& route, SimTime now) const;

 private:
  struct TimedSlowdown {
    SimTime since;
    double factor;
    std::vector<int> links;  // resource ids; empty: every link
  };

  int ringLink(int from, int to) const;  // the resource of the hop from -> to (neighbours)

  DeviceLinkConfig config_;
  int numDevices_;
  std::vector<int> linkIds_;
  mutable std::mutex slowdownMutex_;
  // In order of `since`; the front is in effect. linkPath drops plans that newer ones replaced.
  mutable std::deque<TimedSlowdown> slowdowns_{{0, 1.0, {}}};
};

}  // namespace mimic::sim
