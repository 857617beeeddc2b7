// The core of the PrivateUse1 backend: tensor creation, copies, views and storage, and the
// boxed CPU fallback for every op without a mimic kernel. The op kernels themselves are
// registered from C++ (torch_backend/aten) and Python (torch_mimic/ops_*.py).
#include "torch_backend/src/aten_core.h"

#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_local_scalar_dense_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/view_as_complex_native.h>
#include <ATen/ops/view_as_real_native.h>
#include <ATen/ops/view_native.h>
#include <torch/library.h>

#include "mimic/mimic_debug.h"
#include "torch_backend/src/caching_allocator.h"
#include "torch_backend/src/copy.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/fallback_counter.h"
#include "torch_backend/src/fallback_guard.h"
#include "torch_backend/src/placeholder_reads.h"

namespace mimic::torch_backend {
namespace {

using c10::SymIntArrayRef;

c10::DispatchKeySet deviceKeys() {
  return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

void checkDevice(c10::optional<at::Device> device) {
  const int index = device && device->has_index() ? device->index() : currentDevice();
  ensureInitialized();
  TORCH_CHECK(index >= 0 && index < deviceCountNoThrow(), "mimic: device index ", index,
              " is out of range; this process has ", deviceCountNoThrow(), " mimic device(s)");
  if (index != currentDevice()) setCurrentDevice(index);
}

// Allocations go to the current device, so a tensor for another device switches to it briefly.
struct DeviceSwitch {
  explicit DeviceSwitch(c10::optional<at::Device> device) : previous(currentDevice()) {
    checkDevice(device);
  }
  ~DeviceSwitch() { setCurrentDevice(previous); }
  int previous;
};

at::Tensor empty(SymIntArrayRef size, c10::optional<at::ScalarType> dtype,
                 c10::optional<at::Layout> layout, c10::optional<at::Device> device,
                 c10::optional<bool> pinMemory, c10::optional<at::MemoryFormat> format) {
  DeviceSwitch on(device);
  return at::detail::empty_generic(c10::asIntArrayRefSlow(size), &cachingAllocator(), deviceKeys(),
                                   c10::dtype_or_default(dtype), format);
}

at::Tensor emptyStrided(SymIntArrayRef size, SymIntArrayRef stride,
                        c10::optional<at::ScalarType> dtype, c10::optional<at::Layout> layout,
                        c10::optional<at::Device> device, c10::optional<bool> pinMemory) {
  DeviceSwitch on(device);
  return at::detail::empty_strided_generic(c10::asIntArrayRefSlow(size),
                                           c10::asIntArrayRefSlow(stride), &cachingAllocator(),
                                           deviceKeys(), c10::dtype_or_default(dtype));
}

// Device failures surface at the next synchronising call, often a copy: say which op met it.
template <typename Body>
void namingTheOp(const char* op, const Body& body) {
  try {
    body();
  } catch (const c10::Error& e) {
    TORCH_CHECK(false, e.what_without_backtrace(), " (while running ", op, ")");
  }
}

at::Tensor copyFrom(const at::Tensor& self, const at::Tensor& dst, bool nonBlocking) {
  namingTheOp("aten::_copy_from", [&] { copyTensor(dst, self, nonBlocking); });
  return dst;
}

at::Tensor copyFromAndResize(const at::Tensor& self, const at::Tensor& dst) {
  // Only resize when the shape differs: resize_ of an equal shape would come back here through
  // the fallback's write-back and recurse.
  if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
  namingTheOp("aten::_copy_from_and_resize", [&] { copyTensor(dst, self, false); });
  return dst;
}

const at::Tensor& resize(const at::Tensor& self, SymIntArrayRef symSize,
                         c10::optional<at::MemoryFormat> format) {
  at::IntArrayRef size = c10::asIntArrayRefSlow(symSize);
  auto* impl = self.unsafeGetTensorImpl();
  const int64_t numel = c10::multiply_integers(size);
  const size_t needed = (self.storage_offset() + numel) * self.itemsize();
  if (numel > 0 && needed > self.storage().nbytes()) {
    DeviceSwitch on(self.device());
    c10::DataPtr grown = cachingAllocator().allocate(needed);
    const size_t old = self.storage().nbytes();
    if (old > 0) {
      const c10::Stream stream = currentStream(self.device().index());
      MIMIC_TORCH_CHECK(mimicMemcpyAsync(grown.get(), self.storage().data(), old, queueOf(stream)));
    }
    self.storage().set_data_ptr_noswap(std::move(grown));
    self.storage().set_nbytes(needed);
  }
  impl->set_sizes_contiguous(size);
  if (format && *format != at::MemoryFormat::Preserve) impl->empty_tensor_restride(*format);
  return self;
}

at::Tensor& setStorage(at::Tensor& self, c10::Storage source, c10::SymInt offset,
                       SymIntArrayRef size, SymIntArrayRef stride) {
  auto* impl = self.unsafeGetTensorImpl();
  impl->set_storage_keep_dtype(std::move(source));
  impl->set_storage_offset(offset.expect_int());
  if (stride.empty()) {
    impl->set_sizes_contiguous(c10::asIntArrayRefSlow(size));
  } else {
    impl->set_sizes_and_strides(c10::asIntArrayRefSlow(size), c10::asIntArrayRefSlow(stride));
  }
  return self;
}

at::Tensor& setTensor(at::Tensor& self, const at::Tensor& source) {
  return setStorage(self, source.storage(), source.storage_offset(),
                    c10::fromIntArrayRef(source.sizes()), c10::fromIntArrayRef(source.strides()));
}

at::Tensor view(const at::Tensor& self, SymIntArrayRef size) {
  return at::native::view(self, c10::asIntArrayRefSlow(size));
}

at::Tensor asStrided(const at::Tensor& self, SymIntArrayRef size, SymIntArrayRef stride,
                     c10::optional<c10::SymInt> offset) {
  c10::optional<int64_t> storageOffset;
  if (offset) storageOffset = offset->expect_int();
  return at::native::as_strided_tensorimpl(self, c10::asIntArrayRefSlow(size),
                                           c10::asIntArrayRefSlow(stride), storageOffset);
}

at::Tensor reshapeAlias(const at::Tensor& self, SymIntArrayRef size, SymIntArrayRef stride) {
  return at::native::_reshape_alias(self, c10::asIntArrayRefSlow(size),
                                    c10::asIntArrayRefSlow(stride));
}

at::Scalar localScalarDense(const at::Tensor& self) {
  const PlaceholderReadScope reading("aten::_local_scalar_dense", PlaceholderReadKind::Scalar);
  return at::native::_local_scalar_dense_cpu(self.cpu());
}

void recordStream(at::Tensor& self, c10::Stream stream) {
  cachingAllocator().recordStream(self.storage().data_ptr(), stream);
}

// cpu_fallback copies out= arguments to the CPU before the op overwrites them: under initcheck
// that read of never-written bytes is the fallback's, not the program's, so their bytes count
// as written (a host view does that).
void markOutArgumentsWritten(const c10::OperatorHandle& op, const torch::jit::Stack& stack) {
  unsigned tools = 0;
  mimicDebugGetSanitizer(&tools);
  if (!(tools & MIMIC_SANITIZE_INITCHECK)) return;
  const auto& arguments = op.schema().arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::IValue& value = stack[first + i];
    if (!arguments[i].is_out() || !value.isTensor()) continue;
    const at::Tensor& out = value.toTensor();
    if (!out.defined() || !out.has_storage() || out.storage().nbytes() == 0 ||
        out.device().type() != c10::DeviceType::PrivateUse1) {
      continue;
    }
    void* view = nullptr;
    mimicMemGetHostView(out.storage().data(), out.storage().nbytes(), &view);
  }
}

// The device the results of a fallback call belong on: the one an op's own `device` argument
// names (factories such as triu_indices), else the first mimic tensor among the arguments.
c10::optional<c10::Device> deviceOfArguments(const c10::OperatorHandle& op,
                                             const torch::jit::Stack& stack) {
  const auto& arguments = op.schema().arguments();
  const size_t first = stack.size() - arguments.size();
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i].name() != "device") continue;
    const c10::IValue& value = stack[first + i];
    if (value.isDevice() && value.toDevice().type() == c10::DeviceType::PrivateUse1) {
      return value.toDevice();
    }
    return c10::nullopt;
  }
  for (size_t i = first; i < stack.size(); ++i) {
    const c10::IValue& value = stack[i];
    if (value.isTensor() && value.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
      return value.toTensor().device();
    }
    if (value.isTensorList()) {
      for (const at::Tensor& t : value.toTensorList().vec()) {
        if (t.device().type() == c10::DeviceType::PrivateUse1) return t.device();
      }
    }
  }
  return c10::nullopt;
}

// at::native::cpu_fallback puts results on the device of the first tensor argument, which is
// the CPU when that argument is a wrapped number (1 - x is sub(tensor(1), x)): results stay on
// the device their mimic arguments are on.
void moveResultsTo(c10::Device device, const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const size_t results = op.schema().returns().size();
  for (size_t i = stack->size() - results; i < stack->size(); ++i) {
    c10::IValue& value = (*stack)[i];
    if (value.isTensor() && value.toTensor().defined() && value.toTensor().is_cpu()) {
      value = value.toTensor().to(device);
    } else if (value.isTensorList()) {
      std::vector<at::Tensor> moved = value.toTensorList().vec();
      for (at::Tensor& t : moved) {
        if (t.defined() && t.is_cpu()) t = t.to(device);
      }
      value = c10::IValue(moved);
    }
  }
}

}  // namespace

at::Tensor emptyOnDevice(at::IntArrayRef size, at::ScalarType dtype, at::Device device) {
  DeviceSwitch on(device);
  return at::detail::empty_generic(size, &cachingAllocator(), deviceKeys(), dtype, c10::nullopt);
}

void cpuFallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
  const auto& name = op.schema().operator_name();
  const std::string key =
      name.overload_name.empty() ? name.name : name.name + "." + name.overload_name;
  // at::native::cpu_fallback copies mutated Tensor arguments back, but not mutated tensor
  // lists: such an op would silently lose its results, so refuse it instead.
  for (const auto& argument : op.schema().arguments()) {
    TORCH_CHECK(!(argument.alias_info() && argument.alias_info()->isWrite() &&
                  argument.type()->kind() == c10::TypeKind::ListType),
                "mimic: ", key, " has no mimic kernel and the CPU fallback cannot write back its ",
                "tensor-list argument '", argument.name(), "'");
  }
  noteFallback(key);
  markOutArgumentsWritten(op, *stack);
  const c10::optional<c10::Device> device = deviceOfArguments(op, *stack);
  const PlaceholderReadScope reading(key.c_str(), PlaceholderReadKind::Fallback);
  runGuardedFallback(key, [&] { at::native::cpu_fallback(op, stack); });
  if (device) moveResultsTo(*device, op, stack);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("empty.memory_format", empty);
  m.impl("empty_strided", emptyStrided);
  m.impl("_copy_from", copyFrom);
  m.impl("_copy_from_and_resize", copyFromAndResize);
  m.impl("resize_", resize);
  m.impl("set_.source_Storage_storage_offset", setStorage);
  m.impl("set_.source_Tensor", setTensor);
  m.impl("view", view);
  m.impl("as_strided", asStrided);
  m.impl("_reshape_alias", reshapeAlias);
  m.impl("unfold", at::native::unfold);
  m.impl("view_as_real", at::native::view_as_real);
  m.impl("view_as_complex", at::native::view_as_complex);
  m.impl("_local_scalar_dense", localScalarDense);
  m.impl("record_stream", recordStream);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

// The Python kernels' fallback (torch_mimic/_lib.py) is this one: Python can call an op at a
// chosen dispatch key but cannot call a boxed function, so the fallback also serves a key that
// nothing else in the process uses.
TORCH_LIBRARY_IMPL(_, PrivateUse2, m) {
  m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpuFallback>());
}

// Copies resolve lazy conjugation and negation themselves (copy.cpp); through the Conjugate
// and Negative fallbacks, which materialise with a copy, they would recurse forever.
TORCH_LIBRARY_IMPL(aten, Conjugate, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}
TORCH_LIBRARY_IMPL(aten, Negative, m) {
  m.impl("_copy_from", torch::CppFunction::makeFallthrough());
}

// PyTorch 1.13 registers no autograd fallthrough for PrivateUse1, so ops outside aten (c10d,
// custom ops) would fail to dispatch without this.
TORCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m) {
  m.fallback(torch::CppFunction::makeFallthrough());
}

}  // namespace mimic::torch_backend
