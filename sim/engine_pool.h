// A pool of identical DMA engines (the copy engines or the link engines of a device).
// A transfer holds one engine from its start to its end; when all are busy, it waits.
#pragma once

#include <systemc>

#include <cstdint>

#include "sim/sim_time.h"

namespace mimic::sim {

struct EnginePoolStats {
  uint64_t transfers = 0;
  SimTime busyNs = 0;  // summed over engines
};

class EnginePool {
 public:
  explicit EnginePool(int count) : count_(count) {}

  void acquire();  // call from an SC_THREAD
  void release(SimTime heldSince);
  const EnginePoolStats& stats() const { return stats_; }

 private:
  int count_;
  int busy_ = 0;
  sc_core::sc_event freed_;
  EnginePoolStats stats_;
};

// Holds one engine of a pool for the lifetime of a scope.
class EngineLease {
 public:
  explicit EngineLease(EnginePool& pool);
  ~EngineLease();
  EngineLease(const EngineLease&) = delete;
  EngineLease& operator=(const EngineLease&) = delete;

 private:
  EnginePool& pool_;
  SimTime since_;
};

}  // namespace mimic::sim
