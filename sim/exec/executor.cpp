#include "sim/exec/executor.h"

#include "sim/device_memory.h"
#include "sim/exec/vector_math.h"
#include "sim/exec/workgroup.h"

namespace mimic::exec {

void Executor::run(const isa::Function& fn, const uint8_t* args, Dim3 grid, Dim3 id,
                   uint8_t* scratchpad, WorkgroupResult& out) const {
  out = WorkgroupResult{};
  out.counters.workgroups = 1;
  // Workgroups of a kernel mostly leave traces of one length: start at the length this thread
  // saw last, instead of growing (and copying) the vectors a few times per workgroup.
  thread_local size_t traceLength = 0, dmaCount = 0;
  out.trace.reserve(traceLength);
  out.dmaRegions.reserve(dmaCount);
  detail::Workgroup(costs_, scratchpadBytes_, memory_, fn, args, grid, id, scratchpad, out,
                    recordAccesses_, timingOnly_)
      .run();
  traceLength = out.trace.size();
  dmaCount = out.dmaRegions.size();
  // The launch keeps the trace: a short one after a long one keeps no more spare room than
  // growing would have left it.
  if (out.trace.capacity() > 2 * traceLength) out.trace.shrink_to_fit();
  if (out.dmaRegions.capacity() > 2 * dmaCount) out.dmaRegions.shrink_to_fit();
}

void Executor::applyAtomics(const std::vector<AtomicAdd>& atomics) const {
  if (timingOnly_) return;
  for (const AtomicAdd& a : atomics) {
    uint8_t* target = memory_.hostView(a.address);
    binary(isa::BinaryOp::Add, a.type, target, target, a.values.data(),
           static_cast<int64_t>(a.values.size()) / isa::dtypeSize(a.type));
  }
}

bool DmaRegion::operator==(const DmaRegion& o) const {
  return address == o.address && descriptor == o.descriptor;
}

void KernelCounters::add(const KernelCounters& o) {
  workgroups += o.workgroups;
  for (int p = 0; p < isa::kNumPipes; ++p) {
    instructions[p] += o.instructions[p];
    pipeCycles[p] += o.pipeCycles[p];
  }
  flops += o.flops;
  bytesRead += o.bytesRead;
  bytesWritten += o.bytesWritten;
  dataDependentReads += o.dataDependentReads;
}

}  // namespace mimic::exec
