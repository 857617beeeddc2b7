// Stress: host threads at once launching kernels, copying, filling, recording and waiting on
// events (their own and each other's), creating and destroying queues and allocating, on every
// device. Run under AddressSanitizer + UndefinedBehaviorSanitizer and under ThreadSanitizer by
// scripts/sanitizers.sh; every result is checked, and any failure exits non-zero.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "../engine/scale_kernels.h"
#include "mimic/mimic.h"
#include "sim/isa/assembler.h"
#include "sim/isa/module_image.h"

namespace {

constexpr int kThreads = 4;
constexpr int kRounds = 400;
constexpr uint32_t kFloats = 1024;  // 4 workgroups of 256

std::atomic<int> failures{0};

void check(mimicResult result, const char* what, int line) {
  if (result == MIMIC_SUCCESS) return;
  const char* detail = "";
  mimicGetErrorDetail(&detail);
  std::fprintf(stderr, "stress: line %d: %s returned %s: %s\n", line, what,
               mimicGetErrorName(result), detail);
  ++failures;
}
#define CHECK(call) check((call), #call, __LINE__)

// Events recorded by any thread, for any other to wait on; each stays alive to the end.
std::mutex sharedMutex;
std::vector<mimicEvent> sharedEvents;

void worker(int id, int devices, const std::vector<mimicFunction>& scale) {
  std::vector<float> input(kFloats), output(kFloats);
  float* pinned = nullptr;
  CHECK(mimicHostAlloc(kFloats * sizeof(float), reinterpret_cast<void**>(&pinned)));
  for (int round = 0; round < kRounds && pinned; ++round) {
    const int device = (id + round) % devices;
    mimicQueue queue = nullptr;
    CHECK(mimicQueueCreate(device, 0, round % 2 ? MIMIC_QUEUE_PRIORITY_HIGH : 0, &queue));
    void* a = nullptr;
    void* b = nullptr;
    CHECK(mimicMemAlloc(device, kFloats * sizeof(float), &a));
    CHECK(mimicMemAlloc(device, kFloats * sizeof(float), &b));
    for (uint32_t i = 0; i < kFloats; ++i) input[i] = pinned[i] = float(id * 1000 + round + i);
    CHECK(mimicMemcpyAsync(a, round % 3 ? static_cast<void*>(pinned) : input.data(),
                           kFloats * sizeof(float), queue));
    CHECK(mimicMemsetAsync(b, 0, kFloats * sizeof(float), queue));
    {
      std::lock_guard<std::mutex> lock(sharedMutex);
      if (!sharedEvents.empty()) {
        CHECK(mimicQueueWaitEvent(queue, sharedEvents[(id * 7 + round) % sharedEvents.size()]));
      }
    }
    const void* args[] = {b, a};
    CHECK(mimicLaunchKernel(scale[device], {kFloats / 256, 1, 1}, args, sizeof args, queue));
    mimicEvent done = nullptr;
    CHECK(mimicEventCreate(device, round % 2 ? MIMIC_EVENT_DEFAULT : MIMIC_EVENT_DISABLE_TIMING,
                           &done));
    CHECK(mimicEventRecord(done, queue));
    {
      std::lock_guard<std::mutex> lock(sharedMutex);
      sharedEvents.push_back(done);
    }
    CHECK(mimicMemcpy(output.data(), b, kFloats * sizeof(float)));
    for (uint32_t i = 0; i < kFloats; ++i) {
      if (output[i] != 2 * input[i]) {
        std::fprintf(stderr, "stress: thread %d round %d: element %u is %g, expected %g\n", id,
                     round, i, output[i], 2 * input[i]);
        ++failures;
        break;
      }
    }
    CHECK(mimicMemFree(a));
    CHECK(mimicMemFree(b));
    CHECK(mimicQueueDestroy(queue));
  }
  if (pinned) CHECK(mimicHostFree(pinned));
}

}  // namespace

int main() {
  CHECK(mimicInitWithPreset(0, "tiny", "system.num_devices=3"));
  int devices = 0;
  CHECK(mimicDeviceGetCount(&devices));
  const std::vector<uint8_t> image = mimic::isa::encodeImage(mimic::isa::assemble(kScaleKernels));
  std::vector<mimicFunction> scale(devices);
  for (int d = 0; d < devices; ++d) {
    mimicModule module = nullptr;
    CHECK(mimicModuleLoad(d, image.data(), image.size(), &module));
    CHECK(mimicModuleGetFunction(module, "scale2", &scale[d]));
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t, devices, std::cref(scale));
  for (std::thread& t : threads) t.join();
  for (int d = 0; d < devices; ++d) CHECK(mimicDeviceSynchronize(d));
  for (mimicEvent e : sharedEvents) CHECK(mimicEventDestroy(e));
  std::printf("stress: %d threads x %d rounds on %d devices, %d failures\n", kThreads, kRounds,
              devices, failures.load());
  return failures.load() == 0 ? 0 : 1;
}
