// The compute side of a device: a workgroup dispatcher, its compute units (CUs) and the
// device's cache.
//
// A kernel arrives as the traces its workgroups left during functional execution. The
// dispatcher places workgroups in arrival order on the least-occupied CU that has room: a CU
// holds up to compute.max_workgroups_per_unit workgroups at once, as many as its scratchpad
// fits, so kernels from different queues share the device, large grids run in waves, and one
// workgroup's DMA latency hides behind another's compute. Resident workgroups replay their
// traces with temporal decoupling (compute_unit.h), sharing their CU's vector and matrix
// pipes; the device steps them through one queue of timed callbacks, never a thread per CU.
// DMAs look the cache up, then flow over the CU's DMA engine, the cache and (for misses and
// write-backs) HBM, shared with every other transfer of the device through the flow network.
#pragma once

#include <systemc>

#include <deque>
#include <memory>
#include <vector>

#include "sim/cache.h"
#include "sim/device_config.h"
#include "sim/exec/cost_model.h"
#include "sim/exec/trace.h"
#include "sim/flow_network.h"
#include "sim/launch_work.h"
#include "sim/timed_queue.h"

namespace mimic::sim {

struct KernelLaunch {
  LaunchWork workgroups;
  exec::KernelCounters counters;  // from functional execution
  uint64_t scratchpadBytes = 0;   // the most any workgroup touched: how many fit on a CU
  // Filled in by the timing model.
  SimTime start = 0;
  SimTime end = 0;
  size_t remaining = 0;
  uint64_t cacheHitBytes = 0;  // of the bytes its DMAs read
};

// The resources of the memory system a DMA uses, besides its CU's own DMA engine.
struct MemoryResources {
  int hbm;
  int cache;  // -1: no cache
  uint64_t hbmLatencyNs;
  uint64_t addressBase;  // the device address of the device memory's first byte
};

class ComputeUnit;

class ComputeEngine : public sc_core::sc_module {
 public:
  ComputeEngine(sc_core::sc_module_name name, const ComputeConfig& config,
                const exec::CostModel& costs, const CacheConfig& cache,
                const MemoryResources& memory, FlowNetwork& network);
  ~ComputeEngine() override;

  // Runs every workgroup of the launch; returns when the last has finished. Call from an
  // SC_THREAD (the command processor's).
  void run(KernelLaunch& launch);

  int numUnits() const { return static_cast<int>(units_.size()); }
  const ComputeUnit& unit(int index) const { return *units_[index]; }
  const CacheStats& cacheStats() const { return cache_.stats(); }

 private:
  friend class ComputeUnit;
  struct Pending {
    KernelLaunch* launch;
    size_t index;
  };

  // Places pending workgroups while some CU has room for the next one.
  void dispatch();
  // The CU with the fewest resident workgroups that has room for `scratchpadBytes`, or -1.
  int unitWithRoom(uint64_t scratchpadBytes) const;
  void moveBetweenBuckets(int unit, int from, int to);
  // The path (into `path`, whose room is reused) and latency of a DMA of `bytes` over
  // `region`, looked up in the cache now.
  void dmaPath(KernelLaunch& launch, int unitDmaResource, const exec::DmaRegion& region, bool store,
               uint64_t bytes, std::vector<PathUse>* path, SimTime* latency);
  void workgroupFinished(KernelLaunch& launch, int unit);

  ComputeConfig config_;
  exec::CostModel costs_;
  CacheConfig cacheConfig_;
  Cache cache_;
  MemoryResources memory_;
  FlowNetwork& network_;
  TimedQueue queue_;
  std::deque<Pending> pending_;
  std::vector<std::unique_ptr<ComputeUnit>> units_;
  // byOccupancy_[k]: bitset of the CUs that hold k workgroups.
  std::vector<std::vector<uint64_t>> byOccupancy_;
  sc_core::sc_event kernelDone_;
};

}  // namespace mimic::sim
