// The device kernel of the elementwise op (elementwise.h): scratchpad layout, arguments and the
// tile loop around the program code of elementwise_emit.h.
//
// Iteration: the op's dims are coalesced to `rank` dims, numbered from the innermost. A tile
// covers dims 0..split-1 whole and a chunk of dim `split` (split < 4: the tile is one strided
// DMA of at most 4 dims per operand), and one index of every outer dim. Tiles are numbered in
// row-major order, so each is a run of consecutive row-major element indices; workgroup w of G
// takes tiles [w*T/G, (w+1)*T/G) and walks them with double buffering: the next tile's inputs
// load while the current one computes, and each tile's store overlaps what follows.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/isa/module.h"
#include "torch_backend/ops/elementwise_emit.h"
#include "torch_backend/ops/elementwise_program.h"

namespace mimic::ops {

// The programs a kernel runs on every tile, program j storing output j: one for elementwise(),
// several for elementwiseMulti(). All read the same inputs (same dtypes) and scalars; the
// inputs are loaded once per tile.
using KernelPrograms = std::vector<const Program*>;

// What the kernel's code depends on besides the program (part of the cache key).
struct IterationClass {
  int rank = 1;
  int split = 0;
  unsigned uniformInputs = 0;  // used inputs with stride 0 in every dim: loaded once
  // A list kernel (elementwiseList) runs the program over this many tensors ("segments"), each
  // with its own block of arguments; workgroup w takes tiles [w*T/G, (w+1)*T/G) of all T tiles
  // of all segments. Segments are rank 1, with no uniform inputs and no counter.
  int segments = 1;
};

// Where every buffer lives in scratchpad.
struct KernelLayout {
  int64_t capacity = 0;  // elements per tile, at most
  int depth = 1;         // buffer sets in the pipeline
  int64_t setBytes = 0;  // one set: the loaded inputs' tiles and the output tile
  int64_t input[kMaxElementwiseInputs] = {};  // offset in a set, or absolute for uniform inputs
  int64_t out[kMaxElementwiseOutputs] = {};   // offset in a set (absolute if uniform program)
  int64_t temps = 0, tempBytes = 0;
  RandBuffers rand = {};

  // Output `output`'s tile buffers (its out buffer; inputs, temps and rand are shared).
  TileBuffers buffers(int set, const KernelPrograms& programs, unsigned uniformInputs,
                      int output = 0) const;
};

// Plans the layout for `temps` temporary slots (the most countTemps gives for any program;
// the programs run one after the other). Throws std::invalid_argument if not even 64 elements
// of every buffer fit in `scratchpadBytes`.
KernelLayout planLayout(const KernelPrograms& programs, int temps, unsigned uniformInputs,
                        size_t scratchpadBytes);

// Kernel argument slots. Operands 0..outputs-1 are the outputs, then the inputs any program
// uses, in index order; each
// has its base address and its byte stride in every coalesced dim (inner first).
struct ElementwiseArgs {
  static constexpr int kTiles = 0;       // T
  static constexpr int kChunks = 1;      // chunks of dim split
  static constexpr int kTileExtent = 2;  // elements of dim split in a full chunk
  static constexpr int kSplitSize = 3;   // size of dim split
  static constexpr int kInner = 4;       // product of the sizes of dims 0..split-1
  static constexpr int kCapacity = 5;    // elements per tile at most (<= layout capacity)
  static constexpr int kRandOffset = 6;  // random.offset
  static constexpr int kSizes = 7;       // size of each dim, inner first
  int spElements = 0;                    // dense scratchpad strides (elements) of dims 0..split
  int operands = 0;  // operand j: base at operands + j * (rank + 1), then its strides
  // Slots up to here form one segment's block; segment s's slot x is s * segmentBlock + x.
  int segmentBlock = 0;
  int scalars = 0;     // the scalars' bits in the compute type
  int randKeys = 0;    // randKey of each stream of program 0, then of program 1, ...
  int totalTiles = 0;  // list kernels: the tiles of all segments
  int tileStarts = 0;  // list kernels: segment s's first tile in the list's numbering
  int total = 0;
};

ElementwiseArgs elementwiseArgs(const KernelPrograms& programs, const IterationClass& iteration,
                                size_t numScalars);

// The kernel for the programs and iteration class, laid out by `layout`.
isa::Function buildElementwiseKernel(const KernelPrograms& programs,
                                     const IterationClass& iteration, const KernelLayout& layout,
                                     size_t numScalars);

}  // namespace mimic::ops
