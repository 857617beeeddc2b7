// The counter-based generator behind the elementwise `rand` token.
//
// The value of stream `stream` (the n-th rand token of a program) at counter c (random.offset
// plus the element's row-major linear index, mod 2^64) is a pure function of (seed, c, stream):
//   key   = randKey(seed, stream)                      (64 bits, computed on the host)
//   x     = lowbias32(low32(c) ^ roundKey(key, c >> 32))
//   x     = lowbias32(x ^ (key >> 32))
//   value = (x & (2^b - 1)) * 2^-b
// where lowbias32 is Wellons' 32-bit integer hash (x ^= x >> 16; x *= 0x7feb352d;
// x ^= x >> 15; x *= 0x846ca68b; x ^= x >> 16) and b the precision of the compute type (24
// bits for f32, 11 for f16, 8 for bf16), so every value is exact in the type and in [0, 1).
//
// Why this shape: the interpreter runs i32 and f32 vector ops as SIMD but integer division (the
// only right shift available) element by element, so the per-element work is 32-bit and its
// logical shifts are exact i32 -> f32 -> i32 conversions of values with the low bits masked
// off. The high half of the counter changes at most once within a tile: roundKey runs on the
// scalar unit per tile, and a 0/1 carry vector picks roundKey(hi + 1) after the wrap.
#pragma once

#include <cstdint>

#include "sim/isa/builder.h"

namespace mimic::ops {

// The per-stream key, computed on the host and passed as a kernel argument.
int64_t randKey(uint64_t seed, int stream);

// The generator's value on the host, as a double (exact in `type`): the reference for tests.
double randReference(uint64_t seed, uint64_t counter, int stream, isa::DType type);

// Scratchpad buffers the generator uses: `iota` holds 0, 1, 2, ... (i32, filled once per
// workgroup); z and t are i32, f is f32 scratch, each with room for the tile.
struct RandBuffers {
  int64_t iota, z, t, f;
};

// Emits the generator for one tile of `count` elements: dst (of float type `type`) gets the
// values for counters start, start + 1, ... `key` holds randKey. Takes at most 7 registers.
void emitRand(isa::KernelBuilder& k, isa::DType type, int64_t dst, const RandBuffers& buffers,
              isa::Reg start, isa::Reg key, isa::Reg count);

}  // namespace mimic::ops
