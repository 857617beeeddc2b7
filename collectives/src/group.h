// The calling thread's group: collectives collected between mimicGroupStart and mimicGroupEnd.
#pragma once

#include "schedule.h"

namespace mimic::coll {

// Adds a checked call to the thread's group. Outside a group, runs it at once when its
// communicator has one rank, else fails with MIMIC_ERROR_GROUP_REQUIRED.
mimicResult enqueue(const Call& call);

}  // namespace mimic::coll
