#include "sim/compute_unit.h"

#include <cmath>

namespace mimic::sim {
namespace {

double nowNs() {
  return static_cast<double>(sc_core::sc_time_stamp().value());
}

}  // namespace

ComputeUnit::ComputeUnit(sc_core::sc_module_name name, ComputeEngine& engine,
                         const exec::CostModel& costs, uint64_t hbmLatencyNs, FlowNetwork& network,
                         int hbmResource, int dmaResource)
    : sc_module(name),
      engine_(engine),
      costs_(costs),
      hbmLatencyNs_(hbmLatencyNs),
      network_(network),
      dmaPath_{{hbmResource, 1.0}, {dmaResource, 1.0}} {
  SC_HAS_PROCESS(ComputeUnit);
  SC_THREAD(run);
  SC_METHOD(startDueDmas);
  sensitive << startDue_;
  dont_initialize();
}

void ComputeUnit::run() {
  for (;;) {
    while (engine_.pending_.empty()) sc_core::wait(engine_.workAvailable_);
    ComputeEngine::Pending work = engine_.pending_.front();
    engine_.pending_.pop_front();
    const SimTime began = sc_core::sc_time_stamp().value();
    replay(*work.launch->workgroups[work.index]);
    ++stats_.workgroups;
    stats_.busyNs += sc_core::sc_time_stamp().value() - began;
    --work.launch->remaining;
    engine_.workgroupDone_.notify(sc_core::SC_ZERO_TIME);
  }
}

void ComputeUnit::syncTo(double ns) {
  const double now = nowNs();
  if (ns > now) {
    sc_core::wait(sc_core::sc_time(std::ceil(ns - now), sc_core::SC_NS));
  }
}

void ComputeUnit::waitForDma(uint32_t token) {
  // A token this workgroup never issued (a program may wait on 0 to mean "nothing") is done.
  if (dmaDone_.find(token) == dmaDone_.end()) return;
  while (!dmaDone_[token]) sc_core::wait(dmaFinished_);
}

void ComputeUnit::replay(const exec::WorkgroupTrace& trace) {
  using Kind = exec::TraceOp::Kind;
  const double nsPerCycle = 1.0 / costs_.clockGHz;
  double issue = nowNs();      // where instruction issue has got to
  double computeFree = issue;  // when the vector and matrix pipes are free again
  dmaDone_.clear();
  for (const exec::TraceOp& op : trace) {
    switch (op.kind) {
      case Kind::Issue:
        issue += op.amount * nsPerCycle;
        break;
      case Kind::Compute:
        computeFree = std::max(issue, computeFree) + op.amount * nsPerCycle;
        break;
      case Kind::DmaLoad:
      case Kind::DmaStore:
        // A DMA starts once the compute issued before it is done: it may read its results
        // (a store) or overwrite its inputs (a load).
        syncTo(std::max(issue, computeFree));
        dmaDone_[op.token] = op.amount == 0;
        if (op.amount > 0) issueDma(op.token, op.amount);
        break;
      case Kind::Wait:
        syncTo(issue);
        waitForDma(op.token);
        issue = std::max(issue, nowNs());
        break;
      case Kind::WaitAll:
      case Kind::Barrier:
        syncTo(op.kind == Kind::Barrier ? std::max(issue, computeFree) : issue);
        for (const auto& [token, done] : dmaDone_) waitForDma(token);
        issue = std::max(issue, nowNs());
        if (op.kind == Kind::Barrier) computeFree = issue;
        break;
    }
  }
  syncTo(std::max(issue, computeFree));
}

void ComputeUnit::issueDma(uint32_t token, uint64_t bytes) {
  const SimTime now = sc_core::sc_time_stamp().value();
  pending_.push_back({now + hbmLatencyNs_, token, bytes});
  ++stats_.dmas;
  if (pending_.size() == 1) {
    startDue_.notify(sc_core::sc_time(static_cast<double>(hbmLatencyNs_), sc_core::SC_NS));
  }
}

void ComputeUnit::startDueDmas() {
  const SimTime now = sc_core::sc_time_stamp().value();
  while (!pending_.empty() && pending_.front().startAt <= now) {
    const uint32_t token = pending_.front().token;
    const uint64_t bytes = pending_.front().bytes;
    pending_.pop_front();
    network_.start(dmaPath_, bytes, [this, token] {
      dmaDone_[token] = true;
      dmaFinished_.notify(sc_core::SC_ZERO_TIME);
    });
  }
  if (!pending_.empty()) {
    startDue_.notify(
        sc_core::sc_time(static_cast<double>(pending_.front().startAt - now), sc_core::SC_NS));
  }
}

}  // namespace mimic::sim
