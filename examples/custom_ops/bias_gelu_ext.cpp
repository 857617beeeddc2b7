// bias_gelu_ext: a custom PyTorch op on the mimic device, written against the installed SDK.
//
//   torch.ops.mimic_ext.bias_gelu(x, bias) = gelu(x + bias)   (the erf form; bias over the last
//                                                             dimension; float32)
//
// One kernel does the whole fusion: each workgroup loads the bias once, then for each of its
// rows loads x, adds the bias and computes 0.5 v (1 + erf(v / sqrt 2)) in the scratchpad, and
// stores the row: one read of x and one write of the result, where F.gelu(x + bias) writes v to
// HBM and reads it back. It favours clarity over speed (no overlap of DMA and compute). The
// kernel is built with the builder (mimic/isa/builder.h), loaded once per device and launched
// on the current stream's queue (mimic/torch.h), so it is ordered with the built-in ops of the
// same stream. bias_gelu.py builds it with torch.utils.cpp_extension.
#include <ATen/core/Tensor.h>
#include <ATen/ops/empty_like.h>
#include <torch/library.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include <mimic/isa/builder.h>
#include <mimic/isa/module_image.h>
#include <mimic/torch.h>

namespace {

using namespace mimic::isa;

// A row, the bias and the result row must fit in the scratchpad together (64 KiB on tiny).
constexpr int64_t kMaxCols = 4096;

std::vector<uint8_t> biasGeluImage() {
  KernelBuilder k("bias_gelu", 5);  // out, x, bias, rows, cols
  Reg out = k.arg(0), x = k.arg(1), bias = k.arg(2), rows = k.arg(3), cols = k.arg(4);
  Reg four = k.li(4), xs = k.li(0), bs = k.li(kMaxCols * 4), ts = k.li(2 * kMaxCols * 4);
  Desc d = k.desc();
  k.dmaDim(d, DType::F32, 0, cols, four, four);
  k.wait(k.dmaLoad(bs, bias, d));
  Reg row = k.workgroupId(0), step = k.gridDim(0), rowBytes = k.reg();
  Reg offset = k.reg(), inside = k.reg(), xa = k.reg(), oa = k.reg();
  k.alu(ScalarOp::Mul, rowBytes, cols, 4);
  Label top = k.label(), done = k.label();
  k.bind(top);  // rows wgid, wgid + griddim, ...
  k.cmp(Cond::Lt, inside, row, rows);
  k.brz(inside, done);
  k.alu(ScalarOp::Mul, offset, row, rowBytes);
  k.alu(ScalarOp::Add, xa, x, offset);
  k.alu(ScalarOp::Add, oa, out, offset);
  k.wait(k.dmaLoad(xs, xa, d));
  k.binary(BinaryOp::Add, DType::F32, xs, xs, bs, cols);               // v = x + bias
  k.binaryScalar(BinaryOp::Mul, DType::F32, ts, xs, M_SQRT1_2, cols);  // v / sqrt 2
  k.unary(UnaryOp::Erf, DType::F32, ts, ts, cols);
  k.binaryScalar(BinaryOp::Add, DType::F32, ts, ts, 1.0, cols);
  k.binary(BinaryOp::Mul, DType::F32, ts, ts, xs, cols);
  k.binaryScalar(BinaryOp::Mul, DType::F32, ts, ts, 0.5, cols);
  k.wait(k.dmaStore(oa, ts, d));  // the next row's load must not overwrite ts while it is read
  k.alu(ScalarOp::Add, row, row, step);
  k.br(top);
  k.bind(done);
  return encodeImage(Module{{k.finish()}});
}

// The kernel, loaded onto each device at its first use there.
mimicFunction kernelFor(int device) {
  static std::mutex mutex;
  static std::map<int, mimicFunction> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = loaded.find(device);
  if (found != loaded.end()) return found->second;
  static const std::vector<uint8_t> image = biasGeluImage();
  mimicModule module = nullptr;
  mimicFunction fn = nullptr;
  MIMIC_TORCH_CHECK(mimicModuleLoad(device, image.data(), image.size(), &module));
  MIMIC_TORCH_CHECK(mimicModuleGetFunction(module, "bias_gelu", &fn));
  return loaded[device] = fn;
}

at::Tensor biasGelu(const at::Tensor& x, const at::Tensor& bias) {
  TORCH_CHECK(bias.device() == x.device(), "bias_gelu: bias is on ", bias.device(), ", x on ",
              x.device());
  TORCH_CHECK(x.scalar_type() == at::kFloat && bias.scalar_type() == at::kFloat,
              "bias_gelu: float32 tensors only, got ", x.scalar_type(), " and ",
              bias.scalar_type());
  TORCH_CHECK(x.dim() >= 1 && bias.dim() == 1 && bias.size(0) == x.size(-1),
              "bias_gelu: bias must be 1-D with x's last dimension, got ", bias.sizes(), " for x ",
              x.sizes());
  const int64_t cols = x.size(-1);
  TORCH_CHECK(cols >= 1 && cols <= kMaxCols, "bias_gelu: the last dimension must be in [1, ",
              kMaxCols, "], got ", cols);
  const at::Tensor xc = x.contiguous(), bc = bias.contiguous();
  at::Tensor out = at::empty_like(xc);
  const int64_t rows = xc.numel() / cols;
  if (rows == 0) return out;

  const int device = x.device().index();
  mimic::torch::DeviceGuard guard(device);
  mimicDeviceProperties props{};
  MIMIC_TORCH_CHECK(mimicDeviceGetProperties(device, &props));
  struct {
    void* out;
    const void* x;
    const void* bias;
    int64_t rows, cols;
  } args{out.data_ptr(), xc.data_ptr(), bc.data_ptr(), rows, cols};
  const mimicDim3 grid{uint32_t(std::min<int64_t>(rows, 2 * int64_t(props.computeUnits))), 1, 1};
  MIMIC_TORCH_CHECK(mimicLaunchKernel(kernelFor(device), grid, &args, sizeof args,
                                      mimic::torch::getCurrentQueue(device)));
  return out;
}

}  // namespace

TORCH_LIBRARY(mimic_ext, m) {
  m.def("bias_gelu(Tensor x, Tensor bias) -> Tensor");
}

TORCH_LIBRARY_IMPL(mimic_ext, PrivateUse1, m) {
  m.impl("bias_gelu", biasGelu);
}
