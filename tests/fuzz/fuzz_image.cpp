// Module images from arbitrary bytes, through the driver (mimicModuleLoad): every input gives
// MIMIC_SUCCESS or one of the documented image errors, and a loaded module unloads.
#include <cstdint>
#include <cstdlib>

#include "mimic/mimic.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool initialised = mimicInitWithPreset(0, "tiny", nullptr) == MIMIC_SUCCESS;
  if (!initialised) std::abort();
  mimicModule module = nullptr;
  const mimicResult result = mimicModuleLoad(0, data, size, &module);
  switch (result) {
    case MIMIC_SUCCESS:
      if (mimicModuleUnload(module) != MIMIC_SUCCESS) std::abort();
      break;
    case MIMIC_ERROR_INVALID_IMAGE:
    case MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION:
    case MIMIC_ERROR_INVALID_SIZE:
    case MIMIC_ERROR_NULL_POINTER:
      break;
    default:
      std::abort();  // an undocumented answer
  }
  return 0;
}
