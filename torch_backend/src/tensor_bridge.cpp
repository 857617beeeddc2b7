#include "torch_backend/src/tensor_bridge.h"

#include <sstream>

#include <ATen/ops/empty.h>
#include <ATen/ops/from_blob.h>

#include "torch_backend/src/caching_allocator.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {

bool isaDTypeOf(at::ScalarType type, isa::DType* out) {
  switch (type) {
    case at::kFloat:
      *out = isa::DType::F32;
      return true;
    case at::kHalf:
      *out = isa::DType::F16;
      return true;
    case at::kBFloat16:
      *out = isa::DType::BF16;
      return true;
    case at::kInt:
      *out = isa::DType::I32;
      return true;
    case at::kLong:
      *out = isa::DType::I64;
      return true;
    case at::kChar:
      *out = isa::DType::I8;
      return true;
    case at::kShort:
      *out = isa::DType::I16;
      return true;
    case at::kDouble:
      *out = isa::DType::F64;
      return true;
    case at::kBool:
    case at::kByte:
      *out = isa::DType::U8;
      return true;
    default:
      return false;
  }
}

bool deviceComputes(at::ScalarType type) {
  isa::DType ignored;
  return isaDTypeOf(type, &ignored);
}

void requireNotReset(const at::Tensor& tensor) {
  if (tensor.has_storage())
    cachingAllocator().requireCurrentGeneration(tensor.storage().data_ptr());
}

namespace {

ops::TensorView baseView(const at::Tensor& tensor, isa::DType dtype) {
  requireNotReset(tensor);
  ops::TensorView view;
  view.data = tensor.data_ptr();
  view.dtype = dtype;
  view.sizes = tensor.sizes().vec();
  view.strides = tensor.strides().vec();
  return view;
}

}  // namespace

ops::TensorView viewOf(const at::Tensor& tensor) {
  isa::DType dtype;
  TORCH_CHECK(isaDTypeOf(tensor.scalar_type(), &dtype), "mimic: the device cannot compute in ",
              tensor.scalar_type());
  return baseView(tensor, dtype);
}

ops::TensorView rawViewOf(const at::Tensor& tensor) {
  const int64_t size = tensor.element_size();
  switch (size) {
    case 1:
      return baseView(tensor, isa::DType::U8);
    case 2:
      return baseView(tensor, isa::DType::F16);  // moved, never converted: the bits survive
    case 4:
      return baseView(tensor, isa::DType::I32);
    default: {
      ops::TensorView view = baseView(tensor, isa::DType::I64);
      const int64_t words = size / 8;
      for (int64_t& stride : view.strides) stride *= words;
      view.sizes.push_back(words);
      view.strides.push_back(1);
      return view;
    }
  }
}

ops::ScalarArg scalarArgOf(const c10::Scalar& scalar) {
  TORCH_CHECK_NOT_IMPLEMENTED(!scalar.isComplex(), "mimic: complex scalars are not supported");
  return scalar.isFloatingPoint() ? ops::ScalarArg(scalar.toDouble())
                                  : ops::ScalarArg(scalar.toLong());
}

ops::LaunchContext launchContextOf(const at::Tensor& tensor) {
  const int device = tensor.device().index();
  return {device, queueOf(currentStream(device))};
}

ops::TensorView complexPartOf(const at::Tensor& tensor, int part) {
  requireNotReset(tensor);
  ops::TensorView view;
  view.data = static_cast<char*>(tensor.data_ptr()) + part * sizeof(float);
  view.dtype = isa::DType::F32;
  view.sizes = tensor.sizes().vec();
  for (int64_t stride : tensor.strides()) view.strides.push_back(2 * stride);
  return view;
}

void expandTo(ops::TensorView& view, at::IntArrayRef shape) {
  const size_t rank = shape.size(), lead = rank - view.sizes.size();
  std::vector<int64_t> strides(rank, 0);
  for (size_t d = lead; d < rank; ++d) {
    if (view.sizes[d - lead] == shape[d]) strides[d] = view.strides[d - lead];
  }
  view.sizes.assign(shape.begin(), shape.end());
  view.strides = std::move(strides);
}

std::string shapeText(at::IntArrayRef shape) {
  std::ostringstream text;
  text << shape;
  return text.str();
}

at::Tensor simulatorValues(const at::Tensor& tensor) {
  mimicSimulationMode mode = MIMIC_SIMULATION_FULL;
  MIMIC_TORCH_CHECK(mimicGetSimulationMode(&mode));
  if (tensor.device().type() != c10::DeviceType::PrivateUse1) return tensor;
  if (mode == MIMIC_SIMULATION_TIMING) return at::Tensor();
  requireNotReset(tensor);
  const at::TensorOptions cpu = tensor.options().device(at::kCPU);
  if (tensor.numel() == 0) return at::empty(tensor.sizes(), cpu);
  const c10::Storage& storage = tensor.storage();
  void* view = nullptr;
  MIMIC_TORCH_CHECK(mimicMemGetHostView(storage.data(), storage.nbytes(), &view));
  return at::from_blob(static_cast<char*>(view) + tensor.storage_offset() * tensor.element_size(),
                       tensor.sizes(), tensor.strides(), cpu);
}

}  // namespace mimic::torch_backend
