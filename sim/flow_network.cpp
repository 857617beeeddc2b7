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
  SC_METHOD(onStarted);
  sensitive << started_;
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
    if (r.users++ == 0) {
      r.busySince = now;
      activate(use.resource);
    }
    r.bytes += use.weight * static_cast<double>(bytes);
  }
  // Rates change once for every flow that starts in this instant, after the last has.
  started_.notify(sc_core::SC_ZERO_TIME);
}

void FlowNetwork::activate(int r) {
  active_.push_back(r);
}

void FlowNetwork::deactivate(int r) {
  auto it = std::find(active_.begin(), active_.end(), r);
  *it = active_.back();
  active_.pop_back();
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
  // A flow that started this instant has no rate yet and has not arrived.
  auto arrived = [](const std::unique_ptr<Flow>& f) {
    return f->rate > 0 && hasArrived(f->remaining, f->rate);
  };
  for (const auto& f : flows_) {
    if (!arrived(f)) continue;
    for (const PathUse& use : f->path) {
      Resource& r = resources_[use.resource];
      if (--r.users == 0) {
        r.busyNs += now - r.busySince;
        deactivate(use.resource);
      }
    }
    callbacks.push_back(std::move(f->onArrived));
  }
  flows_.erase(std::remove_if(flows_.begin(), flows_.end(), arrived), flows_.end());
  return callbacks;
}

void FlowNetwork::assignRates() {
  // Progressive filling: raise every unfrozen flow's rate together until some resource is
  // full, freeze the flows that cross it, and repeat with what is left. Only resources that
  // carry flows take part.
  for (int r : active_) resources_[r].capacityLeft = resources_[r].bandwidthGBps;
  frozen_.assign(flows_.size(), false);
  for (const auto& f : flows_) f->rate = 0;
  size_t unfrozen = flows_.size();
  while (unfrozen > 0) {
    for (int r : active_) resources_[r].demand = 0;
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (frozen_[i]) continue;
      for (const PathUse& use : flows_[i]->path) resources_[use.resource].demand += use.weight;
    }
    double step = INFINITY;
    for (int r : active_) {
      const Resource& res = resources_[r];
      if (res.demand > 0) step = std::min(step, res.capacityLeft / res.demand);
    }
    for (int r : active_) resources_[r].capacityLeft -= step * resources_[r].demand;
    for (size_t i = 0; i < flows_.size(); ++i) {
      if (frozen_[i]) continue;
      flows_[i]->rate += step;
      for (const PathUse& use : flows_[i]->path) {
        const Resource& res = resources_[use.resource];
        if (res.capacityLeft <= 1e-12 * res.bandwidthGBps) frozen_[i] = true;
      }
      if (frozen_[i]) --unfrozen;
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

void FlowNetwork::onStarted() {
  assignRates();
  scheduleNextFinish();
}

void FlowNetwork::onFinish() {
  advanceTo(nowNs());
  std::vector<std::function<void()>> callbacks = finishArrived();
  // The callbacks may start flows; the rates are recomputed once, after all of them.
  for (auto& callback : callbacks) callback();
  started_.cancel();
  assignRates();
  scheduleNextFinish();
}

}  // namespace mimic::sim
