#include "time_model.h"

#include <c10/util/Exception.h>

#include <cstdlib>
#include <string>

#include "mimic/mimic.h"

namespace mimic::c10d {
namespace {

mimicDeviceProperties systemProperties() {
  mimicDeviceProperties props{};
  const mimicResult r = mimicDeviceGetProperties(0, &props);
  TORCH_CHECK(r == MIMIC_SUCCESS, "mimic: mimicDeviceGetProperties failed: ", mimicGetErrorName(r));
  return props;
}

int envInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value && *value ? std::atoi(value) : fallback;
}

}  // namespace

uint64_t collectiveNs(CollectiveKind kind, uint64_t bytes, const std::vector<int>& devices,
                      int root) {
  const int n = int(devices.size());
  if (n <= 1 || bytes == 0) return 0;
  mimicCollectiveDesc desc{};
  desc.datatype = mimicUint8;  // only the bytes matter to the time
  desc.op = mimicSum;
  desc.root = root;
  desc.numRanks = n;
  desc.devices = devices.data();
  const uint64_t perRank = std::max<uint64_t>(1, bytes / uint64_t(n));
  switch (kind) {
    case CollectiveKind::AllReduce:
    case CollectiveKind::Broadcast:
    case CollectiveKind::Reduce:
      desc.kind = kind == CollectiveKind::AllReduce   ? MIMIC_COLLECTIVE_ALL_REDUCE
                  : kind == CollectiveKind::Broadcast ? MIMIC_COLLECTIVE_BROADCAST
                                                      : MIMIC_COLLECTIVE_REDUCE;
      desc.count = bytes;
      break;
    case CollectiveKind::AllGather:
      desc.kind = MIMIC_COLLECTIVE_ALL_GATHER;
      desc.count = perRank;
      break;
    case CollectiveKind::ReduceScatter:
      desc.kind = MIMIC_COLLECTIVE_REDUCE_SCATTER;
      desc.count = perRank;
      break;
    case CollectiveKind::AllToAll:
      desc.kind = MIMIC_COLLECTIVE_ALL_TO_ALL;
      desc.count = perRank;
      break;
    case CollectiveKind::Gather:  // every rank's part to the root: a Reduce of one part
      desc.kind = MIMIC_COLLECTIVE_REDUCE;
      desc.count = perRank;
      break;
    case CollectiveKind::Scatter:  // the root's parts to every rank: a Broadcast of one part
      desc.kind = MIMIC_COLLECTIVE_BROADCAST;
      desc.count = perRank;
      break;
    case CollectiveKind::Barrier:  // NCCL's barrier is an AllReduce of one element
      desc.kind = MIMIC_COLLECTIVE_ALL_REDUCE;
      desc.count = 1;
      break;
    case CollectiveKind::PointToPoint:
      desc.kind = MIMIC_COLLECTIVE_BROADCAST;
      desc.count = bytes;
      desc.root = 0;
      break;
  }
  mimicCollectivePlan plan{};
  const mimicResult r = mimicCollectiveGetPlan(&desc, &plan);
  if (r != MIMIC_SUCCESS) {
    const char* detail = "";
    mimicGetErrorDetail(&detail);
    TORCH_CHECK(false, "mimic: the collective model failed (", mimicGetErrorName(r), "): ", detail);
  }
  return plan.estimateNs;
}

int globalDevice(int rank, int worldSize) {
  const mimicDeviceProperties props = systemProperties();
  // One launcher (a torchrun agent) with more ranks than a node has devices spans nodes.
  const int perNode =
      std::max(1, std::min(envInt("LOCAL_WORLD_SIZE", props.devicesPerNode), props.devicesPerNode));
  const int node = rank / perNode, local = rank % perNode;
  const int nodesNeeded = (worldSize + perNode - 1) / perNode;
  TORCH_CHECK(node < props.nodes, "mimic: a group of ", worldSize, " ranks (", perNode,
              " to a node) needs ", nodesNeeded, " node(s), and the simulated system has ",
              props.nodes, " node(s) of ", props.devicesPerNode, " devices (preset '", props.preset,
              "'): set MIMIC_NUM_DEVICES to ", nodesNeeded * props.devicesPerNode,
              " or more, or network.nodes in MIMIC_OVERRIDES, or pick a preset with more nodes");
  return node * props.devicesPerNode + local;
}

}  // namespace mimic::c10d
