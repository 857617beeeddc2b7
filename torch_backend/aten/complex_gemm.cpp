#include "torch_backend/aten/complex_gemm.h"

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/gemm.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend::aten {
namespace {

// complexPartOf, 3-D (a matrix as a batch of one), as the GEMM takes its operands.
ops::TensorView partOf(const at::Tensor& t, int part) {
  ops::TensorView view = complexPartOf(t, part);
  if (t.dim() == 2) {
    view.sizes.insert(view.sizes.begin(), 1);
    view.strides.insert(view.strides.begin(), 2 * t.size(0) * t.stride(0));
  }
  return view;
}

bool servable(const at::Tensor& t) {
  return t.scalar_type() == at::kComplexFloat && !t.is_neg();
}

}  // namespace

bool complexGemmServes(const at::Tensor& a, const at::Tensor& b) {
  return servable(a) && servable(b);
}

bool complexGemmServes(const at::Tensor& c, const at::Tensor& a, const at::Tensor& b) {
  return complexGemmServes(a, b) && servable(c) && !c.is_conj();
}

void complexGemm(const char* op, const at::Tensor& c, const at::Tensor& a, const at::Tensor& b,
                 double alpha, double beta) {
  if (c.numel() == 0) return;
  checkSameDevice(a, c, "gemm");
  checkSameDevice(b, c, "gemm");
  // conj(a) has imaginary part -im(a): the products that read it change sign.
  const double signA = a.is_conj() ? -1 : 1, signB = b.is_conj() ? -1 : 1;
  const ops::TensorView cr = partOf(c, 0), ci = partOf(c, 1);
  const ops::TensorView ar = partOf(a, 0), ai = partOf(a, 1);
  const ops::TensorView br = partOf(b, 0), bi = partOf(b, 1);
  const ops::LaunchContext ctx = launchContextOf(c);
  onDevice(op, [&] {
    ops::gemm(ctx, cr, ar, br, alpha, beta);
    ops::gemm(ctx, cr, ai, bi, -signA * signB * alpha, 1);
    ops::gemm(ctx, ci, ar, bi, signB * alpha, beta);
    ops::gemm(ctx, ci, ai, br, signA * alpha, 1);
  });
}

bool realScalar(const at::Scalar& s, double* value) {
  if (s.isComplex()) {
    const c10::complex<double> z = s.toComplexDouble();
    if (z.imag() != 0) return false;
    *value = z.real();
    return true;
  }
  *value = s.toDouble();
  return true;
}

}  // namespace mimic::torch_backend::aten
