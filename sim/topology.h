// The device-to-device links and how a peer transfer is routed over them.
//
//   ring       device i links to device i+1 (mod n); a transfer takes the shorter way round
//   full_mesh  every ordered pair of devices has its own link
//   switch     every device has one uplink to and one downlink from a switch
//
// Every link is full duplex: each direction is a separate flow-network resource with the whole
// per-direction bandwidth. A route's latency is the per-hop latency times the hops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mimic::sim {

class ParamReader;
class FlowNetwork;

struct DeviceLinkConfig {
  std::string topology;
  double bandwidthGBps;  // per link, per direction
  uint64_t latencyNs;    // per hop

  static DeviceLinkConfig read(ParamReader& params);
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

 private:
  int ringLink(int from, int to) const;  // the resource of the hop from -> to (neighbours)

  DeviceLinkConfig config_;
  int numDevices_;
  std::vector<int> linkIds_;
};

}  // namespace mimic::sim
