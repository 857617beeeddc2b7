// Simulated time of a collective between processes: the alpha-beta(-gamma) model of the
// algorithm the single-process communicator would pick, over the preset's device links.
//
// Every rank starts the collective at its own simulated time; the collective ends at
// max(start over ranks) + collectiveNs(...), the time at which the last rank's data could have
// arrived. Bytes are the message as NCCL's tests count it: the whole buffer for AllReduce,
// Broadcast and Reduce, the whole gathered (or scattered) buffer for the others.
#pragma once

#include <cstdint>

#include "mimic/mimic.h"

namespace mimic::c10d {

enum class CollectiveKind {
  AllReduce,
  Broadcast,
  Reduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Gather,
  Scatter,
  Barrier,
  PointToPoint,
};

struct LinkModel {
  double linkBytesPerNs;      // device link, per direction (divided by a slow_link fault's F)
  uint64_t hopNs;             // command latency + HBM latency + one link hop
  double hbmBytesPerNs;       // the reduction kernel streams two inputs and one output
  uint64_t commandNs;         // launching the reduction kernel
  uint64_t treeBytesPerRank;  // AllReduce uses the ring from ranks x this many bytes

  static LinkModel fromProperties(const mimicDeviceProperties& props);
};

// Whether an AllReduce of `bytes` over `ranks` runs as a ring (else a binary tree).
bool allReduceUsesRing(int ranks, uint64_t bytes, const LinkModel& link);

uint64_t collectiveNs(CollectiveKind kind, int ranks, uint64_t bytes, const LinkModel& link);

}  // namespace mimic::c10d
