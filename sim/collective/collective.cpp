#include "sim/collective/collective.h"

namespace mimic::sim::coll {

const char* kindName(CollectiveKind kind) {
  static const char* const kNames[] = {"AllReduce", "Broadcast",     "Reduce",
                                       "AllGather", "ReduceScatter", "AllToAll"};
  return kNames[int(kind)];
}

}  // namespace mimic::sim::coll
