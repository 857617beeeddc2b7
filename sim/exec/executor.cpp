#include "sim/exec/executor.h"

#include "sim/device_memory.h"
#include "sim/exec/vector_math.h"
#include "sim/exec/workgroup.h"

namespace mimic::exec {

void Executor::run(const isa::Function& fn, const uint8_t* args, Dim3 grid, Dim3 id,
                   uint8_t* scratchpad, WorkgroupResult& out) const {
  out = WorkgroupResult{};
  out.counters.workgroups = 1;
  detail::Workgroup(costs_, scratchpadBytes_, memory_, fn, args, grid, id, scratchpad, out,
                    recordAccesses_)
      .run();
}

void Executor::applyAtomics(const std::vector<AtomicAdd>& atomics) const {
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
}

}  // namespace mimic::exec
