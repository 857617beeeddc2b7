#include "kernel_launch.h"

#include <tbb/parallel_for.h>

#include <algorithm>
#include <vector>

namespace mimic::driver {
namespace {

// Workgroups run in chunks: results of one chunk are merged in workgroup order before the
// next starts, which bounds memory and keeps merging deterministic.
constexpr uint64_t kChunk = 1024;

// Waking the worker threads and joining them costs tens of microseconds, more than all the
// workgroups of a small kernel take: the first workgroup runs alone and tells how much work each
// does, counted in the units the cost model charges (about 10 ns of host time each).
constexpr uint64_t kParallelWork = 4096;

uint64_t workOf(const exec::KernelCounters& c) {
  uint64_t work = (c.bytesRead + c.bytesWritten) / 16;
  for (int p = 0; p < isa::kNumPipes; ++p) work += c.instructions[p] + c.pipeCycles[p];
  return work;
}

// Each host thread keeps one scratchpad for every launch: allocating it per launch would cost
// more than a small kernel does.
uint8_t* threadScratchpad(uint64_t bytes) {
  thread_local std::vector<uint8_t> scratchpad;
  if (scratchpad.size() < bytes) scratchpad.resize(bytes);
  return scratchpad.data();
}

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
  std::vector<exec::WorkgroupResult> chunk;
  bool serial = true;
  for (uint64_t first = 0; first < total && result.fault.kind == exec::FaultKind::None;
       first += kChunk) {
    const uint64_t count = std::min(kChunk, total - first);
    chunk.resize(count);
    auto runOne = [&](uint64_t i) {
      executor.run(fn, args, grid, workgroupId(first + i, grid), threadScratchpad(scratchpadBytes),
                   chunk[i]);
    };
    uint64_t next = 0;
    if (first == 0) {
      runOne(next++);
      serial = total == 1 || workOf(chunk[0].counters) < kParallelWork / (total - 1);
    }
    if (serial) {
      for (; next < count; ++next) runOne(next);
    } else {
      tbb::parallel_for(next, count, runOne);
    }
    for (exec::WorkgroupResult& wg : chunk) {
      launch.counters.add(wg.counters);
      result.accesses.insert(result.accesses.end(), wg.accesses.begin(), wg.accesses.end());
      executor.applyAtomics(wg.atomics);
      launch.scratchpadBytes = std::max(launch.scratchpadBytes, wg.scratchpadBytes);
      launch.workgroups.add(wg.trace, wg.dmaRegions);
      if (wg.fault.kind != exec::FaultKind::None) {
        result.fault = wg.fault;
        break;
      }
    }
  }
  launch.workgroups.finish();
  return result;
}

std::vector<exec::HbmAccess> mergedAccesses(std::vector<exec::HbmAccess> accesses) {
  std::sort(accesses.begin(), accesses.end(), [](const auto& a, const auto& b) {
    return a.write != b.write ? a.write < b.write : a.low < b.low;
  });
  std::vector<exec::HbmAccess> out;
  for (const exec::HbmAccess& a : accesses) {
    if (!out.empty() && out.back().write == a.write && a.low <= out.back().high) {
      out.back().high = std::max(out.back().high, a.high);
    } else {
      out.push_back(a);
    }
  }
  return out;
}

}  // namespace mimic::driver
