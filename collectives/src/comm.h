// Communicator state: a clique of ranks created together by mimicCommInitAll, one per device.
#pragma once

#include <memory>
#include <vector>

#include "mimic/mimic_collectives.h"

namespace mimic::coll {

struct Rank {
  int device = 0;
  // The queue of the rank's latest collective, and an event to order the next one after it
  // when that one comes on another queue (collectives of one rank never overlap, as NCCL's
  // on one communicator).
  mimicQueue lastQueue = nullptr;
  bool launched = false;
  mimicEvent previous = nullptr;
};

struct Clique {
  std::vector<Rank> ranks;
  ~Clique();
};

}  // namespace mimic::coll

struct mimicComm_st {
  std::shared_ptr<mimic::coll::Clique> clique;
  int rank;
};

namespace mimic::coll {

// MIMIC_SUCCESS if `comm` is a live communicator, else MIMIC_ERROR_INVALID_COMM (recorded).
mimicResult checkComm(mimicComm comm);

}  // namespace mimic::coll
