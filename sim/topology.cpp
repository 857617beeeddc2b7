#include "sim/topology.h"

#include <algorithm>

#include "sim/params.h"

namespace mimic::sim {

DeviceLinkConfig DeviceLinkConfig::read(ParamReader& params) {
  DeviceLinkConfig c;
  c.topology = params.choice("device_link.topology", "ring", {"ring", "full_mesh", "switch"},
                             "how devices are linked to each other");
  c.bandwidthGBps = params.number("device_link.bandwidth_gbps", 100.0,
                                  "bandwidth of one device link, per direction, GB/s");
  c.efficiency = params.efficiency(
      "device_link.efficiency",
      "share of a device link's peak that large transfers reach (packet and protocol overhead)");
  c.latencyNs = params.size("device_link.latency_ns", 700, "latency of one link hop, ns");
  requirePositive("device_link.bandwidth_gbps", c.bandwidthGBps);
  return c;
}

Topology::Topology(const DeviceLinkConfig& config, int numDevices, FlowNetwork& network)
    : config_(config), numDevices_(numDevices) {
  const double bw = config.bandwidthGBps * config.efficiency;
  if (config.topology == "ring") {
    // Link i joins device i and i+1; index 2i is the i -> i+1 direction, 2i+1 the reverse.
    for (int i = 0; i < numDevices; ++i) {
      int next = (i + 1) % numDevices;
      linkIds_.push_back(
          network.addResource("link " + std::to_string(i) + "->" + std::to_string(next), bw));
      linkIds_.push_back(
          network.addResource("link " + std::to_string(next) + "->" + std::to_string(i), bw));
    }
  } else if (config.topology == "full_mesh") {
    for (int s = 0; s < numDevices; ++s) {
      for (int d = 0; d < numDevices; ++d) {
        linkIds_.push_back(
            s == d
                ? -1
                : network.addResource("link " + std::to_string(s) + "->" + std::to_string(d), bw));
      }
    }
  } else {
    for (int i = 0; i < numDevices; ++i) {
      linkIds_.push_back(network.addResource("uplink " + std::to_string(i), bw));
      linkIds_.push_back(network.addResource("downlink " + std::to_string(i), bw));
    }
  }
}

int Topology::ringLink(int from, int to) const {
  if ((from + 1) % numDevices_ == to) return linkIds_[2 * from];
  return linkIds_[2 * to + 1];
}

Route Topology::route(int src, int dst) const {
  Route r;
  if (src == dst) return r;
  if (config_.topology == "ring") {
    int forward = (dst - src + numDevices_) % numDevices_;
    int step = forward <= numDevices_ - forward ? 1 : numDevices_ - 1;
    for (int at = src; at != dst;) {
      int next = (at + step) % numDevices_;
      r.links.push_back(ringLink(at, next));
      at = next;
    }
  } else if (config_.topology == "full_mesh") {
    r.links.push_back(linkIds_[src * numDevices_ + dst]);
  } else {
    r.links = {linkIds_[2 * src], linkIds_[2 * dst + 1]};
  }
  r.latencyNs = config_.latencyNs * r.links.size();
  return r;
}

void Topology::slowDown(const LinkSlowdown& slowdown, SimTime since) {
  TimedSlowdown timed{since, slowdown.factor, {}};
  if (slowdown.deviceA >= 0) {
    for (const auto& [from, to] : {std::pair{slowdown.deviceA, slowdown.deviceB},
                                   std::pair{slowdown.deviceB, slowdown.deviceA}}) {
      const Route r = route(from, to);
      timed.links.insert(timed.links.end(), r.links.begin(), r.links.end());
    }
  }
  std::lock_guard<std::mutex> lock(slowdownMutex_);
  slowdowns_.push_back(std::move(timed));
}

std::vector<PathUse> Topology::linkPath(const Route& route, SimTime now) const {
  std::lock_guard<std::mutex> lock(slowdownMutex_);
  // Strictly after `since`: a transfer starting at the very time of the call keeps the old
  // plan whether or not the simulation thread reached it first.
  while (slowdowns_.size() > 1 && slowdowns_[1].since < now) slowdowns_.pop_front();
  const TimedSlowdown& slowdown = slowdowns_.front();
  std::vector<PathUse> path;
  for (int link : route.links) {
    const bool slowed = slowdown.links.empty() ||
                        std::count(slowdown.links.begin(), slowdown.links.end(), link) > 0;
    path.push_back({link, slowed ? slowdown.factor : 1.0});
  }
  return path;
}

}  // namespace mimic::sim
