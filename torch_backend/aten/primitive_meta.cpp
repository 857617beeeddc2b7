// Meta kernels of the torch.ops.mimic primitives that write tensors. Each primitive writes into
// outputs its caller allocated, so on meta and fake tensors (whose shapes the caller already
// worked out) there is nothing to compute: the kernel only takes its arguments off the stack.
// Without them the primitives' catch-all kernels would launch device work on storage that does
// not exist.
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

namespace mimic::torch_backend::aten {
namespace {

constexpr const char* kTensorPrimitives[] = {"elementwise",
                                             "elementwise_multi",
                                             "elementwise_list",
                                             "reduce",
                                             "gemm",
                                             "gemm_epilogue",
                                             "softmax",
                                             "softmax_backward",
                                             "layer_norm",
                                             "layer_norm_residual",
                                             "layer_norm_backward",
                                             "index_select",
                                             "gather",
                                             "scatter",
                                             "index_add",
                                             "index_put",
                                             "scan",
                                             "sort",
                                             "fft"};

void writesNothingOnMeta(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  torch::jit::drop(*stack, op.schema().arguments().size());
}

}  // namespace

TORCH_LIBRARY_IMPL(mimic, Meta, m) {
  for (const char* name : kTensorPrimitives) {
    m.impl(name, torch::CppFunction::makeFromBoxedFunction<&writesNothingOnMeta>());
  }
}

// A direct Meta kernel stops the catch-all from serving AutogradMeta, and 1.13 has no autograd
// fallback for Meta. Fake mimic tensors carry the CPU's keys (torch_mimic/_fake_tensor.py), and
// at AutogradCPU the catch-all would run the device kernel before the Meta key is consulted. The
// primitives are not differentiable, so autograd passes them through, as it does for the device.
TORCH_LIBRARY_IMPL(mimic, AutogradMeta, m) {
  for (const char* name : kTensorPrimitives) m.impl(name, torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(mimic, AutogradCPU, m) {
  for (const char* name : kTensorPrimitives) m.impl(name, torch::CppFunction::makeFallthrough());
}

}  // namespace mimic::torch_backend::aten
