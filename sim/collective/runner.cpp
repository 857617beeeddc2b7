#include "sim/collective/runner.h"

#include <algorithm>

namespace mimic::sim::coll {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

void waitNs(SimTime ns) {
  if (ns > 0) sc_core::wait(sc_core::sc_time(static_cast<double>(ns), sc_core::SC_NS));
}

}  // namespace

CollectiveRunner::CollectiveRunner(FlowNetwork& network, const CollectivePaths& paths,
                                   const CollectiveConfig& config, sc_core::sc_event& anyCompleted)
    : network_(network), paths_(paths), config_(config), anyCompleted_(anyCompleted) {}

void CollectiveRunner::join(CollectiveRendezvous& rendezvous) {
  if (++rendezvous.arrived < rendezvous.expected) {
    while (!rendezvous.finished) sc_core::wait(anyCompleted_);
    return;
  }
  const SimTime start = nowNs();
  run(rendezvous.plan);
  ++stats_.collectives;
  stats_.steps += rendezvous.plan.steps.size();
  stats_.busyNs += nowNs() - start;
  rendezvous.finished = true;
  anyCompleted_.notify(sc_core::SC_ZERO_TIME);
}

void CollectiveRunner::run(const Plan& plan) {
  waitNs(config_.launchNs);
  sc_core::sc_event stepDone;
  for (const Step& step : plan.steps) {
    uint64_t latency = 0;
    for (const Transfer& t : step.transfers) {
      if (t.bytes > 0) latency = std::max(latency, paths_.latencyNs(t));
    }
    waitNs(config_.stepNsOf(*plan.protocol) + step.extraNs + latency);
    int pending = 0;
    for (const Transfer& t : step.transfers) {
      if (t.bytes == 0) continue;
      ++pending;
      network_.start(paths_.path(t, *plan.protocol, nowNs()), t.bytes, [&pending, &stepDone] {
        if (--pending == 0) stepDone.notify(sc_core::SC_ZERO_TIME);
      });
    }
    if (pending > 0) sc_core::wait(stepDone);
  }
}

}  // namespace mimic::sim::coll
