// What each instruction costs on a compute unit, in cycles, and the CU's other limits.
// Declared here, where the executor uses them, and read from the preset's "isa.*" and
// "compute.*" fields.
#pragma once

#include <cstdint>

#include "sim/isa/isa.h"

namespace mimic::sim {
class ParamReader;
}

namespace mimic::exec {

struct CostModel {
  int lanes;                     // vector lanes: elements per vector cycle
  int f64Lanes;                  // f64 elements per vector cycle (FP64 units are fewer)
  double clockGHz;               // cycles per ns
  double matrixClockGHz;         // the clock the matrix pipe sustains
  uint32_t scalarCycles;         // any scalar instruction, and issuing any other
  uint32_t sloadCycles;          // a scalar load from the scratchpad (SLoad)
  uint32_t vectorCycles;         // per lane-group, simple elementwise ops
  uint32_t vectorComplexCycles;  // per lane-group: divide, sqrt, transcendental functions
  uint32_t matrixF32MacsPerCycle;
  uint32_t matrixF16MacsPerCycle;  // f16 and bf16
  uint32_t dmaIssueCycles;
  double dmaBandwidthGBps;  // one CU's DMA engine
  uint64_t watchdogInstructions;

  static CostModel read(sim::ParamReader& params, int lanes, double clockMHz);

  // Cycles one instruction occupies its pipe; `elements` is its element count (rows x n) and
  // `macs` the multiply-accumulates of an Mma.
  uint64_t cycles(const isa::Instr& instr, uint64_t elements, uint64_t macs) const;
};

}  // namespace mimic::exec
