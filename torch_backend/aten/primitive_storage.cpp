// A mimic storage seen as a tensor, for PyTorch 1.13's storage methods.
//
// aten::set_.source_Storage (a tensor over a whole storage) is how libtorch_python's own
// UntypedStorage methods reach device bytes (torch/csrc/utils.cpp: storage_get, storage_set,
// storage_fill); through the CPU fallback it would point a CPU copy at device memory.
//
// torch.ops.mimic.storage_bytes(storage_impl) returns a uint8 tensor over the whole storage whose
// StorageImpl is at that address (UntypedStorage._cdata): 1.13's Python bindings refuse a
// PrivateUse1 storage as an argument (torch/csrc/DynamicTypes.cpp, get_type_properties: "Invalid
// device for storage"), so torch_mimic/_storage_compat.py passes the address of the storage its
// Python object keeps alive for the duration of the call.
#include <ATen/ATen.h>
#include <torch/library.h>

namespace mimic::torch_backend::aten {
namespace {

at::Tensor& setWholeStorage(at::Tensor& self, c10::Storage source) {
  const auto size = static_cast<int64_t>(source.nbytes() / self.dtype().itemsize());
  return self.set_(std::move(source), 0, {size}, {});
}

at::Tensor storageBytes(int64_t storageImpl) {
  auto* impl = reinterpret_cast<c10::StorageImpl*>(storageImpl);
  TORCH_CHECK(impl != nullptr, "mimic.storage_bytes: null storage");
  TORCH_CHECK(impl->device_type() == c10::DeviceType::PrivateUse1,
              "mimic.storage_bytes: the storage is on ", impl->device(), ", not on mimic");
  c10::Storage storage(c10::intrusive_ptr<c10::StorageImpl>::reclaim_copy(impl));
  auto bytes = at::empty({0}, at::TensorOptions().dtype(at::kByte).device(impl->device()));
  return setWholeStorage(bytes, std::move(storage));
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
  m.impl("set_.source_Storage", setWholeStorage);
}

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("storage_bytes(int storage_impl) -> Tensor", storageBytes);
}

}  // namespace mimic::torch_backend::aten
