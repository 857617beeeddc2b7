// Reference kernels written with the ISA builder. They exercise the compute engine in tests,
// benchmarks and examples; each comment gives the arguments, in order, as 8-byte values.
#pragma once

#include <cstdint>

#include "sim/isa/module.h"

namespace mimic::kernels {

// c[r][k] = a[r][k] + b[r][k] for an f32 matrix of `rows` x `cols`; a and b are read with
// element strides (0 broadcasts), c is dense. Grid: (ceil(cols / tile), rows).
// Args: c, a, b, cols, aRowStride, aColStride, bRowStride, bColStride.
isa::Function addStrided(uint32_t tile);

// y[i] = alpha * x[i] + y[i] over n f32 elements, streaming tiles through `depth` sets of
// scratchpad buffers (2: double buffering) so that the DMAs of the next depth - 1 tiles
// overlap the current tile's compute. Each workgroup takes a contiguous chunk of
// `tile * tilesPerWorkgroup` elements; n must be a multiple of `tile`.
// Grid: (ceil(n / (tile * tilesPerWorkgroup)), 1, 1). Args: y, x, n, alpha (f32 bits).
isa::Function axpyPipelined(uint32_t tile, uint32_t tilesPerWorkgroup, int depth);

// out[r] = sum of in[r][0..cols) for an f32 matrix with a row stride of `cols`. Each
// workgroup reduces `rowsPerWorkgroup` rows, `colTile` columns at a time.
// Grid: (ceil(rows / rowsPerWorkgroup), 1, 1). Args: out, in, rows, cols.
isa::Function rowSum(uint32_t rowsPerWorkgroup, uint32_t colTile);

// Compute only, no memory traffic: fills `elements` f32 of scratchpad, then multiplies them by
// 1.0 `iterations` times. Grid: any. Args: iterations.
isa::Function vectorSpin(uint32_t elements);

// c = a x b for f32 row-major matrices, a: m x k, b: k x n, c: m x n. Each workgroup computes
// one tile x tile block of c with the matrix pipe, double-buffering the a and b tiles along k.
// Edges need not be multiples of the tile. Grid: (ceil(n / tile), ceil(m / tile), 1).
// Args: c, a, b, m, n, k.
isa::Function gemm(uint32_t tile);

}  // namespace mimic::kernels
