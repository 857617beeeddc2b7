#include "sim/exec/cost_model.h"

#include <algorithm>

#include "sim/params.h"

namespace mimic::exec {
namespace {

bool isComplexUnary(isa::UnaryOp op) {
  switch (op) {
    case isa::UnaryOp::Exp:
    case isa::UnaryOp::Log:
    case isa::UnaryOp::Sqrt:
    case isa::UnaryOp::Rsqrt:
    case isa::UnaryOp::Tanh:
    case isa::UnaryOp::Sigmoid:
    case isa::UnaryOp::Erf:
    case isa::UnaryOp::Sin:
    case isa::UnaryOp::Cos:
    case isa::UnaryOp::Recip:
      return true;
    default:
      return false;
  }
}

bool isComplexBinary(isa::BinaryOp op) {
  return op == isa::BinaryOp::Div || op == isa::BinaryOp::Pow || op == isa::BinaryOp::Rem;
}

// f64 vector work runs on the CU's FP64 units; a cast to or from f64 too.
bool isF64(const isa::Instr& instr) {
  return instr.type == isa::DType::F64 ||
         (instr.op == isa::Opcode::VCast && instr.type2 == isa::DType::F64);
}

}  // namespace

CostModel CostModel::read(sim::ParamReader& params, int lanes, double clockMHz) {
  CostModel c;
  c.lanes = lanes;
  const uint64_t f64Lanes = params.size(
      "compute.f64_lanes", 0,
      "f64 vector lanes per CU: f64 elements per vector cycle (the FP64 FMA rate per clock); "
      "0: half of compute.lanes, the FP64:FP32 ratio of NVIDIA's data-center parts");
  c.f64Lanes = f64Lanes > 0 ? static_cast<int>(f64Lanes) : std::max(1, lanes / 2);
  c.clockGHz = clockMHz / 1000.0;
  const double matrixMHz = params.number(
      "compute.matrix_clock_mhz", 0,
      "clock the matrix pipe sustains under load (real parts lower their clock to stay in power "
      "during dense matrix work), MHz; 0: compute.clock_mhz");
  c.matrixClockGHz = matrixMHz > 0 ? matrixMHz / 1000.0 : c.clockGHz;
  c.scalarCycles = static_cast<uint32_t>(
      params.size("isa.scalar_cycles", 1, "cycles of a scalar instruction, and of issuing any"));
  c.sloadCycles = static_cast<uint32_t>(
      params.size("isa.sload_cycles", 4, "cycles of a scalar load from the scratchpad"));
  c.vectorCycles = static_cast<uint32_t>(params.size(
      "isa.vector_cycles", 1, "cycles per group of `lanes` elements, simple vector ops"));
  c.vectorComplexCycles = static_cast<uint32_t>(
      params.size("isa.vector_complex_cycles", 8,
                  "cycles per group of `lanes` elements: divide, sqrt, exp and the like"));
  c.matrixF32MacsPerCycle = static_cast<uint32_t>(
      params.size("isa.mma_f32_macs_per_cycle", 256, "f32 multiply-accumulates per cycle per CU"));
  c.matrixF16MacsPerCycle = static_cast<uint32_t>(params.size(
      "isa.mma_f16_macs_per_cycle", 1024, "f16/bf16 multiply-accumulates per cycle per CU"));
  c.dmaIssueCycles = static_cast<uint32_t>(
      params.size("isa.dma_issue_cycles", 4, "cycles to issue one DMA descriptor"));
  c.dmaBandwidthGBps =
      params.number("compute.dma_bandwidth_gbps", 200, "bandwidth of one CU's DMA engine, GB/s");
  c.watchdogInstructions =
      params.size("compute.watchdog_instructions", 1ull << 32,
                  "instructions one workgroup may execute before the watchdog stops the kernel "
                  "(each row of a vector instruction and each element of a DMA counts as one)");
  sim::requirePositive("isa.vector_cycles", c.vectorCycles);
  sim::requirePositive("isa.mma_f32_macs_per_cycle", c.matrixF32MacsPerCycle);
  sim::requirePositive("isa.mma_f16_macs_per_cycle", c.matrixF16MacsPerCycle);
  sim::requirePositive("compute.dma_bandwidth_gbps", c.dmaBandwidthGBps);
  sim::requirePositive("compute.watchdog_instructions", double(c.watchdogInstructions));
  return c;
}

uint64_t CostModel::cycles(const isa::Instr& instr, uint64_t elements, uint64_t macs) const {
  using isa::Opcode;
  const uint64_t width = static_cast<uint64_t>(isF64(instr) ? f64Lanes : lanes);
  const uint64_t groups = (elements + width - 1) / width;
  switch (instr.op) {
    case Opcode::VUnary:
      return groups *
             (isComplexUnary(isa::UnaryOp(instr.sub)) ? vectorComplexCycles : vectorCycles);
    case Opcode::VBinary:
    case Opcode::VBinaryS:
      return groups *
             (isComplexBinary(isa::BinaryOp(instr.sub)) ? vectorComplexCycles : vectorCycles);
    case Opcode::VShape:
      return scalarCycles;
    case Opcode::Mma: {
      const uint64_t rate =
          instr.type == isa::DType::F32 ? matrixF32MacsPerCycle : matrixF16MacsPerCycle;
      return (macs + rate - 1) / rate;
    }
    case Opcode::DmaLoad:
    case Opcode::DmaStore:
      return dmaIssueCycles;
    case Opcode::SLoad:
      return sloadCycles;
    default:
      return isa::pipeOf(instr.op) == isa::Pipe::Vector ? groups * vectorCycles : scalarCycles;
  }
}

}  // namespace mimic::exec
