// Chooses the algorithm of a collective (see mimic_collectives.h).
#include <cstdlib>
#include <cstring>

#include "algorithms.h"

namespace mimic::coll {
namespace {

// MIMIC_COLL_ALGO, read on every call so that tests and tools can switch it at run time.
bool useRing(size_t bytes, int ranks) {
  const char* algo = std::getenv("MIMIC_COLL_ALGO");
  if (algo && std::strcmp(algo, "ring") == 0) return true;
  if (algo && std::strcmp(algo, "tree") == 0) return false;
  return ranks <= 2 || bytes >= size_t(ranks) * MIMIC_COLL_TREE_BYTES_PER_RANK;
}

}  // namespace

mimicResult runCollective(Schedule& s) {
  switch (s.call(0).kind) {
    case CollKind::AllReduce:
      return useRing(s.call(0).count * s.elementSize(), s.size()) ? ringAllReduce(s)
                                                                  : treeAllReduce(s);
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

}  // namespace mimic::coll
