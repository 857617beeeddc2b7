// The seeded bug corpus: each program here has exactly one bug, named in its first comment,
// and builds a second time with MIMIC_CORPUS_CLEAN defined as its fixed version.
// tests/python/test_sanitizer.py runs both under MIMIC_SANITIZE=all and checks the sanitizer's
// JSON report: the bug found once with the right classification, the fixed program clean.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "mimic/mimic.hpp"
#include "mimic/mimic_debug.h"
#include "sim/isa/assembler.h"
#include "sim/isa/module_image.h"
#include "tests/engine/scale_kernels.h"

#ifdef MIMIC_CORPUS_CLEAN
constexpr bool kClean = true;
#else
constexpr bool kClean = false;
#endif

// scale2 (tests/engine/scale_kernels.h): dst[i] = 2 * src[i], 256 floats per workgroup.
inline mimicFunction scaleKernel(int device) {
  const std::vector<uint8_t> image = mimic::isa::encodeImage(mimic::isa::assemble(kScaleKernels));
  mimicModule module = nullptr;
  MIMIC_CHECK(mimicModuleLoad(device, image.data(), image.size(), &module));
  mimicFunction fn = nullptr;
  MIMIC_CHECK(mimicModuleGetFunction(module, "scale2", &fn));
  return fn;
}

// A buggy program may meet the error its bug causes; it reports it and goes on.
inline void expect(mimicResult result, const char* call) {
  if (result != MIMIC_SUCCESS) std::printf("%s: %s\n", call, mimicGetErrorName(result));
}
