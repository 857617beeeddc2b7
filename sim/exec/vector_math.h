// Functional vector and matrix math for the device interpreter.
//
// Every call processes one whole contiguous range (one row of one ISA instruction) with SIMD
// batches (xsimd, instruction set fixed at build time by MIMIC_SIMD) and a tail.
//
// Data types (isa::DType)
//   f32            IEEE binary32.
//   f16, bf16      stored as raw 16-bit patterns; arithmetic is done in f32 and each result is
//                  rounded to the type (nearest, ties to even). See half.h for the conversions.
//   f64            IEEE binary64, computed in f64 (element by element through libm for the
//                  transcendental functions: glibc's bounds, sin/cos/exp/log within 1 ULP).
//   i8, i16,
//   i32, i64       two's complement; arithmetic wraps on overflow in the type's width (i8 and
//                  i16 as C++ on int8_t/int16_t after promotion to int).
//   u8             uint8, arithmetic wraps modulo 256. Also the bool type (masks, compares).
//
// Pointers must be aligned to the element size (no SIMD alignment is needed). A destination may
// be the same array as a source of the same type (in place); other overlaps are not allowed.
// n == 0 does nothing (reduce still writes its empty result, see below).
//
// Unsupported op/type pairs: every supportsX() returns false for them (and for enum values
// out of range), and the operation itself then does nothing. The interpreter checks first.
//
// Floating point (f32, f16, bf16, f64)
//   IEEE arithmetic, round to nearest even; NaN propagates through every op.
//   Max/Min: NaN if either input is NaN (like torch.maximum); Max(-0, +0) = +0, Min = -0.
//   Rem: C fmod (the result has the sign of the dividend; exact). Pow: C powf (IEEE special
//   cases: pow(x, 0) = 1, pow(1, y) = 1, even for NaN).
//   Unary: Neg, Abs, Sqrt, Recip (1/x), Rsqrt (1/sqrt x) are correctly rounded or within 1 ULP;
//   Floor, Ceil, Trunc and Round (ties to even) are exact and keep the sign of zero;
//   Relu(x) = x > 0 ? x : +0, NaN stays NaN; Sigmoid = 1 / (1 + exp(-x)), computed without
//   overflow for large |x|. Exp, Log, Tanh, Erf, Sin, Cos come from xsimd; the largest errors
//   measured by tests/sim/test_vector_elementwise.cpp (in f32 ULPs against the correctly rounded
//   result) are listed there (TranscendentalAccuracy). Not is undefined for floats, as are
//   And/Or/Xor.
//
// Integers (i8, i16, i32, i64, u8)
//   Add, Sub, Mul, Neg wrap. Abs wraps too: abs(INT_MIN) = INT_MIN; for u8 Abs is the identity.
//   Div truncates toward zero, Rem has the sign of the dividend (C). Division by zero gives 0
//   for both Div and Rem (no trap); INT_MIN / -1 = INT_MIN (wraps) and INT_MIN % -1 = 0.
//   Pow: integer power by repeated squaring, wrapping; a negative exponent gives 0 except for
//   base 1 (gives 1) and -1 (gives +-1 by the exponent's parity); pow(0, 0) = 1.
//   Floor/Ceil/Round/Trunc are the identity; Relu(x) = max(x, 0) (the identity for u8).
//   Neg of u8 wraps (256 - x). Not: u8 -> logical not (x == 0 ? 1 : 0); i8..i64 -> bitwise not.
//   Transcendental ops (Exp .. Cos, Recip, Sqrt, Rsqrt) are float-only.
//   And/Or/Xor are bitwise (for u8 used as bool, that is also logical).
//
// Compare writes 1 or 0 into u8. Float compares are IEEE: -0 == +0, and NaN compares false
// except Ne, which is true.
// Select: dst[i] = mask[i] != 0 ? a[i] : b[i] (bits copied, any type).
// Fma: a * b + c; f32 is fused (one rounding) in every build, f16/bf16 are fused in f32 then
//   rounded to the type, integers wrap.
//
// Cast (every pair of types)
//   same type: bits copied.
//   float -> float: exact widening, RNE narrowing (f16 <-> bf16 goes through f32 exactly;
//   f64 -> f16/bf16 rounds once, directly).
//   float -> i8/i16/i32/i64: truncation toward zero, NaN -> 0, out of range saturates to min/max.
//   float -> u8: truncation, then saturation to [0, 255]; NaN -> 0.
//   int -> float: round to nearest even, correctly rounded (no double rounding, also for
//   i64 -> f32 and i32/i64 -> bf16); f16 overflows to inf above 65504.
//   i64 -> f64 is correctly rounded too.
//   int -> int: sign extension from i8/i16/i32, zero extension from u8, and wrapping
//   (keeping the low bits) to a narrower type (i64 -> i32, i32 -> i8, i16 -> u8, ...).
//
// Reduce (whole range to one value at dst)
//   Sum: the type of the input. f32 sums use 16 interleaved partial sums combined in a fixed
//   order, so results are the same in every SIMD build (they differ from a sequential sum by
//   rounding only). f16/bf16 accumulate in f32 the same way and round once at the end; f64
//   uses 16 interleaved f64 partial sums.
//   Integer sums wrap.
//   Max/Min: as the binary ops (NaN if any element is NaN).
//   ArgMax/ArgMin: one int64 index of the first occurrence of the max/min (compared with ==,
//   so -0 and +0 tie); like torch, a NaN counts as the extreme: the index of the first NaN.
//   n == 0: Sum writes 0; Max writes the lowest value (-inf, INT_MIN, 0), Min the highest
//   (+inf, INT_MAX, 255), ArgMax/ArgMin write -1.
//
// Fill writes the scalar n times. Iota writes i converted to the type like a cast from i64
//   (f16 becomes inf from 65520 on; i8, u8, i16 and i32 wrap).
// Scalar operands (binaryScalar, compareScalar, fill) are raw bits: the low 8/16/32/64 bits
//   of scalarBits read as the type (f32 bits, f16 bits, i32, ...).
//
// Mma: C[m x n] += A[m x k] * B[k x n], all row-major and dense, f32 accumulation. A and B are
//   f32, f16 or bf16 (f16/bf16 tiles are converted to f32 first); not f64. Each C element adds its
//   k products in order of k to its old value, fused multiply-adds when the build has FMA
//   (MIMIC_SIMD=avx2), separate multiply and add otherwise. Fused builds run a 512-bit kernel
//   on hosts with AVX-512F: the same bits, faster (matrix_kernels.h).
//
// Thread safety: every function is reentrant; scratch buffers are thread_local.
#pragma once

#include <cstdint>

#include "sim/isa/isa.h"

namespace mimic::exec {

bool supportsUnary(isa::UnaryOp op, isa::DType t);
bool supportsBinary(isa::BinaryOp op, isa::DType t);
bool supportsFma(isa::DType t);
bool supportsSelect(isa::DType t);
bool supportsCompare(isa::Cond cond, isa::DType t);
bool supportsCast(isa::DType from, isa::DType to);
bool supportsReduce(isa::ReduceOp op, isa::DType t);
bool supportsFill(isa::DType t);
bool supportsIota(isa::DType t);
bool supportsMma(isa::DType abType);

void unary(isa::UnaryOp op, isa::DType t, void* dst, const void* src, int64_t n);
void binary(isa::BinaryOp op, isa::DType t, void* dst, const void* a, const void* b, int64_t n);
void binaryScalar(isa::BinaryOp op, isa::DType t, void* dst, const void* a, uint64_t scalarBits,
                  int64_t n);
void fma(isa::DType t, void* dst, const void* a, const void* b, const void* c, int64_t n);
void select(isa::DType t, void* dst, const uint8_t* mask, const void* a, const void* b, int64_t n);
void compare(isa::Cond cond, isa::DType t, uint8_t* dst, const void* a, const void* b, int64_t n);
void compareScalar(isa::Cond cond, isa::DType t, uint8_t* dst, const void* a, uint64_t scalarBits,
                   int64_t n);
void cast(isa::DType from, isa::DType to, void* dst, const void* src, int64_t n);
void reduce(isa::ReduceOp op, isa::DType t, void* dst, const void* src, int64_t n);
void fill(isa::DType t, void* dst, uint64_t scalarBits, int64_t n);
void iota(isa::DType t, void* dst, int64_t n);
void mma(isa::DType abType, float* c, const void* a, const void* b, int m, int n, int k);

// The instruction set the library was compiled for (xsimd's name: "fma3+avx2", "sse2", ...).
const char* simdArchName();

}  // namespace mimic::exec
