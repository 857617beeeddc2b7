#include "sim/compute_engine.h"

#include <algorithm>

#include "sim/compute_unit.h"

namespace mimic::sim {
namespace {

SimTime nowNs() {
  return static_cast<SimTime>(sc_core::sc_time_stamp().value());
}

}  // namespace

ComputeEngine::ComputeEngine(sc_core::sc_module_name name, const ComputeConfig& config,
                             const exec::CostModel& costs, const CacheConfig& cache,
                             const MemoryResources& memory, FlowNetwork& network)
    : sc_module(name),
      config_(config),
      costs_(costs),
      cacheConfig_(cache),
      cache_(cache, memory.addressBase),
      memory_(memory),
      network_(network),
      queue_("queue") {
  const size_t words = (config.computeUnits + 63) / 64;
  byOccupancy_.assign(config.maxWorkgroupsPerUnit + 1, std::vector<uint64_t>(words, 0));
  for (int u = 0; u < config.computeUnits; ++u) {
    const std::string id = std::to_string(u);
    const int dma = network.addResource(std::string(this->name()) + ".cu" + id + " dma",
                                        costs.dmaBandwidthGBps);
    units_.push_back(std::make_unique<ComputeUnit>(*this, u, dma));
    byOccupancy_[0][u / 64] |= 1ull << (u % 64);
  }
}

ComputeEngine::~ComputeEngine() = default;

void ComputeEngine::run(KernelLaunch& launch) {
  launch.remaining = launch.workgroups.size();
  launch.start = nowNs();
  if (launch.remaining == 0) {
    launch.end = launch.start;
    return;
  }
  for (size_t i = 0; i < launch.workgroups.size(); ++i) pending_.push_back({&launch, i});
  dispatch();
  while (launch.remaining > 0) sc_core::wait(kernelDone_);
}

int ComputeEngine::unitWithRoom(uint64_t scratchpadBytes) const {
  for (int k = 0; k < config_.maxWorkgroupsPerUnit; ++k) {
    const std::vector<uint64_t>& units = byOccupancy_[k];
    for (size_t w = 0; w < units.size(); ++w) {
      for (uint64_t bits = units[w]; bits != 0; bits &= bits - 1) {
        const int u = static_cast<int>(w * 64 + __builtin_ctzll(bits));
        // An empty CU takes any workgroup: the executor checked it fits the scratchpad.
        if (k == 0 || units_[u]->scratchpadInUse() + scratchpadBytes <= config_.scratchpadBytes) {
          return u;
        }
      }
    }
  }
  return -1;
}

void ComputeEngine::moveBetweenBuckets(int unit, int from, int to) {
  const uint64_t bit = 1ull << (unit % 64);
  byOccupancy_[from][unit / 64] &= ~bit;
  byOccupancy_[to][unit / 64] |= bit;
}

void ComputeEngine::dispatch() {
  while (!pending_.empty()) {
    const Pending next = pending_.front();
    const int u = unitWithRoom(next.launch->scratchpadBytes);
    if (u < 0) return;
    pending_.pop_front();
    const int before = units_[u]->resident();
    moveBetweenBuckets(u, before, before + 1);
    units_[u]->start(*next.launch, next.index);
  }
}

void ComputeEngine::workgroupFinished(KernelLaunch& launch, int unit) {
  const int after = units_[unit]->resident();
  moveBetweenBuckets(unit, after + 1, after);
  if (--launch.remaining == 0) {
    launch.end = nowNs();
    kernelDone_.notify(sc_core::SC_ZERO_TIME);
  }
  dispatch();
}

void ComputeEngine::dmaPath(KernelLaunch& launch, int unitDmaResource,
                            const exec::DmaRegion& region, bool store, uint64_t bytes,
                            std::vector<PathUse>* path, SimTime* latency) {
  path->clear();
  if (!cache_.enabled()) {
    *latency = memory_.hbmLatencyNs;
    path->push_back({memory_.hbm, 1.0});
    path->push_back({unitDmaResource, 1.0});
    return;
  }
  const uint64_t hit = cache_.access(region, store);
  if (!store) launch.cacheHitBytes += hit;
  // Every written byte is written back to HBM in the end; a read goes there for its misses.
  const double hbmShare = store ? 1.0 : static_cast<double>(bytes - std::min(hit, bytes)) / bytes;
  *latency = store || hbmShare == 0 ? cacheConfig_.latencyNs : memory_.hbmLatencyNs;
  path->push_back({memory_.cache, 1.0});
  path->push_back({unitDmaResource, 1.0});
  if (hbmShare > 0) path->push_back({memory_.hbm, hbmShare});
}

}  // namespace mimic::sim
