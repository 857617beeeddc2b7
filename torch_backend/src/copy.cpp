#include "torch_backend/src/copy.h"

#include <cstring>

#include <ATen/ops/empty.h>

#include "torch_backend/ops/elementwise.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/placeholder_reads.h"
#include "torch_backend/src/tensor_bridge.h"

namespace mimic::torch_backend {
namespace {

bool isDevice(const at::Tensor& t) {
  return t.device().type() == kDeviceType;
}

at::Tensor contiguousEmpty(const at::Tensor& like, at::ScalarType dtype, c10::Device device) {
  return at::empty(like.sizes(), like.options().dtype(dtype).device(device));
}

void waitUnless(bool nonBlocking, const ops::LaunchContext& ctx) {
  if (!nonBlocking) MIMIC_TORCH_CHECK(mimicQueueSynchronize(ctx.queue));
}

// Converts or rearranges within one device, with a kernel.
void copyOnDevice(const at::Tensor& dst, const at::Tensor& src) {
  isa::DType dstType, srcType;
  const ops::LaunchContext ctx = launchContextOf(dst);
  if (dst.scalar_type() == src.scalar_type()) {
    ops::elementwise(ctx, rawViewOf(dst), {rawViewOf(src.expand(dst.sizes()))}, "x0",
                     rawViewOf(dst).dtype, {});
  } else if (isaDTypeOf(dst.scalar_type(), &dstType) && isaDTypeOf(src.scalar_type(), &srcType)) {
    // Bool is stored as U8 like uint8, but converting to or from bool means "is non-zero" (a
    // bool holding another byte reads as true, as the CPU's loads normalise it); floats become
    // 8- and 16-bit integers through int64, so that values out of their range wrap as they do
    // on the CPU (which converts through a wider integer).
    const bool viaFlag = dst.scalar_type() == at::kBool || src.scalar_type() == at::kBool;
    const at::ScalarType d = dst.scalar_type();
    const bool floatToNarrow =
        (d == at::kByte || d == at::kChar || d == at::kShort) && isa::isFloat(srcType);
    const char* program = viaFlag ? "x0 0 ne" : "x0";
    const isa::DType compute = viaFlag ? srcType : floatToNarrow ? isa::DType::I64 : dstType;
    ops::elementwise(ctx, viewOf(dst), {viewOf(src.expand(dst.sizes()))}, program, compute, {});
  } else {
    // A dtype the device cannot compute in: convert on the host, as a driver's copy would.
    at::Tensor host = src.cpu().to(dst.scalar_type());
    copyTensor(dst, host, false);
  }
}

void hostToDevice(const at::Tensor& dst, const at::Tensor& src, bool nonBlocking) {
  at::Tensor host = src.to(dst.scalar_type()).expand(dst.sizes()).contiguous();
  const ops::LaunchContext ctx = launchContextOf(dst);
  at::Tensor target =
      dst.is_contiguous() ? dst : contiguousEmpty(dst, dst.scalar_type(), dst.device());
  if (host.numel() > 0) {
    MIMIC_TORCH_CHECK(
        mimicMemcpyAsync(target.data_ptr(), host.data_ptr(), host.nbytes(), ctx.queue));
  }
  if (!target.is_same(dst)) copyOnDevice(dst, target);
  waitUnless(nonBlocking, ctx);
}

void deviceToHost(const at::Tensor& dst, const at::Tensor& src, bool nonBlocking) {
  at::Tensor packed = src.expand(dst.sizes());
  if (!packed.is_contiguous()) {
    at::Tensor dense = contiguousEmpty(dst, src.scalar_type(), src.device());
    copyOnDevice(dense, packed);
    packed = dense;
  }
  const ops::LaunchContext ctx = launchContextOf(packed);
  const bool direct = dst.is_contiguous() && dst.scalar_type() == src.scalar_type();
  at::Tensor target = direct ? dst : contiguousEmpty(dst, src.scalar_type(), dst.device());
  if (packed.numel() > 0) {
    MIMIC_TORCH_CHECK(
        mimicMemcpyAsync(target.data_ptr(), packed.data_ptr(), packed.nbytes(), ctx.queue));
    if (notePlaceholderRead(packed.nbytes())) std::memset(target.data_ptr(), 0, packed.nbytes());
  }
  if (direct) {
    waitUnless(nonBlocking, ctx);
    return;
  }
  waitUnless(false, ctx);
  dst.copy_(target);
}

void deviceToDevice(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.device() == src.device()) {
    copyOnDevice(dst, src);
    return;
  }
  // Peer copy of a dense image, then any conversion on the destination device.
  at::Tensor packed = src.expand(dst.sizes()).contiguous();
  at::Tensor landed = contiguousEmpty(dst, src.scalar_type(), dst.device());
  const ops::LaunchContext ctx = launchContextOf(landed);
  if (packed.numel() > 0) {
    MIMIC_TORCH_CHECK(mimicMemcpyPeerAsync(landed.data_ptr(), dst.device().index(),
                                           packed.data_ptr(), src.device().index(), packed.nbytes(),
                                           ctx.queue));
  }
  copyOnDevice(dst, landed);
}

}  // namespace

// A device tensor with the lazy conjugate or negative bit set: its bytes are copied to the host
// as they are and the bit is applied there, as the device cannot compute complex numbers.
void copyResolvingOnHost(const at::Tensor& dst, const at::Tensor& src) {
  at::Tensor plain = at::empty({0}, src.options().device(src.device()));
  plain.set_(src.storage(), src.storage_offset(), src.sizes(), src.strides());
  plain._set_conj(false);
  plain._set_neg(false);
  at::Tensor host = at::empty(src.sizes(), src.options().device(at::kCPU));
  copyTensor(host, plain, false);
  host._set_conj(src.is_conj());
  host._set_neg(src.is_neg());
  copyTensor(dst, host.resolve_conj().resolve_neg(), false);
}

void copyTensor(const at::Tensor& dst, const at::Tensor& src, bool nonBlocking) {
  if (dst.numel() == 0) return;
  if (isDevice(dst)) requireNotReset(dst);
  if (isDevice(src)) requireNotReset(src);
  if (isDevice(src) && (src.is_conj() || src.is_neg())) {
    copyResolvingOnHost(dst, src);
    return;
  }
  if (isDevice(dst) && isDevice(src)) {
    deviceToDevice(dst, src);
  } else if (isDevice(dst)) {
    hostToDevice(dst, src, nonBlocking);
  } else if (isDevice(src)) {
    deviceToHost(dst, src, nonBlocking);
  } else {
    dst.copy_(src, nonBlocking);
  }
}

}  // namespace mimic::torch_backend
