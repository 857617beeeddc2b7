// complex64 matrix products on the device: four float32 GEMMs on the parts, read and written
// in place through strided views of the pairs (the GEMM kernel takes any strides), the second
// product of each part accumulated onto the first by the kernel's beta = 1:
//   re(c) = re(a) re(b) - im(a) im(b),  im(c) = re(a) im(b) + im(a) re(b).
// Four products rather than the three of Gauss's trick, whose cancellation loosens the error
// bound of the imaginary part. Conjugate views are read through their memory with the signs of
// the imaginary parts flipped. Hooked into mm, bmm, addmm, baddbmm, mv, dot and vdot
// (gemm_kernels.cpp).
#pragma once

#include <ATen/core/Tensor.h>

namespace mimic::torch_backend::aten {

// Whether the operands and the result are complex64 tensors the four GEMMs serve (the result
// no conjugate or negative view).
bool complexGemmServes(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b);
bool complexGemmServes(const at::Tensor& a, const at::Tensor& b);

// c = alpha a b + beta c for complex64 2-D a [M, K], b [K, N], c [M, N], or 3-D batches of
// them, with real alpha and beta (c is not read when beta is 0).
void complexGemm(const char* op, const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                 double alpha = 1, double beta = 0);

// The real value of `s`; false for a complex one with a nonzero imaginary part.
bool realScalar(const at::Scalar& s, double* value);

}  // namespace mimic::torch_backend::aten
