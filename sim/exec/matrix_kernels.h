// The f32 kernels behind mma (vector_math.h). Internal to sim/exec; tests run each one.
//
// Every kernel gives the same bits: each C element adds its k products in order of k to its old
// value, one rounding per product and per add, or one per fused multiply-add in builds whose
// contract is fused (MIMIC_SIMD=avx2). Only the host speed differs.
#pragma once

namespace mimic::exec {

enum class MmaKernel {
  Simd,    // xsimd batches of the build's instruction set (AVX2+FMA or SSE2)
  Avx512,  // 512-bit registers, chosen at run time on hosts with AVX-512F (fused builds only)
};

// "simd" or "avx512".
const char* mmaKernelName(MmaKernel kernel);

// Whether this build has the kernel and this host can run it.
bool mmaKernelAvailable(MmaKernel kernel);

// The fastest available kernel.
MmaKernel bestMmaKernel();

// C[m x n] += A[m x k] * B[k x n], all f32, row-major and dense; the kernel must be available.
void mmaF32(MmaKernel kernel, float* c, const float* a, const float* b, int m, int n, int k);

namespace detail {
// The AVX-512 kernel (matrix_avx512.cpp, compiled in fused builds only).
bool avx512Supported();
void mmaAvx512(float* c, const float* a, const float* b, int m, int n, int k);
}  // namespace detail

}  // namespace mimic::exec
