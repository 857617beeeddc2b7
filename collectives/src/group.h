// The calling thread's group: collectives collected between mimicGroupStart and mimicGroupEnd,
// matched across the ranks of each clique and launched through the driver
// (mimicCollectiveLaunch), which moves the data and times the collective.
#pragma once

#include <cstddef>

#include "comm.h"

namespace mimic::coll {

constexpr int kNumDataTypes = 6;
constexpr int kNumReduceOps = 5;

inline size_t dataTypeSize(mimicDataType type) {
  static const size_t kSizes[kNumDataTypes] = {4, 2, 2, 4, 8, 1};
  return kSizes[type];
}

// One rank's call, as checked by the API function. `kind` is the driver's.
struct Call {
  mimicCollectiveKind kind;
  const void* send;
  void* recv;
  size_t count;  // elements: sendCount for AllGather, recvCount for ReduceScatter
  mimicDataType type;
  mimicReduceOp op;
  int root;
  mimicComm comm;
  mimicQueue queue;
};

// Adds a checked call to the thread's group. Outside a group, runs it at once when its
// communicator has one rank, else fails with MIMIC_ERROR_GROUP_REQUIRED.
mimicResult enqueue(const Call& call);

}  // namespace mimic::coll
