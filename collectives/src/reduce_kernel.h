// The device kernels of the collectives, built with the ISA builder: an elementwise reduction
// of two contiguous ranges and the division that turns a sum into an average.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mimic/mimic_collectives.h"
#include "sim/isa/module.h"

namespace mimic::coll {

constexpr int kNumDataTypes = 6;
constexpr int kNumReduceOps = 5;

size_t dataTypeSize(mimicDataType type);

// Elements per workgroup (one tile): three tiles of the type fill the scratchpad, rounded down
// to a multiple of 64 so that every DMA and vector row stays aligned.
uint64_t tileElements(size_t scratchpadBytes, mimicDataType type);

// Name of the function computing dst = a op b for (type, op); op is Sum, Prod, Min or Max
// (Avg reduces with Sum, then divides).
const char* reduceKernelName(mimicDataType type, mimicReduceOp op);
// Name of the function computing dst = a / ranks.
const char* scaleKernelName(mimicDataType type);

// Every reduction and scale function, for a clique of `ranks` ranks (the divisor of Avg is an
// immediate operand). Arguments of each: dst, a, b (unused by scale), count.
isa::Module buildCollectiveModule(size_t scratchpadBytes, int ranks);

}  // namespace mimic::coll
