// Functional execution of one workgroup: runs its ISA program on a scratchpad, moves the real
// bytes (none in timing-only mode), catches the faults a real device would raise, and records
// the work per pipe for the timing model (trace.h).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/exec/cost_model.h"
#include "sim/exec/trace.h"
#include "sim/isa/module.h"

namespace mimic::sim {
class DeviceMemory;
}

namespace mimic::exec {

struct Dim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// An atomic add of a workgroup. They are applied after all workgroups of the launch have run,
// in workgroup order, so the result never depends on how host threads interleave.
struct AtomicAdd {
  uint64_t address;
  isa::DType type;
  std::vector<uint8_t> values;
};

// A byte range of HBM a workgroup touched (the bounding range of one strided DMA).
struct HbmAccess {
  uint64_t low;
  uint64_t high;
  bool write;
};

struct WorkgroupResult {
  WorkgroupTrace trace;
  std::vector<DmaRegion> dmaRegions;  // one per DMA, in token order
  uint64_t scratchpadBytes = 0;       // the end of the highest scratchpad byte it touched
  std::vector<HbmAccess> accesses;    // only if the executor records them
  KernelCounters counters;
  std::vector<AtomicAdd> atomics;
  Fault fault;
};

class Executor {
 public:
  // recordAccesses: fill WorkgroupResult::accesses (the driver's racecheck wants them).
  // timingOnly: skip the vector and matrix arithmetic, the DMAs' bytes and the atomics' updates
  // while leaving the same trace, DMA regions, counters and faults; scalar work still runs. An
  // SLoad then reads 0 instead of the data that work would have produced (see
  // KernelCounters::dataDependentReads).
  Executor(const CostModel& costs, uint64_t scratchpadBytes, sim::DeviceMemory& memory,
           bool recordAccesses = false, bool timingOnly = false)
      : costs_(costs),
        scratchpadBytes_(scratchpadBytes),
        memory_(memory),
        recordAccesses_(recordAccesses),
        timingOnly_(timingOnly) {}
  bool recordsAccesses() const { return recordAccesses_; }

  // `scratchpad` is the caller's buffer of scratchpadBytes; `args` holds fn.argBytes bytes.
  void run(const isa::Function& fn, const uint8_t* args, Dim3 grid, Dim3 id, uint8_t* scratchpad,
           WorkgroupResult& out) const;

  // Applies the atomics of every workgroup, in order.
  void applyAtomics(const std::vector<AtomicAdd>& atomics) const;

 private:
  CostModel costs_;
  uint64_t scratchpadBytes_;
  sim::DeviceMemory& memory_;
  bool recordAccesses_;
  bool timingOnly_;
};

}  // namespace mimic::exec
