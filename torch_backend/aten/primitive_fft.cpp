// torch.ops.mimic.fft: the power-of-two FFT of torch_backend/ops/fft.h along one dim of any
// view, for the _fft_c2c, _fft_r2c and _fft_c2r kernels of torch_mimic/ops_fft.py, with
// torch.ops.mimic.fft_twiddles (the host's table) and fft_max_length. The dims before and after the
// transformed one become the kernel's G and C when each group merges into one stride; an operand
// whose dims do not merge goes through a contiguous copy.
//
// Which transform is given by the dtypes: complex64 to complex64 (c2c), float32 to complex64
// (r2c: out has n/2 + 1 or n rows along dim), complex64 to float32 (c2r: input holds the
// n/2 + 1 rows of a one-sided spectrum, out the n real rows). The direction is the twiddle
// table's (ops::fftTwiddles, uploaded by the caller).
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <algorithm>
#include <optional>
#include <vector>

#include "torch_backend/aten/device_call.h"
#include "torch_backend/aten/kernel_op_checks.h"
#include "torch_backend/ops/fft.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

using aten::onDevice;

// Part `part` of t (its float32 view when t is real) around dim.
std::optional<ops::TensorView> partAround(const at::Tensor& t, int part, int64_t dim) {
  return ops::aroundDim(t.is_complex() ? complexPartOf(t, part) : viewOf(t), dim);
}

void fft(const at::Tensor& out, const at::Tensor& input, const at::Tensor& twiddles, int64_t dim,
         int64_t n, double scale) {
  aten::checkSameDevice(input, out, "fft");
  aten::checkSameDevice(twiddles, out, "fft");
  TORCH_CHECK(input.dim() == out.dim() && input.dim() > 0, "mimic: fft input has ", input.dim(),
              " dims and out ", out.dim(), "; both need the same number, at least 1");
  TORCH_CHECK(dim >= 0 && dim < input.dim(), "mimic: fft dim ", dim, " out of range for a ",
              input.dim(), "-d input");
  const bool complexIn = input.scalar_type() == at::kComplexFloat;
  const bool complexOut = out.scalar_type() == at::kComplexFloat;
  TORCH_CHECK((complexIn || input.scalar_type() == at::kFloat) &&
                  (complexOut || out.scalar_type() == at::kFloat) && (complexIn || complexOut),
              "mimic: fft takes complex64 to complex64, float32 to complex64 or complex64 to "
              "float32, got ",
              input.scalar_type(), " to ", out.scalar_type());
  TORCH_CHECK(!input.is_conj() && !input.is_neg() && !out.is_conj() && !out.is_neg(),
              "mimic: fft operands must have their conjugate and negative bits resolved");
  TORCH_CHECK(twiddles.scalar_type() == at::kFloat && twiddles.is_contiguous(),
              "mimic: fft twiddles must be a contiguous float32 table");
  for (int64_t d = 0; d < input.dim(); ++d) {
    TORCH_CHECK(d == dim || input.size(d) == out.size(d), "mimic: fft input has sizes ",
                input.sizes(), " and out ", out.sizes(), "; they may differ only in dim ", dim);
  }
  if (out.numel() == 0) return;
  at::Tensor source = input;
  std::optional<ops::TensorView> re = partAround(source, 0, dim);
  if (!re) {
    source = input.contiguous();
    re = partAround(source, 0, dim);
  }
  at::Tensor target = out;
  std::optional<ops::TensorView> outRe = partAround(target, 0, dim);
  if (!outRe) {
    target = at::empty(out.sizes(), out.options());
    outRe = partAround(target, 0, dim);
  }
  ops::FftOperands o;
  o.inRe = *re;
  if (complexIn) o.inIm = *partAround(source, 1, dim);
  o.outRe = *outRe;
  if (complexOut) o.outIm = *partAround(target, 1, dim);
  o.twiddles = viewOf(twiddles);
  o.input = !complexIn   ? ops::FftInput::Real
            : complexOut ? ops::FftInput::Complex
                         : ops::FftInput::Hermitian;
  o.n = n;
  o.scale = scale;
  onDevice("fft", [&] { ops::fft(launchContextOf(out), o); });
  if (!target.is_same(out)) out.copy_(target);
}

// The table of ops::fftTwiddles as a CPU tensor, for the caller to upload once per length.
at::Tensor fftTwiddles(int64_t n, bool forward) {
  std::vector<float> table;
  onDevice("fft_twiddles", [&] { table = ops::fftTwiddles(n, forward); });
  at::Tensor t = at::empty({static_cast<int64_t>(table.size())}, at::kFloat);
  std::copy(table.begin(), table.end(), t.data_ptr<float>());
  return t;
}

int64_t fftMaxLength(int64_t device) {
  int64_t n = 0;
  onDevice("fft_max_length", [&] { n = ops::fftMaxLength(static_cast<int>(device)); });
  return n;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("fft(Tensor(a!) out, Tensor input, Tensor twiddles, int dim, int n, float scale) -> ()",
        fft);
  m.def("fft_twiddles(int n, bool forward) -> Tensor", fftTwiddles);
  m.def("fft_max_length(int device) -> int", fftMaxLength);
}

}  // namespace mimic::torch_backend
