#include "time_model.h"

#include <cmath>

#include "mimic/mimic_collectives.h"

namespace mimic::c10d {
namespace {

int treeLevels(int ranks) {
  int levels = 0;
  while ((1 << levels) < ranks) ++levels;
  return levels;
}

double transferNs(double bytes, const LinkModel& link) {
  return double(link.hopNs) + bytes / link.linkBytesPerNs;
}

double reductionNs(double bytes, const LinkModel& link) {
  return double(link.commandNs) + 3.0 * bytes / link.hbmBytesPerNs;
}

}  // namespace

LinkModel LinkModel::fromProperties(const mimicDeviceProperties& props) {
  LinkModel link;
  link.linkBytesPerNs = props.deviceLinkBandwidthGBps;  // GB/s = bytes per ns
  link.hopNs = props.commandLatencyNs + props.hbmLatencyNs + props.deviceLinkLatencyNs;
  link.hbmBytesPerNs = props.hbmBandwidthGBps;
  link.commandNs = props.commandLatencyNs;
  link.treeBytesPerRank = MIMIC_COLL_TREE_BYTES_PER_RANK;
  return link;
}

bool allReduceUsesRing(int ranks, uint64_t bytes, const LinkModel& link) {
  return ranks <= 2 || bytes >= uint64_t(ranks) * link.treeBytesPerRank;
}

uint64_t collectiveNs(CollectiveKind kind, int ranks, uint64_t bytes, const LinkModel& link) {
  if (ranks <= 1 && kind != CollectiveKind::PointToPoint) return 0;
  const double n = ranks;
  const double b = double(bytes);
  const double steps = n - 1;
  const double levels = treeLevels(ranks);
  double ns = 0;
  switch (kind) {
    case CollectiveKind::AllReduce:
      ns = allReduceUsesRing(ranks, bytes, link)
               ? 2 * steps * transferNs(b / n, link) + steps * reductionNs(b / n, link)
               : levels * (2 * transferNs(b, link) + reductionNs(b, link));
      break;
    case CollectiveKind::ReduceScatter:
      ns = steps * (transferNs(b / n, link) + reductionNs(b / n, link));
      break;
    case CollectiveKind::AllGather:
    case CollectiveKind::AllToAll:
    case CollectiveKind::Gather:
    case CollectiveKind::Scatter:
      ns = steps * transferNs(b / n, link);
      break;
    case CollectiveKind::Broadcast:
      ns = levels * transferNs(b, link);
      break;
    case CollectiveKind::Reduce:
      ns = levels * (transferNs(b, link) + reductionNs(b, link));
      break;
    case CollectiveKind::Barrier:
      ns = 2 * levels * transferNs(0, link);
      break;
    case CollectiveKind::PointToPoint:
      ns = transferNs(b, link);
      break;
  }
  return uint64_t(std::llround(ns));
}

}  // namespace mimic::c10d
