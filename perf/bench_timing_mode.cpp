// The cost of one heavy engine kernel on the host, for comparing full and timing-only mode (run
// it once with MIMIC_MODE=full, once with MIMIC_MODE=timing): an f32 GEMM of N^3 (argument 1,
// default 2048) on the default preset. Prints the mode, the kernel's simulated time, the host
// wall time of the upload, launch and download, and the process's peak resident set.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "kernels/reference_kernels.h"
#include "mimic/mimic.hpp"
#include "sim/isa/module_image.h"

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 2048;
  if (n <= 0) {
    std::fprintf(stderr, "usage: %s [N > 0]\n", argv[0]);
    return 2;
  }
  MIMIC_CHECK(mimicInitWithPreset(0, "default", nullptr));
  mimicSimulationMode mode;
  MIMIC_CHECK(mimicGetSimulationMode(&mode));
  const uint32_t tile = 64;
  std::vector<uint8_t> image =
      mimic::isa::encodeImage(mimic::isa::Module{{mimic::kernels::gemm(tile)}});
  mimicModule module;
  MIMIC_CHECK(mimicModuleLoad(0, image.data(), image.size(), &module));
  mimicFunction gemm;
  MIMIC_CHECK(mimicModuleGetFunction(module, "gemm", &gemm));

  const auto start = std::chrono::steady_clock::now();
  const size_t bytes = size_t(n * n) * sizeof(float);
  std::vector<float> host(size_t(n * n), 0.5f);
  void *a, *b, *c;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &a));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &b));
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &c));
  MIMIC_CHECK(mimicMemcpy(a, host.data(), bytes));
  MIMIC_CHECK(mimicMemcpy(b, host.data(), bytes));
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } args{c, a, b, n, n, n};
  const uint32_t tiles = uint32_t((n + tile - 1) / tile);
  MIMIC_CHECK(mimicLaunchKernel(gemm, {tiles, tiles, 1}, &args, sizeof args, nullptr));
  MIMIC_CHECK(mimicQueueSynchronize(nullptr));
  mimicKernelCounters counters;
  MIMIC_CHECK(mimicQueueGetKernelCounters(nullptr, &counters));
  MIMIC_CHECK(mimicMemcpy(host.data(), c, bytes));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "mode %s  gemm %lld^3  simulated %.3f ms  host wall %.3f s  peak RSS %.1f MiB  "
      "c[0] %g\n",
      mode == MIMIC_SIMULATION_TIMING ? "timing" : "full", static_cast<long long>(n),
      double(counters.endNs - counters.startNs) * 1e-6, wall, usage.ru_maxrss / 1024.0,
      double(host[0]));
  return 0;
}
