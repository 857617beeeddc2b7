// Fast Fourier transforms for the PyTorch backend (torch.fft's _fft_c2c, _fft_r2c, _fft_c2r)
// along the middle dim of 3-D views [G, N, C] (the caller merges the dims before and after the
// transformed one), for power-of-two lengths n. Complex operands are two float32 views, the
// real and imaginary parts (a complex64 tensor's interleaved pairs: strides in floats).
//
// Algorithm: radix-2 Cooley-Tukey in its self-sorting (Stockham-like) form, every lane of the
// batch held in the scratchpad of one workgroup for all log2(n) stages (fft_kernel.h), one
// launch per call. The twiddle factors come from a table the host computes in double and
// rounds to float32 once (fftTwiddles, like a cuFFT plan; the caller uploads and caches it per
// length and direction). Each output is then within the usual FFT bound of the exact DFT:
// |error| <= c * log2(n) * eps * ||x||_2 for a small c.
//
// Inputs: Complex (N = n rows), Real (N = n rows, imaginary parts 0) or Hermitian (N = n/2 + 1
// rows of a one-sided spectrum, the other n/2 - 1 rows being the conjugates of rows n/2 - 1..1,
// as pocketfft's c2r reads it: the imaginary parts of rows 0 and n/2 do not contribute to a
// real output). Outputs: the first N' <= n rows (N' = n/2 + 1 for a one-sided r2c), complex,
// or real parts only (c2r). Every output is multiplied by `scale` (normalization).
//
// Throws std::invalid_argument naming the operand for lengths that are not powers of two or do
// not fit the scratchpad (fftMaxLength), mismatched sizes or dtypes; mimic::Error when the
// launch fails. Asynchronous on ctx.queue; an empty view launches nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "torch_backend/ops/tensor_view.h"

namespace mimic::ops {

enum class FftInput { Complex, Real, Hermitian };

struct FftOperands {
  TensorView inRe, inIm;    // [G, N, C] f32; inIm unused for Real input
  TensorView outRe, outIm;  // [G, N', C] f32; outIm empty (data null) for a real output
  TensorView twiddles;      // fftTwiddles(n, forward) on the device: 1-D f32 of 3 * (n - 1)
  FftInput input = FftInput::Complex;
  int64_t n = 1;  // the transform's length: N for Complex and Real input, 2 * (N - 1) for
                  // Hermitian (n = 1 reads its one row)
  double scale = 1.0;
};

// The twiddle table of length n (a power of two) for one direction: for every stage half-length
// L = 1, 2, 4, ..., n/2 and k < L, w = exp(-+ i pi k / L) (minus: forward), at offset L - 1 of
// three planes [re][im][-im] of n - 1 floats each.
std::vector<float> fftTwiddles(int64_t n, bool forward);

// The longest power-of-two transform one workgroup's scratchpad holds on `device`.
int64_t fftMaxLength(int device);

void fft(const LaunchContext& ctx, const FftOperands& operands);

}  // namespace mimic::ops
