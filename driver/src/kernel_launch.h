// Functional execution of a kernel launch, on host worker threads (oneTBB), in submission
// order: the bytes move now, and the traces it returns let the timing model follow.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "sim/compute_engine.h"
#include "sim/exec/executor.h"

namespace mimic::driver {

struct FunctionalResult {
  std::shared_ptr<sim::KernelLaunch> launch;
  exec::Fault fault;                      // the first fault, in workgroup order
  std::vector<exec::HbmAccess> accesses;  // in workgroup and program order, if recorded
};

FunctionalResult executeKernel(const exec::Executor& executor, const isa::Function& fn,
                               const uint8_t* args, exec::Dim3 grid, uint64_t scratchpadBytes);

// Sorts and merges ranges that overlap or touch and have the same direction.
std::vector<exec::HbmAccess> mergedAccesses(std::vector<exec::HbmAccess> accesses);

}  // namespace mimic::driver
