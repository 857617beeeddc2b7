#include "sim/collective/paths.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "sim/collective/protocol.h"

namespace mimic::sim::coll {

CollectivePaths::CollectivePaths(const Topology& topology, const FlowNetwork& network,
                                 const CollectiveConfig& config, std::vector<int> hbm,
                                 std::vector<std::vector<int>> channels)
    : topology_(topology),
      network_(network),
      config_(config),
      hbm_(std::move(hbm)),
      channels_(std::move(channels)) {}

Route CollectivePaths::routeOf(const Transfer& t) const {
  if (t.src == kSwitch) return topology_.routeFromSwitch(t.dst);
  if (t.dst == kSwitch) return topology_.routeToSwitch(t.src);
  return topology_.route(t.src, t.dst);
}

std::vector<PathUse> CollectivePaths::path(const Transfer& t, const Protocol& protocol,
                                           SimTime now) const {
  std::vector<PathUse> uses;
  const int sender = t.src == kSwitch ? t.dst : t.src;
  if (!channels_.empty()) {
    const auto& own = channels_[sender];
    uses.push_back({own[size_t(t.channel) % own.size()], config_.channelWeight(protocol)});
  }
  if (t.src != kSwitch) uses.push_back({hbm_[t.src], 1.0});
  const double wire = t.wire / protocol.payloadShare;
  for (PathUse link : topology_.linkPath(routeOf(t), now)) {
    uses.push_back({link.resource, link.weight * wire});
  }
  if (t.dst != kSwitch) {
    const double reads = t.reduce ? 2.0 : 1.0;
    if (t.src == t.dst) {
      uses.back().weight += reads;  // a local copy: the same HBM, read and written
    } else {
      uses.push_back({hbm_[t.dst], reads});
    }
  }
  return uses;
}

uint64_t CollectivePaths::latencyNs(const Transfer& t) const {
  return routeOf(t).latencyNs;
}

SimTime estimateNs(const Plan& plan, const CollectivePaths& paths, const CollectiveConfig& config,
                   SimTime now) {
  double total = double(config.launchNs);
  std::unordered_map<int, double> load;
  for (const Step& step : plan.steps) {
    uint64_t latency = 0;
    load.clear();
    for (const Transfer& t : step.transfers) {
      if (t.bytes == 0) continue;
      latency = std::max(latency, paths.latencyNs(t));
      for (const PathUse& use : paths.path(t, *plan.protocol, now)) {
        load[use.resource] += double(t.bytes) * use.weight;
      }
    }
    double busiest = 0;
    for (const auto& [resource, bytes] : load) {
      busiest = std::max(busiest, bytes / paths.bandwidthGBps(resource));
    }
    total += double(config.stepNsOf(*plan.protocol) + step.extraNs + latency) + busiest;
  }
  return SimTime(std::llround(total));
}

}  // namespace mimic::sim::coll
