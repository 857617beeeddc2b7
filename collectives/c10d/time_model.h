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

// Rank `rank`'s device in the whole simulated system. Every process simulates the whole system
// and runs on one device of it; ranks are laid out node by node, as torchrun numbers them:
// LOCAL_WORLD_SIZE ranks to a node (without it, or when a launcher has more ranks than a node
// has devices, the preset's devices per node), so rank r is device (r / perNode) x
// devicesPerNode + r % perNode. Throws, naming MIMIC_NUM_DEVICES and the preset, when the
// group needs more nodes than the system has.
int globalDevice(int rank, int worldSize);

}  // namespace mimic::c10d
