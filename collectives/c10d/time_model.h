// Simulated time of a collective between processes: the same collective model as the
// single-process communicator's (sim/collective, asked through mimicCollectiveGetPlan), over
// this process's simulated system, with the ranks on their devices of the whole system.
//
// Every rank starts the collective at its own simulated time; the collective ends at
// max(start over ranks) + collectiveNs(...), when the model's plan would end with nothing
// else on its links. Bytes are the message as NCCL's tests count it: the whole buffer for
// AllReduce, Broadcast and Reduce, the whole gathered (or scattered) buffer for the others.
#pragma once

#include <cstdint>
#include <vector>

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

// devices: rank -> device of the whole system (globalDevice); PointToPoint: sender, receiver.
// Throws c10::Error naming a failed driver call.
uint64_t collectiveNs(CollectiveKind kind, uint64_t bytes, const std::vector<int>& devices,
                      int root);

// The process's device `local` as a device of the whole system: torchrun's node rank
// (GROUP_RANK, 0 without it) times the preset's devices per node, plus `local`. Throws when
// the node rank is beyond the preset's nodes.
int globalDevice(int local);
// Rank `rank`'s device of the whole system as this rank can guess it without asking (point to
// point): ranks are laid out node by node, LOCAL_WORLD_SIZE (or all) to a node.
int guessGlobalDevice(int rank, int worldSize);

}  // namespace mimic::c10d
