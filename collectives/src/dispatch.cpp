// Chooses the algorithm of a collective (see mimic_collectives.h).
#include <cstdlib>
#include <cstring>
#include <string>

#include "algorithms.h"
#include "errors.h"
#include "mimic/mimic_trace.h"

namespace mimic::coll {
namespace {

// MIMIC_COLL_ALGO, read on every call so that tests and tools can switch it at run time.
bool useRing(size_t bytes, int ranks) {
  const char* algo = std::getenv("MIMIC_COLL_ALGO");
  if (algo && std::strcmp(algo, "ring") == 0) return true;
  if (algo && std::strcmp(algo, "tree") == 0) return false;
  return ranks <= 2 || bytes >= size_t(ranks) * MIMIC_COLL_TREE_BYTES_PER_RANK;
}

const char* kindName(CollKind kind) {
  switch (kind) {
    case CollKind::AllReduce:
      return "AllReduce";
    case CollKind::Broadcast:
      return "Broadcast";
    case CollKind::Reduce:
      return "Reduce";
    case CollKind::AllGather:
      return "AllGather";
    case CollKind::ReduceScatter:
      return "ReduceScatter";
    case CollKind::AllToAll:
      return "AllToAll";
  }
  return "collective";
}

mimicResult runAlgorithm(Schedule& s, bool ring) {
  switch (s.call(0).kind) {
    case CollKind::AllReduce:
      return ring ? ringAllReduce(s) : treeAllReduce(s);
    case CollKind::Broadcast:
      return treeBroadcast(s);
    case CollKind::Reduce:
      return treeReduce(s);
    case CollKind::AllGather:
      return ringAllGather(s);
    case CollKind::ReduceScatter:
      return ringReduceScatter(s);
    case CollKind::AllToAll:
      return directAllToAll(s);
  }
  return MIMIC_ERROR_INVALID_VALUE;
}

}  // namespace

// Each rank's part of the collective is a named range on its queue, for traces.
mimicResult runCollective(Schedule& s) {
  const Call& first = s.call(0);
  const bool ring =
      first.kind == CollKind::AllReduce
          ? useRing(first.count * s.elementSize(), s.size())
          : first.kind == CollKind::AllGather || first.kind == CollKind::ReduceScatter;
  const std::string name = std::string(kindName(first.kind)) + (ring ? " ring" : "") + " (" +
                           std::to_string(s.size()) + " ranks, " +
                           std::to_string(first.count * s.elementSize()) + " B)";
  for (int r = 0; r < s.size(); ++r) {
    COLL_TRY(mimicQueueBeginRange(s.call(r).queue, s.device(r), name.c_str()));
  }
  COLL_TRY(runAlgorithm(s, ring));
  for (int r = 0; r < s.size(); ++r) COLL_TRY(mimicQueueEndRange(s.call(r).queue, s.device(r)));
  return MIMIC_SUCCESS;
}

}  // namespace mimic::coll
