#include "sim/flow_network.h"

#include <algorithm>
#include <cmath>

namespace mimic::sim {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

// Rates are doubles and completion times whole nanoseconds: a flow has arrived when what is
// left would cross in under a picosecond, and a finish time within 1e-4 ns of a whole
// nanosecond is not rounded up to the next one.
bool hasArrived(double remaining, double rate) {
  return remaining <= rate * 1e-3 + 1e-9;
}
constexpr double kRoundingSlackNs = 1e-4;

}  // namespace

FlowNetwork::FlowNetwork(sc_core::sc_module_name name) : sc_module(name) {
  SC_HAS_PROCESS(FlowNetwork);
  SC_METHOD(onFinish);
  sensitive << nextFinish_;
  dont_initialize();
}

int FlowNetwork::addResource(const std::string& name, double bandwidthGBps) {
  Resource r;
  r.name = name;
  r.bandwidthGBps = bandwidthGBps;
  resources_.push_back(r);
  return static_cast<int>(resources_.size()) - 1;
}

void FlowNetwork::transfer(const std::vector<PathUse>& path, uint64_t bytes) {
  if (bytes == 0 || path.empty()) return;
  sc_core::sc_event arrived;
  start(path, bytes, [&arrived] { arrived.notify(sc_core::SC_ZERO_TIME); });
  sc_core::wait(arrived);
}

void FlowNetwork::start(const std::vector<PathUse>& path, uint64_t bytes,
                        std::function<void()> onArrived) {
  if (bytes == 0 || path.empty()) {
    onArrived();
    return;
  }
  SimTime now = nowNs();
  advanceTo(now);
  flows_.push_back(
      std::make_unique<Flow>(Flow{path, static_cast<double>(bytes), 0, std::move(onArrived)}));
  for (const PathUse& use : path) {
    Resource& r = resources_[use.resource];
    if (r.users++ == 0) r.busySince = now;
    r.bytes += use.weight * static_cast<double>(bytes);
  }
  assignRates();
  scheduleNextFinish();
}

void FlowNetwork::advanceTo(SimTime now) {
  double dt = static_cast<double>(now - lastUpdate_);
  if (dt > 0) {
    for (const auto& f : flows_) f->remaining -= f->rate * dt;
  }
  lastUpdate_ = now;
}

std::vector<std::function<void()>> FlowNetwork::finishArrived() {
  SimTime now = nowNs();
  std::vector<std::function<void()>> callbacks;
  auto arrived = [](const std::unique_ptr<Flow>& f) { return hasArrived(f->remaining, f->rate); };
  for (const auto& f : flows_) {
    if (!arrived(f)) continue;
    for (const PathUse& use : f->path) {
      Resource& r = resources_[use.resource];
      if (--r.users == 0) r.busyNs += now - r.busySince;
    }
    callbacks.push_back(std::move(f->onArrived));
  }
  flows_.erase(std::remove_if(flows_.begin(), flows_.end(), arrived), flows_.end());
  return callbacks;
}

void FlowNetwork::assignRates() {
  // Progressive filling: raise every unfrozen flow's rate together until some resource is
  // full, freeze the flows that cross it, and repeat with what is left.
  // Scratch vectors are members: this runs at every start and end of every DMA.
  std::vector<double>& capacityLeft = capacityLeft_;
  std::vector<double>& demand = demand_;
  std::vector<bool>& frozen = frozen_;
  capacityLeft.resize(resources_.size());
  for (size_t i = 0; i < resources_.size(); ++i) capacityLeft[i] = resources_[i].bandwidthGBps;
  frozen.assign(flows_.size(), false);
  for (const auto& f : flows_) f->rate = 0;
  size_t unfrozen = flows_.size();
  demand.resize(resources_.size());
  while (unfrozen > 0) {
    std::fill(demand.begin(), demand.end(), 0.0);
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (frozen[i]) continue;
      for (const PathUse& use : flows_[i]->path) demand[use.resource] += use.weight;
    }
    double step = INFINITY;
    for (size_t r = 0; r < resources_.size(); ++r) {
      if (demand[r] > 0) step = std::min(step, capacityLeft[r] / demand[r]);
    }
    for (size_t r = 0; r < resources_.size(); ++r) capacityLeft[r] -= step * demand[r];
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (frozen[i]) continue;
      flows_[i]->rate += step;
      for (const PathUse& use : flows_[i]->path) {
        if (capacityLeft[use.resource] <= 1e-12 * resources_[use.resource].bandwidthGBps) {
          frozen[i] = true;
        }
      }
      if (frozen[i]) --unfrozen;
    }
  }
}

void FlowNetwork::scheduleNextFinish() {
  nextFinish_.cancel();
  if (flows_.empty()) return;
  double soonest = INFINITY;
  for (const auto& f : flows_) soonest = std::min(soonest, f->remaining / f->rate);
  SimTime delay = std::max<SimTime>(1, static_cast<SimTime>(std::ceil(soonest - kRoundingSlackNs)));
  nextFinish_.notify(sc_core::sc_time(static_cast<double>(delay), sc_core::SC_NS));
}

void FlowNetwork::onFinish() {
  advanceTo(nowNs());
  std::vector<std::function<void()>> callbacks = finishArrived();
  assignRates();
  scheduleNextFinish();
  // Last: a callback may start new flows.
  for (auto& callback : callbacks) callback();
}

}  // namespace mimic::sim
