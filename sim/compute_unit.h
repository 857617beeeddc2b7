// One compute unit: the workgroups resident on it replay their traces (see compute_engine.h).
//
// Each resident workgroup keeps its own issue clock: scalar work and issue only advance it.
// Vector and matrix instructions run on the CU's two pipes, which every resident workgroup
// shares: an instruction starts when it is issued and its pipe is free (and, if it uses what
// the other pipe produced, when that is done). A DMA starts once its workgroup's earlier compute
// is done (it may read a result or overwrite an input); the workgroup meets simulated time only
// there and at waits. Nothing here is a SystemC process: the engine's timed queue and the flow
// network's callbacks step the workgroups.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/compute_engine.h"

namespace mimic::sim {

struct ComputeUnitStats {
  uint64_t workgroups = 0;
  SimTime busyNs = 0;  // time with at least one workgroup resident
  uint64_t dmas = 0;
};

class ComputeUnit {
 public:
  ComputeUnit(ComputeEngine& engine, int index, int dmaResource);

  // Starts workgroup `index` of `launch` now, in a free slot.
  void start(KernelLaunch& launch, size_t index);
  int resident() const { return resident_; }
  uint64_t scratchpadInUse() const { return scratchpadInUse_; }
  const ComputeUnitStats& stats() const { return stats_; }

 private:
  static constexpr uint32_t kAllDmas = UINT32_MAX;
  struct PendingDma {
    std::vector<PathUse> path;
    uint64_t bytes = 0;
  };
  struct Slot {
    KernelLaunch* launch = nullptr;
    size_t workgroup = 0;  // of the launch
    const exec::WorkgroupTrace* trace = nullptr;
    size_t pc = 0;
    double issue = 0;             // the issue clock, ns
    double pipeDone[2] = {0, 0};  // when its vector / matrix work is done
    std::vector<double> dmaDone;  // by token: when it completed; < 0 while in flight
    // By token: the path and size of a DMA waiting out its latency. Kept with the slot, so
    // that later workgroups reuse the room instead of allocating per DMA.
    std::vector<PendingDma> pending;
    double lastDmaDone = 0;
    int dmasInFlight = 0;
    uint32_t waitingFor = 0;  // a token, kAllDmas, or 0
  };

  // Replays slot `s` from its current instruction at simulated time now, until it must wait.
  void resume(int s);
  void startDma(int s, const exec::TraceOp& op);
  // The DMA of `token` has waited out its latency: its bytes start to flow.
  void flowDma(int s, uint32_t token);
  void dmaArrived(int s, uint32_t token);
  void finish(int s);

  ComputeEngine& engine_;
  int index_;
  int dmaResource_;
  double nsPerCycle_[2];  // vector (and scalar), matrix
  std::vector<Slot> slots_;
  std::vector<int> freeSlots_;
  double pipeFree_[2] = {0, 0};  // vector, matrix
  int resident_ = 0;
  uint64_t scratchpadInUse_ = 0;
  SimTime residentSince_ = 0;
  ComputeUnitStats stats_;
};

}  // namespace mimic::sim
