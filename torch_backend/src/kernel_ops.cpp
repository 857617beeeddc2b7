// torch.ops.mimic.kernels_*: user kernels from Python (torch_mimic/kernels.py). Modules and
// functions cross into Python as their driver handles; the launch goes to the queue of the
// stream Python names, so it is ordered, profiled and sanitized like the built-in ops' kernels.
#include <ATen/ops/empty.h>
#include <torch/library.h>

#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include "sim/isa/assembler.h"
#include "sim/isa/module_image.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {
namespace {

// The image of assembler text; an assembly error is a ValueError naming the line.
at::Tensor assemble(c10::string_view text) {
  std::vector<uint8_t> image;
  try {
    image = isa::encodeImage(isa::assemble(std::string_view(text.data(), text.size())));
  } catch (const std::exception& e) {  // isa::AsmError, isa::ValidationError
    TORCH_CHECK_VALUE(false, "mimic: the kernel source does not assemble: ", e.what());
  }
  at::Tensor bytes = at::empty({int64_t(image.size())}, at::TensorOptions().dtype(at::kByte));
  std::memcpy(bytes.data_ptr(), image.data(), image.size());
  return bytes;
}

// The functions of an image and their argument slots, for the launch's checks in Python.
std::tuple<std::vector<std::string>, std::vector<int64_t>> describe(const at::Tensor& image) {
  TORCH_CHECK(image.device().is_cpu() && image.scalar_type() == at::kByte && image.is_contiguous(),
              "mimic: a module image is a contiguous uint8 CPU tensor");
  isa::Module module;
  try {
    module = isa::decodeImage(image.data_ptr(), size_t(image.numel()));
  } catch (const std::exception& e) {  // isa::ImageError, isa::ValidationError
    TORCH_CHECK_VALUE(false, "mimic: not a valid module image: ", e.what());
  }
  std::tuple<std::vector<std::string>, std::vector<int64_t>> functions;
  for (const isa::Function& f : module.functions) {
    std::get<0>(functions).push_back(f.name);
    std::get<1>(functions).push_back(int64_t(f.argBytes / 8));
  }
  return functions;
}

int64_t moduleLoad(int64_t device, const at::Tensor& image) {
  ensureInitialized();
  mimicModule module = nullptr;
  MIMIC_TORCH_CHECK(mimicModuleLoad(int(device), image.data_ptr(), size_t(image.numel()), &module));
  return reinterpret_cast<int64_t>(module);
}

int64_t function(int64_t module, c10::string_view name) {
  mimicFunction fn = nullptr;
  const std::string kernel(name.data(), name.size());
  MIMIC_TORCH_CHECK(
      mimicModuleGetFunction(reinterpret_cast<mimicModule>(module), kernel.c_str(), &fn));
  return reinterpret_cast<int64_t>(fn);
}

// `slots` are the packed 8-byte argument slots; `stream` is packed as c10::Stream::pack.
void launch(int64_t fn, c10::IntArrayRef grid, c10::IntArrayRef slots, int64_t stream) {
  TORCH_CHECK(grid.size() == 3, "mimic: a launch grid has 3 dimensions");
  for (int64_t g : grid) {
    TORCH_CHECK_VALUE(g >= 1 && g <= UINT32_MAX,
                      "mimic: grid dimensions must be in [1, 2^32), got ", grid);
  }
  const mimicDim3 dims{uint32_t(grid[0]), uint32_t(grid[1]), uint32_t(grid[2])};
  const mimicQueue queue = queueOf(c10::Stream::unpack(uint64_t(stream)));
  MIMIC_TORCH_CHECK(mimicLaunchKernel(reinterpret_cast<mimicFunction>(fn), dims, slots.data(),
                                      slots.size() * sizeof(int64_t), queue));
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("kernels_assemble(str text) -> Tensor", assemble);
  m.def("kernels_describe(Tensor image) -> (str[], int[])", describe);
  m.def("kernels_module_load(int device, Tensor image) -> int", moduleLoad);
  m.def("kernels_function(int module, str name) -> int", function);
  m.def("kernels_launch(int function, int[] grid, int[] slots, int stream) -> ()", launch);
}

}  // namespace mimic::torch_backend
