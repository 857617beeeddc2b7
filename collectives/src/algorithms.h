// The collective algorithms over a Schedule (see mimic_collectives.h for which runs when).
#pragma once

#include "schedule.h"

namespace mimic::coll {

// Ring: every rank sends to next(r) only, so each step uses each link once in one direction.
mimicResult ringAllReduce(Schedule& s);
mimicResult ringAllGather(Schedule& s);
mimicResult ringReduceScatter(Schedule& s);

// Binary tree over ranks renumbered so that `root` is 0.
mimicResult treeAllReduce(Schedule& s);
mimicResult treeBroadcast(Schedule& s);
mimicResult treeReduce(Schedule& s);

// Every rank copies each block straight to its owner.
mimicResult directAllToAll(Schedule& s);

// Runs the collective the calls of `s` name, choosing the algorithm.
mimicResult runCollective(Schedule& s);

}  // namespace mimic::coll
