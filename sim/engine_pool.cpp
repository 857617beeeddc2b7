#include "sim/engine_pool.h"

namespace mimic::sim {

void EnginePool::acquire() {
  while (busy_ == count_) sc_core::wait(freed_);
  ++busy_;
  ++stats_.transfers;
}

void EnginePool::release(SimTime heldSince) {
  stats_.busyNs += sc_core::sc_time_stamp().value() - heldSince;
  --busy_;
  freed_.notify(sc_core::SC_ZERO_TIME);
}

EngineLease::EngineLease(EnginePool& pool)
    : pool_(pool), since_((pool.acquire(), sc_core::sc_time_stamp().value())) {}

EngineLease::~EngineLease() {
  pool_.release(since_);
}

}  // namespace mimic::sim
