#include "torch_backend/ops/kernel_cache.h"

#include <map>
#include <mutex>
#include <utility>

#include "mimic/mimic.hpp"
#include "sim/isa/module_image.h"
#include "sim/isa/scalar_literal.h"

namespace mimic::ops {
namespace {

std::mutex& cacheMutex() {
  static std::mutex m;
  return m;
}

// Modules stay loaded for the life of the process, like a CUDA fatbin's kernels.
std::map<std::pair<int, std::string>, mimicFunction>& functions() {
  static std::map<std::pair<int, std::string>, mimicFunction> table;
  return table;
}

}  // namespace

mimicFunction cachedKernel(int device, const std::string& key,
                           const std::function<isa::Function()>& build) {
  std::lock_guard<std::mutex> lock(cacheMutex());
  auto found = functions().find({device, key});
  if (found != functions().end()) return found->second;
  isa::Function function = build();
  const std::string name = function.name;
  std::vector<uint8_t> image = isa::encodeImage(isa::Module{{std::move(function)}});
  mimicModule module = nullptr;
  MIMIC_CHECK(mimicModuleLoad(device, image.data(), image.size(), &module));
  mimicFunction fn = nullptr;
  MIMIC_CHECK(mimicModuleGetFunction(module, name.c_str(), &fn));
  functions()[{device, key}] = fn;
  return fn;
}

void launch(const LaunchContext& ctx, mimicFunction fn, mimicDim3 grid,
            const std::vector<int64_t>& args) {
  MIMIC_CHECK(mimicLaunchKernel(fn, grid, args.data(), args.size() * sizeof(int64_t), ctx.queue));
}

const mimicDeviceProperties& deviceProperties(int device) {
  static std::mutex m;
  static std::map<int, mimicDeviceProperties> table;
  std::lock_guard<std::mutex> lock(m);
  auto found = table.find(device);
  if (found != table.end()) return found->second;
  mimicDeviceProperties props{};
  MIMIC_CHECK(mimicDeviceGetProperties(device, &props));
  return table[device] = props;
}

size_t scratchpadBytes(int device) {
  return deviceProperties(device).scratchpadBytes;
}

int computeUnits(int device) {
  return deviceProperties(device).computeUnits;
}

int64_t scalarBits(double value, isa::DType type) {
  if (isa::isFloat(type)) return static_cast<int64_t>(isa::floatToBits(value, type));
  // Through int64 first: converting a negative double straight to uint8_t is undefined.
  if (type == isa::DType::U8) return static_cast<uint8_t>(static_cast<int64_t>(value));
  return static_cast<int64_t>(value);
}

}  // namespace mimic::ops
