// Reductions with few outputs split over the compute units, as vendor libraries do (CUB's
// two-pass device reduce): the first launch cuts each output's tile sequence into a fixed number
// of contiguous parts and writes one partial per part into workspace memory; a second launch of
// the same kernel combines the partials in part order. The number of parts depends only on the
// sizes and the device's properties, so results are deterministic.
#pragma once

#include "torch_backend/ops/reduce_plan.h"

namespace mimic::ops::detail {

// The plan of a split for coalesced dims: a few workgroups per compute unit, resident together,
// each with a contiguous part of the tile sequence and tiles to double-buffer. parts == 1 means
// that a split would not pay for its second launch, by the device's properties: when few
// workgroups' DMA engines already stream as fast as HBM, or the input is small.
Plan splitPlan(const Dims& kept, const Dims& red, const ReduceShape& shape, int device);

// Runs `call` as planned in `p` (p.parts > 1): the partials, then their combination into out.
void reduceInParts(const LaunchContext& ctx, const ReduceCall& call, const Plan& p,
                   const Workspace& workspace);

// Normalises `call` (already checked) and launches it, in parts when a workspace is given and
// the split pays (reduce.cpp).
void runReduce(const LaunchContext& ctx, const ReduceCall& call, const Workspace* workspace);

// Launches one pass planned as `p` (reduce.cpp).
void launchPlan(const LaunchContext& ctx, const Plan& p, const LaunchOperands& operands);

}  // namespace mimic::ops::detail
