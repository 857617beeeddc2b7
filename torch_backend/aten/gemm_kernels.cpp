// The GEMM family on the device: mm, bmm, addmm, baddbmm and mv run ops::gemm, an addmm or
// baddbmm bias read by the GEMM's epilogue as C is written (one launch, the bias never copied);
// dot, vdot and 1 x K x 1 products run the reduce kernel's fused multiply-sum. Integer and
// float64 products take the counted CPU fallback. matmul and linear reach these through
// PyTorch's own decompositions.
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/addmm_ops.h>
#include <ATen/ops/baddbmm_ops.h>
#include <ATen/ops/bmm_ops.h>
#include <ATen/ops/dot_ops.h>
#include <ATen/ops/mm_ops.h>
#include <ATen/ops/mv_ops.h>
#include <ATen/ops/vdot_ops.h>
#include <torch/library.h>

#include "torch_backend/aten/complex_gemm.h"
#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/gemm.h"
#include "torch_backend/src/aten_core.h"

namespace mimic::torch_backend::aten {
namespace {

template <class Op>
using Fallback = at::native::call_fallback_fn<&cpuFallback, Op>;

void checkDtype(at::ScalarType expected, const at::Tensor& t) {
  TORCH_CHECK(t.scalar_type() == expected, "expected scalar type ", expected, " but found ",
              t.scalar_type());
}

// Every operand has the first's dtype; false when that is not one the matrix pipe multiplies
// (integers and float64 run on the CPU).
template <typename... Rest>
bool floatProduct(const at::Tensor& first, const Rest&... rest) {
  const at::ScalarType type = first.scalar_type();
  (checkDtype(type, rest), ...);
  return type == at::kFloat || type == at::kHalf || type == at::kBFloat16;
}

void checkMm(const at::Tensor& a, const at::Tensor& b, const char* name) {
  TORCH_CHECK(a.dim() == 2 && b.dim() == 2, name, ": expected 2-D tensors, got ", a.dim(),
              "-D and ", b.dim(), "-D");
  TORCH_CHECK(a.size(1) == b.size(0), "mat1 and mat2 shapes cannot be multiplied (", a.size(0), "x",
              a.size(1), " and ", b.size(0), "x", b.size(1), ")");
}

void checkBmm(const at::Tensor& a, const at::Tensor& b) {
  TORCH_CHECK(a.dim() == 3 && b.dim() == 3, "batch1 must be a 3D tensor; got ", a.dim(), "-D and ",
              b.dim(), "-D");
  TORCH_CHECK(a.size(0) == b.size(0) && a.size(2) == b.size(1),
              "Expected size for first two dimensions of batch2 tensor to be: [", a.size(0), ", ",
              a.size(2), "] but got: [", b.size(0), ", ", b.size(1), "].");
}

// How gemmOnDevice sees its operands: 3-D as they are, or 2-D as a batch of one.
enum class Rank { Batched, Matrix };

// The view of t, lifted to a batch of one for a matrix (strided as unsqueeze(0) strides it, so
// the kernel sees what it saw through the dispatcher's view).
ops::TensorView gemmView(const at::Tensor& t, Rank rank) {
  ops::TensorView view = viewOf(t);
  if (rank == Rank::Matrix) {
    view.sizes.insert(view.sizes.begin(), 1);
    view.strides.insert(view.strides.begin(), t.dim() > 0 ? t.size(0) * t.stride(0) : 1);
  }
  return view;
}

// c[i] = alpha a[i] b[i] + beta c[i] (beta bias[i] instead, read in the epilogue, with a bias).
void gemmOnDevice(const char* op, Rank rank, const at::Tensor& c, const at::Tensor& a,
                  const at::Tensor& b, double alpha, double beta,
                  const at::Tensor* bias = nullptr) {
  if (c.numel() == 0) return;
  checkSameDevice(a, c, "gemm");
  checkSameDevice(b, c, "gemm");
  ops::TensorView biasView;
  if (bias) {
    checkSameDevice(*bias, c, "gemm");
    biasView = gemmView(*bias, rank);
  }
  onDevice(op, [&] {
    ops::gemm(launchContextOf(c), gemmView(c, rank), gemmView(a, rank), gemmView(b, rank), alpha,
              beta, bias ? &biasView : nullptr);
  });
}

// out (keepdim-shaped, one element per row) = the sum of a * b over a's last dim, one streaming
// reduction (products in float32 or int64, as the sum accumulates).
void dotOnDevice(const char* op, const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  checkSameDevice(a, out, "reduce");
  checkSameDevice(b, out, "reduce");
  ops::ReduceFusion fusion;
  fusion.map = ops::ReduceMap::Mul;
  fusion.other = viewOf(b);
  reduceOnDevice(op, out, a, {static_cast<int>(a.dim()) - 1}, ops::ReduceKind::Sum, fusion);
}

// c = alpha a b + beta c for 2-D operands. A plain 1 x K x 1 product (inner, tensordot) is a
// dot product, which the reduce kernel streams.
void mmOnDevice(const char* op, const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                double alpha = 1, double beta = 0) {
  if (a.size(0) == 1 && b.size(1) == 1 && alpha == 1 && beta == 0) {
    return dotOnDevice(op, c, a, b.t());
  }
  gemmOnDevice(op, Rank::Matrix, c, a, b, alpha, beta);
}

// out = alpha a b + beta self for 2-D a and b: self, broadcast to out's shape (stride 0, no
// copy), is the epilogue's bias.
void addmmOnDevice(const char* op, const at::Tensor& out, const at::Tensor& self,
                   const at::Tensor& a, const at::Tensor& b, const at::Scalar& beta,
                   const at::Scalar& alpha) {
  const at::Tensor bias = self.expand(out.sizes());
  const double betaValue = beta.toDouble();
  gemmOnDevice(op, Rank::Matrix, out, a, b, alpha.toDouble(), betaValue,
               betaValue != 0 ? &bias : nullptr);
}

// Tensor::is_set_to without a dispatcher call, which the device would answer through the CPU
// fallback, on copies (never the same).
bool sameView(const at::Tensor& a, const at::Tensor& b) {
  return a.storage().unsafeGetStorageImpl() == b.storage().unsafeGetStorageImpl() &&
         a.storage_offset() == b.storage_offset() && a.sizes() == b.sizes() &&
         a.strides() == b.strides();
}

at::Tensor emptyLike(const at::Tensor& reference, at::IntArrayRef sizes) {
  return emptyOnDevice(sizes, reference.scalar_type(), reference.device());
}

at::Tensor mm(const at::Tensor& self, const at::Tensor& mat2) {
  checkMm(self, mat2, "mm");
  if (complexGemmServes(self, mat2)) {
    at::Tensor out = emptyLike(self, {self.size(0), mat2.size(1)});
    complexGemm("aten::mm", out, self, mat2);
    return out;
  }
  if (!floatProduct(self, mat2)) return Fallback<at::_ops::mm>::call(self, mat2);
  at::Tensor out = emptyLike(self, {self.size(0), mat2.size(1)});
  mmOnDevice("aten::mm", out, self, mat2);
  return out;
}

at::Tensor& mmOut(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  checkMm(self, mat2, "mm");
  if (complexGemmServes(out, self, mat2)) {
    prepareOut(out, {self.size(0), mat2.size(1)}, self.scalar_type());
    complexGemm("aten::mm.out", out, self, mat2);
    return out;
  }
  if (!floatProduct(self, mat2, out)) return Fallback<at::_ops::mm_out>::call(self, mat2, out);
  prepareOut(out, {self.size(0), mat2.size(1)}, self.scalar_type());
  mmOnDevice("aten::mm.out", out, self, mat2);
  return out;
}

at::Tensor bmm(const at::Tensor& self, const at::Tensor& mat2) {
  checkBmm(self, mat2);
  if (complexGemmServes(self, mat2)) {
    at::Tensor out = emptyLike(self, {self.size(0), self.size(1), mat2.size(2)});
    complexGemm("aten::bmm", out, self, mat2);
    return out;
  }
  if (!floatProduct(self, mat2)) return Fallback<at::_ops::bmm>::call(self, mat2);
  at::Tensor out = emptyLike(self, {self.size(0), self.size(1), mat2.size(2)});
  gemmOnDevice("aten::bmm", Rank::Batched, out, self, mat2, 1, 0);
  return out;
}

at::Tensor& bmmOut(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  checkBmm(self, mat2);
  if (complexGemmServes(out, self, mat2)) {
    prepareOut(out, {self.size(0), self.size(1), mat2.size(2)}, self.scalar_type());
    complexGemm("aten::bmm.out", out, self, mat2);
    return out;
  }
  if (!floatProduct(self, mat2, out)) return Fallback<at::_ops::bmm_out>::call(self, mat2, out);
  prepareOut(out, {self.size(0), self.size(1), mat2.size(2)}, self.scalar_type());
  gemmOnDevice("aten::bmm.out", Rank::Batched, out, self, mat2, 1, 0);
  return out;
}

// beta self + alpha a b of complex64 operands with real alpha and beta, as complex GEMMs into a
// copy of self; false when the call is not one the complex GEMM serves.
bool complexAddProduct(const char* name, const at::Tensor& self, const at::Tensor& a,
                       const at::Tensor& b, const at::Scalar& beta, const at::Scalar& alpha,
                       at::IntArrayRef sizes, at::Tensor* result) {
  double alphaValue, betaValue;
  if (!complexGemmServes(a, b) || self.scalar_type() != at::kComplexFloat || self.is_conj() ||
      !realScalar(alpha, &alphaValue) || !realScalar(beta, &betaValue)) {
    return false;
  }
  at::Tensor out = emptyLike(a, sizes);
  if (betaValue != 0) out.copy_(self.expand(out.sizes()));
  complexGemm(name, out, a, b, alphaValue, betaValue);
  *result = std::move(out);
  return true;
}

at::Tensor addmm(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                 const at::Scalar& beta, const at::Scalar& alpha) {
  checkMm(mat1, mat2, "addmm");
  at::Tensor complexResult;
  if (complexAddProduct("aten::addmm", self, mat1, mat2, beta, alpha, {mat1.size(0), mat2.size(1)},
                        &complexResult)) {
    return complexResult;
  }
  if (!floatProduct(self, mat1, mat2)) {
    return Fallback<at::_ops::addmm>::call(self, mat1, mat2, beta, alpha);
  }
  at::Tensor out = emptyLike(mat1, {mat1.size(0), mat2.size(1)});
  addmmOnDevice("aten::addmm", out, self, mat1, mat2, beta, alpha);
  return out;
}

at::Tensor& addmmOut(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                     const at::Scalar& beta, const at::Scalar& alpha, at::Tensor& out) {
  checkMm(mat1, mat2, "addmm");
  if (!floatProduct(self, mat1, mat2, out)) {
    return Fallback<at::_ops::addmm_out>::call(self, mat1, mat2, beta, alpha, out);
  }
  prepareOut(out, {mat1.size(0), mat2.size(1)}, mat1.scalar_type());
  if (sameView(out, self)) {
    // out's old contents are the bias: C = alpha A B + beta C.
    mmOnDevice("aten::addmm.out", out, mat1, mat2, alpha.toDouble(), beta.toDouble());
  } else {
    addmmOnDevice("aten::addmm.out", out, self, mat1, mat2, beta, alpha);
  }
  return out;
}

at::Tensor& addmm_(at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  checkMm(mat1, mat2, "addmm");
  if (!floatProduct(self, mat1, mat2)) {
    return Fallback<at::_ops::addmm_>::call(self, mat1, mat2, beta, alpha);
  }
  mmOnDevice("aten::addmm_", self, mat1, mat2, alpha.toDouble(), beta.toDouble());
  return self;
}

at::Tensor baddbmm(const at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                   const at::Scalar& beta, const at::Scalar& alpha) {
  checkBmm(batch1, batch2);
  at::Tensor complexResult;
  if (complexAddProduct("aten::baddbmm", self, batch1, batch2, beta, alpha,
                        {batch1.size(0), batch1.size(1), batch2.size(2)}, &complexResult)) {
    return complexResult;
  }
  if (!floatProduct(self, batch1, batch2)) {
    return Fallback<at::_ops::baddbmm>::call(self, batch1, batch2, beta, alpha);
  }
  at::Tensor out = emptyLike(batch1, {batch1.size(0), batch1.size(1), batch2.size(2)});
  const double betaValue = beta.toDouble();
  at::Tensor bias;
  if (betaValue != 0) bias = self.expand(out.sizes());
  gemmOnDevice("aten::baddbmm", Rank::Batched, out, batch1, batch2, alpha.toDouble(), betaValue,
               betaValue != 0 ? &bias : nullptr);
  return out;
}

at::Tensor& baddbmm_(at::Tensor& self, const at::Tensor& batch1, const at::Tensor& batch2,
                     const at::Scalar& beta, const at::Scalar& alpha) {
  checkBmm(batch1, batch2);
  if (!floatProduct(self, batch1, batch2)) {
    return Fallback<at::_ops::baddbmm_>::call(self, batch1, batch2, beta, alpha);
  }
  gemmOnDevice("aten::baddbmm_", Rank::Batched, self, batch1, batch2, alpha.toDouble(),
               beta.toDouble());
  return self;
}

at::Tensor mv(const at::Tensor& self, const at::Tensor& vec) {
  TORCH_CHECK(self.dim() == 2 && vec.dim() == 1 && self.size(1) == vec.size(0),
              "size mismatch, got input (", self.size(0), "), mat (", self.size(0), "x",
              self.size(1), "), vec (", vec.size(0), ")");
  if (complexGemmServes(self, vec)) {
    at::Tensor out = emptyLike(self, {self.size(0)});
    complexGemm("aten::mv", out.unsqueeze(1), self, vec.unsqueeze(1));
    return out;
  }
  if (!floatProduct(self, vec)) return Fallback<at::_ops::mv>::call(self, vec);
  at::Tensor out = emptyLike(self, {self.size(0)});
  mmOnDevice("aten::mv", out.unsqueeze(1), self, vec.unsqueeze(1));
  return out;
}

bool dotDtype(at::ScalarType type) {
  return type == at::kFloat || type == at::kHalf || type == at::kBFloat16 || type == at::kInt ||
         type == at::kLong || type == at::kByte || type == at::kChar || type == at::kShort;
}

template <class Op>
at::Tensor dotOf(const char* op, const at::Tensor& self, const at::Tensor& other) {
  TORCH_CHECK(self.dim() == 1 && other.dim() == 1, "1D tensors expected, but got ", self.dim(),
              "D and ", other.dim(), "D tensors");
  // Mismatches keep the CPU's errors, and float64 its kernels.
  if (self.size(0) != other.size(0) || self.scalar_type() != other.scalar_type() ||
      !dotDtype(self.scalar_type())) {
    if (self.size(0) == other.size(0) && complexGemmServes(self, other)) {
      at::Tensor out = emptyLike(self, {});
      complexGemm(op, out.view({1, 1}), self.unsqueeze(0), other.unsqueeze(1));
      return out;
    }
    return Fallback<Op>::call(self, other);
  }
  at::Tensor out = emptyLike(self, {});
  dotOnDevice(op, out.view({1}), self, other);
  return out;
}

at::Tensor dot(const at::Tensor& self, const at::Tensor& tensor) {
  return dotOf<at::_ops::dot>("aten::dot", self, tensor);
}

// vdot conjugates its first operand: for the real dtypes the device computes in, a dot product
// (complex operands take the fallback).
at::Tensor vdot(const at::Tensor& self, const at::Tensor& other) {
  if (self.dim() == 1 && other.dim() == 1 && self.size(0) == other.size(0) &&
      complexGemmServes(self, other)) {
    return dotOf<at::_ops::vdot>("aten::vdot", self.conj(), other);
  }
  return dotOf<at::_ops::vdot>("aten::vdot", self, other);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  kernelOpEntry("mm", "gemm", "gemm");
  m.impl("mm", TORCH_FN(mm));
  m.impl("mm.out", TORCH_FN(mmOut));
  kernelOpEntry("bmm", "gemm", "gemm");
  m.impl("bmm", TORCH_FN(bmm));
  m.impl("bmm.out", TORCH_FN(bmmOut));
  kernelOpEntry("addmm", "gemm", "gemm");
  m.impl("addmm", TORCH_FN(addmm));
  m.impl("addmm.out", TORCH_FN(addmmOut));
  m.impl("addmm_", TORCH_FN(addmm_));
  kernelOpEntry("baddbmm", "gemm", "gemm");
  m.impl("baddbmm", TORCH_FN(baddbmm));
  m.impl("baddbmm_", TORCH_FN(baddbmm_));
  kernelOpEntry("mv", "gemm", "gemm");
  m.impl("mv", TORCH_FN(mv));
  kernelOpEntry("dot", "gemm", "reduce");
  m.impl("dot", TORCH_FN(dot));
  kernelOpEntry("vdot", "gemm", "reduce");
  m.impl("vdot", TORCH_FN(vdot));
}

}  // namespace mimic::torch_backend::aten
