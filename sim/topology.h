// The device-to-device links and how a peer transfer is routed over them.
//
// Within a node (device_link.topology):
//   ring       device i links to device i+1 (mod the node's devices); a transfer takes the
//              shorter way round
//   full_mesh  every ordered pair of devices has its own link
//   switch     every device has one uplink to and one downlink from the node's switch
// Between nodes (network.*, when network.nodes > 1): every device has its own NIC (as DGX and
// HGX systems have one per GPU) into a non-blocking fat tree, so a transfer between devices of
// different nodes crosses the sender's NIC and the receiver's, and the network's latency.
// Devices are numbered node by node: device d is on node d / devicesPerNode.
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

struct NetworkConfig {
  int nodes = 1;
  double nicGBps = 0;      // per device, per direction, peak
  double efficiency = 1;   // the share of the peak that large RDMA transfers reach
  uint64_t latencyNs = 0;  // NIC to NIC through the fabric's switches, one way

  static NetworkConfig read(ParamReader& params, int numDevices);
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
  // Adds one flow-network resource per link direction (and per NIC direction).
  Topology(const DeviceLinkConfig& config, int numDevices, FlowNetwork& network,
           const NetworkConfig& scaleOut = {});

  Route route(int srcDevice, int dstDevice) const;
  // A switch topology's uplink from, and downlink into, a device (in-switch reduction).
  Route routeToSwitch(int srcDevice) const;
  Route routeFromSwitch(int dstDevice) const;
  int devicesPerNode() const { return devicesPerNode_; }

  // Transfers that start after simulated time `since` see `slowdown`. Any thread: the host
  // passes its own clock, so which transfers are slowed never depends on host speed.
  void slowDown(const LinkSlowdown& slowdown, SimTime since);
  // The route's links as flow-network path uses, weighted by the slow-down in effect at `now`
  // (a transfer's start). Simulation thread, with `now` never decreasing.
  std::vector<PathUse> linkPath(const Route& route, SimTime now) const;
  // Which slow-down plan is in effect at `now`: equal numbers, equal link weights. Any thread.
  uint64_t slowdownEpoch(SimTime now) const;

 private:
  struct TimedSlowdown {
    SimTime since;
    double factor;
    std::vector<int> links;  // resource ids; empty: every link
    uint64_t epoch = 0;
  };

  // The resource of the hop from -> to, neighbours on node `base`'s ring (local indices).
  int ringLink(int base, int from, int to) const;
  Route nodeRoute(int src, int dst) const;

  DeviceLinkConfig config_;
  NetworkConfig scaleOut_;
  int numDevices_;
  int devicesPerNode_;
  std::vector<int> linkIds_;  // per node, in the node's layout (see the constructor)
  std::vector<int> nicOut_, nicIn_;
  mutable std::mutex slowdownMutex_;
  // In order of `since`; the front is in effect. linkPath drops plans that newer ones replaced.
  mutable std::deque<TimedSlowdown> slowdowns_{{0, 1.0, {}, 0}};
  uint64_t nextEpoch_ = 1;
};

}  // namespace mimic::sim
