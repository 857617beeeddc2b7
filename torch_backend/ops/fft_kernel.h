// The device side of the FFT (fft.h). A workgroup owns kb consecutive lanes along C of one g
// (grid x: groups of kb lanes, grid y: G) and keeps them in the scratchpad for the whole
// transform: two ping-pong buffers of [n][kb] floats per part (lanes innermost), two
// temporaries of [n/2][kb], and the twiddle table expanded to [3][n - 1][kb].
//
// The stages follow the vectorised radix-2 recursion: before the stage of half-length L the
// buffer holds, for every j < M = n / L, the L-point DFTs X[k][j] (k < L) of the subsequences
// x[j], x[j + M], x[j + 2M], ..., stored at [j][k][lane]. The stage combines X[k][j] (first
// half of the buffer) with X[k][j + M/2] (second half) into
//   X'[k][j] = X[k][j] + w_k X[k][j + M/2],   X'[k + L][j] = X[k][j] - w_k X[k][j + M/2],
// w_k = exp(-+ i pi k / L), stored at [j][k'][lane] for k' < 2L. In this layout each operand
// of a stage is M/2 rows of L * kb contiguous floats, so a stage is 8 vector instructions of
// n/2 * kb elements (4 for L = 1, whose twiddle is 1) whatever L: the twiddle vector repeats
// row after row (row stride 0) and the halves are row-strided views. After log2(n) stages the
// buffer holds X[k] at [k][lane], in order.
//
// n and kb are compile-time (the kernel cache key), so all scratchpad offsets are constants;
// the last group of lanes computes kb lanes but loads and stores only the ones that exist.
#pragma once

#include <string>

#include "sim/isa/module.h"
#include "torch_backend/ops/fft.h"

namespace mimic::ops::detail {

// Everything the generated code depends on (the kernel cache key).
struct FftShape {
  int64_t n = 1;
  int64_t kb = 1;  // lanes per workgroup
  FftInput input = FftInput::Complex;
  bool realOut = false;
  std::string key() const;
  // Scratchpad bytes the kernel uses.
  int64_t scratchpadBytes() const;
};

// Operands: the address, then byte strides along G, N and C.
enum FftOperandField { kFtAddr, kFtG, kFtN, kFtC, kFtFields };

// Argument slots.
enum FftArg : int {
  kFftC,         // lanes along C
  kFftOutRows,   // N' rows stored
  kFftScale,     // f32 bits of the scale
  kFftTwiddles,  // HBM address of the table
  kFftInRe,
  kFftInIm = kFftInRe + kFtFields,
  kFftOutRe = kFftInIm + kFtFields,
  kFftOutIm = kFftOutRe + kFtFields,
  kFftArgCount = kFftOutIm + kFtFields,
};

// Grid: x = groups of kb lanes along C, y = G.
isa::Function buildFftKernel(const FftShape& shape);

}  // namespace mimic::ops::detail
