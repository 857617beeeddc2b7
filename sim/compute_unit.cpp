#include "sim/compute_unit.h"

#include <algorithm>
#include <cmath>

namespace mimic::sim {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

SimTime ceilNs(double ns) {
  return static_cast<SimTime>(std::ceil(ns));
}

int pipeIndex(isa::Pipe pipe) {
  return pipe == isa::Pipe::Matrix ? 1 : 0;
}

}  // namespace

ComputeUnit::ComputeUnit(ComputeEngine& engine, int index, int dmaResource)
    : engine_(engine),
      index_(index),
      dmaResource_(dmaResource),
      nsPerCycle_{1.0 / engine.costs_.clockGHz, 1.0 / engine.costs_.matrixClockGHz} {}

void ComputeUnit::start(KernelLaunch& launch, size_t index) {
  int s;
  if (freeSlots_.empty()) {
    s = static_cast<int>(slots_.size());
    slots_.emplace_back();
  } else {
    s = freeSlots_.back();
    freeSlots_.pop_back();
  }
  Slot& slot = slots_[s];
  const SimTime now = nowNs();
  slot.launch = &launch;
  slot.workgroup = index;
  slot.trace = &launch.workgroups.trace(index);
  slot.pc = 0;
  slot.issue = static_cast<double>(now + engine_.config_.workgroupLaunchNs);
  slot.pipeDone[0] = slot.pipeDone[1] = slot.lastDmaDone = slot.issue;
  slot.dmaDone.clear();
  slot.dmasInFlight = 0;
  slot.waitingFor = 0;
  if (resident_++ == 0) residentSince_ = now;
  scratchpadInUse_ += launch.scratchpadBytes;
  resume(s);
}

void ComputeUnit::resume(int s) {
  using Kind = exec::TraceOp::Kind;
  Slot& slot = slots_[s];
  const exec::WorkgroupTrace& ops = *slot.trace;
  const double now = static_cast<double>(nowNs());
  for (; slot.pc < ops.size(); ++slot.pc) {
    const exec::TraceOp& op = ops[slot.pc];
    switch (op.kind) {
      case Kind::Issue:
        slot.issue += op.amount * nsPerCycle_[0];
        break;
      case Kind::Compute: {
        const int p = pipeIndex(op.pipe);
        double begin = std::max(slot.issue, pipeFree_[p]);
        if (op.afterOtherPipe) begin = std::max(begin, slot.pipeDone[1 - p]);
        pipeFree_[p] = slot.pipeDone[p] = begin + op.amount * nsPerCycle_[p];
        break;
      }
      case Kind::DmaLoad:
      case Kind::DmaStore: {
        const double at = std::max({slot.issue, slot.pipeDone[0], slot.pipeDone[1]});
        if (at > now) {
          engine_.queue_.at(ceilNs(at), [this, s] { resume(s); });
          return;
        }
        startDma(s, op);
        break;
      }
      case Kind::Wait:
        if (op.token < slot.dmaDone.size()) {
          if (slot.dmaDone[op.token] < 0) {
            slot.waitingFor = op.token;
            return;  // dmaArrived resumes it
          }
          slot.issue = std::max(slot.issue, slot.dmaDone[op.token]);
        }
        break;
      case Kind::WaitAll:
      case Kind::Barrier:
        if (slot.dmasInFlight > 0) {
          slot.waitingFor = kAllDmas;
          return;
        }
        slot.issue = std::max(slot.issue, slot.lastDmaDone);
        if (op.kind == Kind::Barrier) {
          slot.issue = std::max({slot.issue, slot.pipeDone[0], slot.pipeDone[1]});
        }
        break;
    }
  }
  // A faulting workgroup's trace stops short of its closing barrier: drain it the same way.
  if (slot.dmasInFlight > 0) {
    slot.waitingFor = kAllDmas;
    return;
  }
  const double end = std::max({slot.issue, slot.pipeDone[0], slot.pipeDone[1], slot.lastDmaDone});
  engine_.queue_.at(ceilNs(end), [this, s] { finish(s); });
}

void ComputeUnit::startDma(int s, const exec::TraceOp& op) {
  Slot& slot = slots_[s];
  const SimTime now = nowNs();
  ++stats_.dmas;
  if (slot.dmaDone.size() <= op.token) slot.dmaDone.resize(op.token + 1, 0);
  if (op.amount == 0) {
    slot.dmaDone[op.token] = static_cast<double>(now);
    return;
  }
  slot.dmaDone[op.token] = -1;
  ++slot.dmasInFlight;
  if (slot.pending.size() <= op.token) slot.pending.resize(op.token + 1);
  PendingDma& dma = slot.pending[op.token];
  dma.bytes = op.amount;
  SimTime latency = 0;
  engine_.dmaPath(*slot.launch, dmaResource_,
                  slot.launch->workgroups.region(slot.workgroup, op.token),
                  op.kind == exec::TraceOp::Kind::DmaStore, op.amount, &dma.path, &latency);
  // Two words fit std::function's own storage: no allocation per DMA.
  const uint64_t key = uint64_t(static_cast<uint32_t>(s)) << 32 | op.token;
  engine_.queue_.at(now + latency, [this, key] {
    flowDma(static_cast<int>(key >> 32), static_cast<uint32_t>(key));
  });
}

void ComputeUnit::flowDma(int s, uint32_t token) {
  const PendingDma& dma = slots_[s].pending[token];
  engine_.network_.start(dma.path, dma.bytes, [this, s, token] { dmaArrived(s, token); });
}

void ComputeUnit::dmaArrived(int s, uint32_t token) {
  Slot& slot = slots_[s];
  const double now = static_cast<double>(nowNs());
  slot.dmaDone[token] = now;
  slot.lastDmaDone = std::max(slot.lastDmaDone, now);
  --slot.dmasInFlight;
  if (slot.waitingFor == token || (slot.waitingFor == kAllDmas && slot.dmasInFlight == 0)) {
    slot.waitingFor = 0;
    resume(s);
  }
}

void ComputeUnit::finish(int s) {
  Slot& slot = slots_[s];
  KernelLaunch& launch = *slot.launch;
  slot.launch = nullptr;
  slot.trace = nullptr;
  freeSlots_.push_back(s);
  ++stats_.workgroups;
  scratchpadInUse_ -= launch.scratchpadBytes;
  if (--resident_ == 0) stats_.busyNs += nowNs() - residentSince_;
  engine_.workgroupFinished(launch, index_);
}

}  // namespace mimic::sim
