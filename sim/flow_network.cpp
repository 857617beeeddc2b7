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
// A resource whose rising flows all got their rate (their weights summed in floating point).
constexpr double kNoDemand = 1e-12;

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
  flows_.push_back(Flow{classOf(path), static_cast<double>(bytes), std::move(onArrived)});
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

bool FlowNetwork::pathLess(const std::vector<PathUse>& a, const std::vector<PathUse>& b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(), [](const PathUse& x, const PathUse& y) {
        return x.resource != y.resource ? x.resource < y.resource : x.weight < y.weight;
      });
}

std::vector<int>::iterator FlowNetwork::liveClassAtOrAfter(const std::vector<PathUse>& path) {
  return std::lower_bound(
      liveClasses_.begin(), liveClasses_.end(), path,
      [this](int c, const std::vector<PathUse>& p) { return pathLess(classes_[c].path, p); });
}

int FlowNetwork::classOf(const std::vector<PathUse>& path) {
  auto it = liveClassAtOrAfter(path);
  if (it == liveClasses_.end() || pathLess(path, classes_[*it].path)) {
    int c;
    if (freeClasses_.empty()) {
      c = static_cast<int>(classes_.size());
      classes_.emplace_back();
    } else {
      c = freeClasses_.back();
      freeClasses_.pop_back();
    }
    Class& cls = classes_[c];
    cls.path.assign(path.begin(), path.end());  // reuses a freed class's room
    cls.members = 0;
    cls.rate = 0;
    it = liveClasses_.insert(it, c);
  }
  ++classes_[*it].members;
  return *it;
}

void FlowNetwork::leave(int cls) {
  Class& c = classes_[cls];
  if (--c.members > 0) return;
  liveClasses_.erase(liveClassAtOrAfter(c.path));
  freeClasses_.push_back(cls);
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
    for (Flow& f : flows_) f.remaining -= rateOf(f) * dt;
  }
  lastUpdate_ = now;
}

void FlowNetwork::finishArrived() {
  SimTime now = nowNs();
  size_t kept = 0;
  for (size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    // A flow that started this instant has no rate yet and has not arrived.
    const double rate = rateOf(f);
    if (rate > 0 && hasArrived(f.remaining, rate)) {
      leaving_.push_back(f.cls);
      for (const PathUse& use : classes_[f.cls].path) {
        Resource& r = resources_[use.resource];
        if (--r.users == 0) {
          r.busyNs += now - r.busySince;
          deactivate(use.resource);
        }
      }
      arrived_.push_back(std::move(f.onArrived));
    } else {
      if (kept != i) flows_[kept] = std::move(f);
      ++kept;
    }
  }
  flows_.erase(flows_.begin() + static_cast<std::ptrdiff_t>(kept), flows_.end());
  for (int cls : leaving_) leave(cls);
  leaving_.clear();
}

void FlowNetwork::assignRates() {
  // Water-filling: the level at which resource r fills is (bandwidth - what fixed flows use)
  // / (weight of the flows still rising). The resource that fills first fixes its rising flows
  // at that level, which moves the levels of the other resources on their paths.
  for (int r : active_) {
    Resource& res = resources_[r];
    res.fixedUse = 0;
    res.demand = 0;
    res.classes.clear();
  }
  for (int c : liveClasses_) {
    Class& cls = classes_[c];
    cls.rate = 0;
    for (const PathUse& use : cls.path) {
      Resource& res = resources_[use.resource];
      res.demand += cls.members * use.weight;
      res.classes.push_back(c);
    }
  }
  auto levelOf = [this](int r) {
    Resource& res = resources_[r];
    return FillLevel{(res.bandwidthGBps - res.fixedUse) / res.demand, r, ++res.version};
  };
  // Levels are distinct by resource, so the heap's layout does not change what it pops.
  heap_.clear();
  for (int r : active_) {
    if (resources_[r].demand > 0) heap_.push_back(levelOf(r));
  }
  std::make_heap(heap_.begin(), heap_.end());
  fixed_.assign(classes_.size(), false);
  while (!heap_.empty()) {
    std::pop_heap(heap_.begin(), heap_.end());
    const FillLevel top = heap_.back();
    heap_.pop_back();
    Resource& full = resources_[top.resource];
    if (top.version != full.version || full.demand <= kNoDemand) continue;
    const double level = std::max(0.0, top.level);
    full.demand = 0;
    touched_.clear();
    for (int c : full.classes) {
      if (fixed_[c]) continue;
      fixed_[c] = true;
      Class& cls = classes_[c];
      cls.rate = level;
      for (const PathUse& use : cls.path) {
        Resource& res = resources_[use.resource];
        res.fixedUse += cls.members * use.weight * level;
        res.demand -= cls.members * use.weight;
        if (!res.touched) {
          res.touched = true;
          touched_.push_back(use.resource);
        }
      }
    }
    // Each resource whose level moved is pushed once, after the whole round.
    for (int r : touched_) {
      resources_[r].touched = false;
      if (r != top.resource && resources_[r].demand > kNoDemand) {
        heap_.push_back(levelOf(r));
        std::push_heap(heap_.begin(), heap_.end());
      }
    }
  }
}

void FlowNetwork::scheduleNextFinish() {
  nextFinish_.cancel();
  if (flows_.empty()) return;
  double soonest = INFINITY;
  for (const Flow& f : flows_) soonest = std::min(soonest, f.remaining / rateOf(f));
  SimTime delay = std::max<SimTime>(1, static_cast<SimTime>(std::ceil(soonest - kRoundingSlackNs)));
  nextFinish_.notify(sc_core::sc_time(static_cast<double>(delay), sc_core::SC_NS));
}

void FlowNetwork::onStarted() {
  assignRates();
  scheduleNextFinish();
}

void FlowNetwork::onFinish() {
  advanceTo(nowNs());
  finishArrived();
  // The callbacks may start flows; the rates are recomputed once, after all of them.
  for (auto& callback : arrived_) callback();
  arrived_.clear();
  started_.cancel();
  assignRates();
  scheduleNextFinish();
}

}  // namespace mimic::sim
