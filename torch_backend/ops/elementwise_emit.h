// Code generation for one tile of an elementwise program: the vector instructions that compute
// the program over `count` dense elements already in scratchpad, each operation over the whole
// tile at once. Intermediate values live in temporary slots that are reused as soon as a value
// is consumed; the last operation writes straight into the output buffer when its type allows.
#pragma once

#include <cstdint>

#include "sim/isa/builder.h"
#include "torch_backend/ops/elementwise_program.h"
#include "torch_backend/ops/elementwise_rand.h"

namespace mimic::ops {

// Scratchpad byte addresses of one tile's buffers.
struct TileBuffers {
  int64_t inputs[kMaxElementwiseInputs] = {};  // each used input, in its own dtype
  int64_t out = 0;                             // the result, in the out dtype
  int64_t temps = 0;                           // temporary slot 0
  int64_t tempBytes = 0;                       // bytes of one slot (elements x compute size)
  RandBuffers rand = {};                       // for programs with rand
};

// Registers and argument slots the code reads.
struct TileArgs {
  isa::Reg count;      // elements in the tile
  isa::Reg randStart;  // counter of the tile's first element (programs with rand only)
  int scalarArg = 0;   // kernel argument of s0 (its bits in the compute type); s<i> follows
  int randKeyArg = 0;  // kernel argument of stream 0's key (randKey); stream n follows
};

// Emits the program over one tile; returns the address holding the result in the out dtype:
// buffers.out, or the input's buffer for a direct program.
int64_t emitTile(isa::KernelBuilder& k, const Program& program, const TileBuffers& buffers,
                 const TileArgs& args);

// The number of temporary slots emitTile uses for `program`.
int countTemps(const Program& program);

}  // namespace mimic::ops
