// What functional execution hands to the timing model: each workgroup's work, per pipe, in
// program order, and the kernel's counters.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/exec/dma_walk.h"
#include "sim/isa/isa.h"

namespace mimic::exec {

struct TraceOp {
  enum class Kind : uint8_t {
    Issue,     // scalar work and instruction issue: `amount` cycles on the scalar pipe
    Compute,   // `amount` cycles on the vector or matrix pipe (`pipe`); with `afterOtherPipe`
               // it uses what the other pipe's earlier work wrote or still reads, so it waits
               // for that work to finish
    DmaLoad,   // `amount` bytes HBM -> scratchpad, completing token `token`; the bytes it
               // touches are the workgroup's DmaRegion number token - 1
    DmaStore,  // `amount` bytes scratchpad -> HBM
    Wait,      // issue stalls until DMA `token` has completed
    WaitAll,   // ... until every DMA has
    Barrier,   // ... until every pipe has drained
  };
  Kind kind;
  isa::Pipe pipe = isa::Pipe::Scalar;
  uint32_t token = 0;
  uint64_t amount = 0;
  bool afterOtherPipe = false;

  bool operator==(const TraceOp& o) const {
    return kind == o.kind && pipe == o.pipe && token == o.token && amount == o.amount &&
           afterOtherPipe == o.afterOtherPipe;
  }
};

using WorkgroupTrace = std::vector<TraceOp>;

// The HBM side of one DMA: the timing model's cache looks its bytes up.
struct DmaRegion {
  uint64_t address = 0;
  DmaDescriptor descriptor;

  bool operator==(const DmaRegion& o) const;
};

struct KernelCounters {
  uint64_t workgroups = 0;
  uint64_t instructions[isa::kNumPipes] = {};
  uint64_t pipeCycles[isa::kNumPipes] = {};  // busy cycles summed over workgroups
  uint64_t flops = 0;
  uint64_t bytesRead = 0;  // HBM, by DMA loads and atomics
  uint64_t bytesWritten = 0;
  // SLoads executed: the only way scratchpad data (produced by vector, matrix or DMA work)
  // reaches the scalar registers that steer control flow and addresses. In timing-only mode
  // they read 0, so a kernel with any may be timed differently from full mode.
  uint64_t dataDependentReads = 0;

  void add(const KernelCounters& o);
};

enum class FaultKind : uint8_t {
  None,
  IllegalAddress,      // HBM outside any live allocation, or scratchpad outside its size
  MisalignedAddress,   // an operand not aligned to its element size
  ScratchpadHazard,    // scratchpad touched while a DMA into it is in flight
  IllegalInstruction,  // an operation the element type does not support
  WatchdogTimeout,     // the workgroup ran past the watchdog limit
};

struct Fault {
  FaultKind kind = FaultKind::None;
  std::string message;
  uint64_t address = 0;  // the HBM byte an illegal access hit
};

}  // namespace mimic::exec
