#include "kernel_launch.h"

#include <tbb/enumerable_thread_specific.h>
#include <tbb/parallel_for.h>

#include <vector>

namespace mimic::driver {
namespace {

// Workgroups run in chunks: results of one chunk are merged in workgroup order before the
// next starts, which bounds memory and keeps merging deterministic.
constexpr uint64_t kChunk = 1024;

exec::Dim3 workgroupId(uint64_t index, exec::Dim3 grid) {
  return {static_cast<uint32_t>(index % grid.x), static_cast<uint32_t>(index / grid.x % grid.y),
          static_cast<uint32_t>(index / grid.x / grid.y)};
}

}  // namespace

FunctionalResult executeKernel(const exec::Executor& executor, const isa::Function& fn,
                               const uint8_t* args, exec::Dim3 grid, uint64_t scratchpadBytes) {
  FunctionalResult result;
  result.launch = std::make_shared<sim::KernelLaunch>();
  sim::KernelLaunch& launch = *result.launch;
  const uint64_t total = uint64_t(grid.x) * grid.y * grid.z;
  tbb::enumerable_thread_specific<std::vector<uint8_t>> scratchpads(
      [&] { return std::vector<uint8_t>(scratchpadBytes); });
  std::vector<exec::WorkgroupResult> chunk;
  for (uint64_t first = 0; first < total && result.fault.kind == exec::FaultKind::None;
       first += kChunk) {
    const uint64_t count = std::min(kChunk, total - first);
    chunk.assign(count, exec::WorkgroupResult{});
    tbb::parallel_for(uint64_t(0), count, [&](uint64_t i) {
      executor.run(fn, args, grid, workgroupId(first + i, grid), scratchpads.local().data(),
                   chunk[i]);
    });
    for (exec::WorkgroupResult& wg : chunk) {
      launch.counters.add(wg.counters);
      executor.applyAtomics(wg.atomics);
      // Workgroups of one kernel usually do identical work: share the trace.
      if (!launch.workgroups.empty() && *launch.workgroups.back() == wg.trace) {
        launch.workgroups.push_back(launch.workgroups.back());
      } else {
        launch.workgroups.push_back(
            std::make_shared<const exec::WorkgroupTrace>(std::move(wg.trace)));
      }
      if (wg.fault.kind != exec::FaultKind::None) {
        result.fault = wg.fault;
        break;
      }
    }
  }
  return result;
}

}  // namespace mimic::driver
