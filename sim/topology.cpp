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

NetworkConfig NetworkConfig::read(ParamReader& params, int numDevices) {
  NetworkConfig c;
  c.nodes = int(params.size("network.nodes", 1,
                            "nodes the devices are spread over, evenly and in order (device d "
                            "is on node d / (system.num_devices / network.nodes))"));
  c.nicGBps = params.number("network.nic_gbps", 25.0,
                            "bandwidth of each device's NIC into the scale-out network, per "
                            "direction, GB/s (200 Gb/s InfiniBand: 25)");
  c.efficiency = params.efficiency("network.efficiency",
                                   "share of a NIC's line rate that large RDMA transfers reach");
  c.latencyNs = params.size("network.latency_ns", 3000,
                            "one-way latency from a device's NIC to another node's, through "
                            "the fabric's switches, ns");
  requirePositive("network.nodes", c.nodes);
  requirePositive("network.nic_gbps", c.nicGBps);
  if (numDevices % c.nodes != 0) {
    throw ConfigError(ConfigError::Kind::InvalidValue,
                      "network.nodes = " + std::to_string(c.nodes) +
                          " does not divide system.num_devices = " + std::to_string(numDevices));
  }
  return c;
}

Topology::Topology(const DeviceLinkConfig& config, int numDevices, FlowNetwork& network,
                   const NetworkConfig& scaleOut)
    : config_(config),
      scaleOut_(scaleOut),
      numDevices_(numDevices),
      devicesPerNode_(numDevices / std::max(1, scaleOut.nodes)) {
  const double bw = config.bandwidthGBps * config.efficiency;
  const int n = devicesPerNode_;
  const auto name = [](const char* what, int a, int b) {
    return std::string(what) + std::to_string(a) + "->" + std::to_string(b);
  };
  for (int base = 0; base < numDevices; base += n) {
    if (config.topology == "ring") {
      // Link i joins local devices i and i+1; 2i is the i -> i+1 direction, 2i+1 the reverse.
      for (int i = 0; i < n; ++i) {
        const int next = (i + 1) % n;
        linkIds_.push_back(network.addResource(name("link ", base + i, base + next), bw));
        linkIds_.push_back(network.addResource(name("link ", base + next, base + i), bw));
      }
    } else if (config.topology == "full_mesh") {
      for (int s = 0; s < n; ++s) {
        for (int d = 0; d < n; ++d) {
          linkIds_.push_back(s == d ? -1
                                    : network.addResource(name("link ", base + s, base + d), bw));
        }
      }
    } else {
      for (int i = 0; i < n; ++i) {
        linkIds_.push_back(network.addResource("uplink " + std::to_string(base + i), bw));
        linkIds_.push_back(network.addResource("downlink " + std::to_string(base + i), bw));
      }
    }
  }
  if (scaleOut.nodes > 1) {
    const double nic = scaleOut.nicGBps * scaleOut.efficiency;
    for (int d = 0; d < numDevices; ++d) {
      nicOut_.push_back(network.addResource("nic out " + std::to_string(d), nic));
      nicIn_.push_back(network.addResource("nic in " + std::to_string(d), nic));
    }
  }
}

int Topology::ringLink(int base, int from, int to) const {
  const int n = devicesPerNode_;
  const int* links = &linkIds_[2 * base];
  if ((from + 1) % n == to) return links[2 * from];
  return links[2 * to + 1];
}

Route Topology::nodeRoute(int src, int dst) const {
  Route r;
  const int n = devicesPerNode_;
  const int base = src - src % n;
  const int s = src % n, d = dst % n;
  if (config_.topology == "ring") {
    const int forward = (d - s + n) % n;
    const int step = forward <= n - forward ? 1 : n - 1;
    for (int at = s; at != d;) {
      const int next = (at + step) % n;
      r.links.push_back(ringLink(base, at, next));
      at = next;
    }
  } else if (config_.topology == "full_mesh") {
    r.links.push_back(linkIds_[base * n + s * n + d]);
  } else {
    r.links = {linkIds_[2 * src], linkIds_[2 * dst + 1]};
  }
  r.latencyNs = config_.latencyNs * r.links.size();
  return r;
}

Route Topology::route(int src, int dst) const {
  if (src == dst) return {};
  if (src / devicesPerNode_ == dst / devicesPerNode_) return nodeRoute(src, dst);
  return {{nicOut_[src], nicIn_[dst]}, scaleOut_.latencyNs};
}

Route Topology::routeToSwitch(int src) const {
  return {{linkIds_[2 * src]}, config_.latencyNs};
}

Route Topology::routeFromSwitch(int dst) const {
  return {{linkIds_[2 * dst + 1]}, config_.latencyNs};
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
  timed.epoch = nextEpoch_++;
  slowdowns_.push_back(std::move(timed));
}

uint64_t Topology::slowdownEpoch(SimTime now) const {
  std::lock_guard<std::mutex> lock(slowdownMutex_);
  uint64_t epoch = slowdowns_.front().epoch;
  for (const TimedSlowdown& s : slowdowns_) {
    if (s.since < now) epoch = s.epoch;
  }
  return epoch;
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
