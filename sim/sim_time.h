// Simulated time: nanoseconds since the simulation started, the resolution of the whole model.
#pragma once

#include <cstdint>
#include <limits>

namespace mimic::sim {

using SimTime = uint64_t;
constexpr SimTime kSimTimeNever = std::numeric_limits<SimTime>::max();

}  // namespace mimic::sim
