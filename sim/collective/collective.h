// What a collective is, as the model sees it: which ranks (on which devices) move how many
// bytes in which pattern. The data itself is the driver's business (mimicCollectiveLaunch);
// sim/collective only says how long the movement takes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mimic::sim::coll {

enum class CollectiveKind { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AllToAll };

const char* kindName(CollectiveKind kind);

struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::AllReduce;
  // The size nccl-tests prints: the whole buffer for AllReduce, Broadcast and Reduce; the
  // gathered (or scattered) buffer for AllGather and ReduceScatter; one rank's send buffer for
  // AllToAll.
  uint64_t bytes = 0;
  std::vector<int> devices;  // rank -> device
  int root = 0;
  int ranks() const { return int(devices.size()); }
};

// What the algorithms may know of the system: how devices are grouped into nodes and joined.
struct CollectiveTopology {
  std::string intraNode;  // the device-link topology: ring, full_mesh or switch
  int devicesPerNode = 1;
  bool switchReduces = false;  // the switch can reduce and multicast (NVLS)
  int nodeOf(int device) const { return device / devicesPerNode; }
};

}  // namespace mimic::sim::coll
