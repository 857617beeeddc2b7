// Shared set-up for compute-engine tests: assembled or built kernels loaded on the tiny preset.
#pragma once

#include <string>
#include <vector>

#include "../driver/driver_helpers.h"
#include "sim/isa/assembler.h"
#include "sim/isa/module_image.h"

inline std::vector<uint8_t> imageOf(const mimic::isa::Module& module) {
  return mimic::isa::encodeImage(module);
}

// Loads a module and returns the named function (test failures if anything goes wrong).
inline mimicFunction loadFunction(const mimic::isa::Module& module, const char* name,
                                  int device = 0, mimicModule* loaded = nullptr) {
  std::vector<uint8_t> image = imageOf(module);
  mimicModule m = nullptr;
  EXPECT_EQ(mimicModuleLoad(device, image.data(), image.size(), &m), MIMIC_SUCCESS);
  mimicFunction fn = nullptr;
  EXPECT_EQ(mimicModuleGetFunction(m, name, &fn), MIMIC_SUCCESS);
  if (loaded) *loaded = m;
  return fn;
}

// Loads one function written with the builder (kernels/reference_kernels.h).
inline mimicFunction loadKernel(mimic::isa::Function f) {
  const std::string name = f.name;
  return loadFunction(mimic::isa::Module{{std::move(f)}}, name.c_str());
}

inline mimicFunction assembleFunction(const std::string& text, const char* name, int device = 0) {
  return loadFunction(mimic::isa::assemble(text), name, device);
}

// The counters of the queue's last kernel, once the queue has drained.
inline mimicKernelCounters countersAfter(mimicQueue q) {
  EXPECT_EQ(mimicQueueSynchronize(q), MIMIC_SUCCESS);
  mimicKernelCounters c{};
  EXPECT_EQ(mimicQueueGetKernelCounters(q, &c), MIMIC_SUCCESS);
  return c;
}

inline uint64_t kernelNs(const mimicKernelCounters& c) {
  return c.endNs - c.startNs;
}
