// Communicator state: a clique of ranks created together by mimicCommInitAll, one per device.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "mimic/mimic_collectives.h"
#include "reduce_kernel.h"

namespace mimic::coll {

// The events one rank records for its neighbours to wait on. One of each suffices: every
// collective is issued by one thread, which queues each wait after the record it means and
// before that event is recorded again.
struct RankEvents {
  mimicEvent ready;    // the rank's queue reached the collective (covers its earlier work)
  mimicEvent sent;     // the rank's latest outgoing copy has landed
  mimicEvent reduced;  // the rank's latest reduction kernel (its scratch is free again)
  mimicEvent done;     // the rank's part of its latest collective
  mimicEvent probe;    // recorded at call time to check the queue's device
};

struct Rank {
  int device = 0;
  mimicModule module = nullptr;
  mimicFunction reduce[kNumDataTypes][4] = {};
  mimicFunction scale[kNumDataTypes] = {};
  size_t scratchpadBytes = 0;
  void* scratch = nullptr;  // two receive slots and a work area (Schedule::prepareScratch)
  size_t scratchBytes = 0;
  RankEvents events{};
  bool doneRecorded = false;
};

struct Clique {
  std::vector<Rank> ranks;
  int live = 0;  // communicators not destroyed yet
};

}  // namespace mimic::coll

struct mimicComm_st {
  std::shared_ptr<mimic::coll::Clique> clique;
  int rank;
};

namespace mimic::coll {

// MIMIC_SUCCESS if `comm` is a live communicator, else MIMIC_ERROR_INVALID_COMM (recorded).
mimicResult checkComm(mimicComm comm);

// Grows the rank's scratch to at least `bytes` (freeing the old block, which waits for the
// device, as mimicMemFree does).
mimicResult ensureScratch(Rank& rank, size_t bytes);

}  // namespace mimic::coll
