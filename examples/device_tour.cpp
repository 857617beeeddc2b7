// The main job for now: list the simulated devices, measure copy bandwidth between host and
// device and between devices across sizes, then run two reference kernels (a streaming kernel
// and a GEMM) against the device's roofline, all in simulated time.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/reference_kernels.h"
#include "mimic/mimic.hpp"
#include "sim/isa/module_image.h"

namespace {

const char* topologyName(mimicTopology t) {
  switch (t) {
    case MIMIC_TOPOLOGY_RING:
      return "ring";
    case MIMIC_TOPOLOGY_FULL_MESH:
      return "full mesh";
    case MIMIC_TOPOLOGY_SWITCH:
      return "switch";
  }
  return "?";
}

void listDevices(int count) {
  std::printf("%d simulated device(s)\n\n", count);
  for (int d = 0; d < count; ++d) {
    mimicDeviceProperties p;
    MIMIC_CHECK(mimicDeviceGetProperties(d, &p));
    std::printf("device %d: %s (preset '%s')\n", d, p.name, p.preset);
    std::printf("  compute      %d CUs x %d lanes @ %.0f MHz, %zu KiB scratchpad per CU\n",
                p.computeUnits, p.vectorLanes, p.clockMHz, p.scratchpadBytes >> 10);
    std::printf("  HBM          %.1f GiB, %.0f GB/s, %llu ns latency\n",
                double(p.totalMemory) / (1ull << 30), p.hbmBandwidthGBps,
                (unsigned long long)p.hbmLatencyNs);
    std::printf("  host link    %.0f GB/s per direction, %llu ns latency\n",
                p.hostLinkBandwidthGBps, (unsigned long long)p.hostLinkLatencyNs);
    std::printf("  device links %s, %.0f GB/s per direction, %llu ns per hop\n",
                topologyName(p.deviceLinkTopology), p.deviceLinkBandwidthGBps,
                (unsigned long long)p.deviceLinkLatencyNs);
    std::printf("  queues       %d hardware queues, %d copy engines, %d link engines\n\n",
                p.hardwareQueues, p.copyEngines, p.linkEngines);
  }
}

// Simulated time of one copy, measured between two events around it.
double timeCopyNs(void* dst, const void* src, size_t bytes, mimicQueue queue, int device) {
  mimicEvent start, end;
  MIMIC_CHECK(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &start));
  MIMIC_CHECK(mimicEventCreate(device, MIMIC_EVENT_DEFAULT, &end));
  MIMIC_CHECK(mimicEventRecord(start, queue));
  MIMIC_CHECK(mimicMemcpyAsync(dst, src, bytes, queue));
  MIMIC_CHECK(mimicEventRecord(end, queue));
  MIMIC_CHECK(mimicEventSynchronize(end));
  float ms = 0;
  MIMIC_CHECK(mimicEventElapsedTime(&ms, start, end));
  MIMIC_CHECK(mimicEventDestroy(start));
  MIMIC_CHECK(mimicEventDestroy(end));
  return double(ms) * 1e6;
}

std::string sizeLabel(size_t bytes) {
  char text[32];
  if (bytes >= (1u << 20)) {
    std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%zu KiB", bytes >> 10);
  } else {
    std::snprintf(text, sizeof text, "%zu B", bytes);
  }
  return text;
}

void bandwidthTable(int count) {
  mimicDeviceProperties props;
  MIMIC_CHECK(mimicDeviceGetProperties(0, &props));
  size_t maxBytes = 256ull << 20;
  while (maxBytes > props.totalMemory / 2) maxBytes /= 8;
  void* pinned = nullptr;
  MIMIC_CHECK(mimicHostAlloc(maxBytes, &pinned));
  std::memset(pinned, 1, maxBytes);
  std::vector<unsigned char> pageable(maxBytes, 2);
  void* dev0 = nullptr;
  void* dev1 = nullptr;
  MIMIC_CHECK(mimicMemAlloc(0, maxBytes, &dev0));
  if (count > 1) MIMIC_CHECK(mimicMemAlloc(1, maxBytes, &dev1));
  mimicQueue queue;
  MIMIC_CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &queue));

  std::printf("Copy bandwidth in simulated time (GB/s; each copy timed alone by events)\n");
  std::printf("%10s %12s %12s %12s %12s %12s\n", "size", "H2D pinned", "D2H pinned", "H2D pageable",
              "D2H pageable", count > 1 ? "peer 0->1" : "D2D");
  for (size_t bytes = 4096; bytes <= maxBytes; bytes *= 8) {
    auto gbps = [bytes](double ns) { return double(bytes) / ns; };
    double h2d = gbps(timeCopyNs(dev0, pinned, bytes, queue, 0));
    double d2h = gbps(timeCopyNs(pinned, dev0, bytes, queue, 0));
    double h2dPageable = gbps(timeCopyNs(dev0, pageable.data(), bytes, queue, 0));
    double d2hPageable = gbps(timeCopyNs(pageable.data(), dev0, bytes, queue, 0));
    double d2d =
        gbps(timeCopyNs(count > 1 ? dev1 : dev0, dev0, bytes / (count > 1 ? 1 : 2), queue, 0));
    std::printf("%10s %12.2f %12.2f %12.2f %12.2f %12.2f\n", sizeLabel(bytes).c_str(), h2d, d2h,
                h2dPageable, d2hPageable, d2d);
  }
  uint64_t simNs = 0;
  MIMIC_CHECK(mimicGetSimTime(&simNs));
  std::printf("\nsimulated time elapsed: %.3f ms\n", double(simNs) / 1e6);
  MIMIC_CHECK(mimicQueueDestroy(queue));
  MIMIC_CHECK(mimicMemFree(dev0));
  if (dev1) MIMIC_CHECK(mimicMemFree(dev1));
  MIMIC_CHECK(mimicHostFree(pinned));
}

mimicFunction loadKernel(mimic::isa::Function function) {
  const std::string name = function.name;
  std::vector<uint8_t> image = mimic::isa::encodeImage(mimic::isa::Module{{std::move(function)}});
  mimicModule module;
  MIMIC_CHECK(mimicModuleLoad(0, image.data(), image.size(), &module));
  mimicFunction fn;
  MIMIC_CHECK(mimicModuleGetFunction(module, name.c_str(), &fn));
  return fn;
}

void* zeroed(size_t bytes) {
  void* p;
  MIMIC_CHECK(mimicMemAlloc(0, bytes, &p));
  MIMIC_CHECK(mimicMemsetAsync(p, 0, bytes, nullptr));
  return p;
}

void kernelTable() {
  mimicDeviceProperties p;
  MIMIC_CHECK(mimicDeviceGetProperties(0, &p));
  mimicQueue q;
  MIMIC_CHECK(mimicQueueCreate(0, 0, MIMIC_QUEUE_PRIORITY_LOW, &q));
  const double peakGflops = 2.0 * p.mmaF32MacsPerCycle * p.computeUnits * p.clockMHz / 1000;
  std::printf("\nKernels in simulated time (device 0)\n");
  std::printf("%-28s %12s %14s %14s\n", "kernel", "time (us)", "achieved", "device peak");

  const int64_t n = std::min<int64_t>(16 << 20, int64_t(p.totalMemory / 16));
  // Nine tiles (x, y and the result, three deep) must fit in the scratchpad.
  uint32_t tile = 4096;
  while (tile > 256 && 9ull * tile * 4 > p.scratchpadBytes) tile /= 2;
  const uint32_t tilesPerWorkgroup = uint32_t(std::max<int64_t>(1, n / tile / p.computeUnits));
  void* x = zeroed(n * 4);
  void* y = zeroed(n * 4);
  struct {
    void *y, *x;
    int64_t n, alpha;
  } axpyArgs{y, x, n, 0x3f800000};
  MIMIC_CHECK(mimicLaunchKernel(
      loadKernel(mimic::kernels::axpyPipelined(tile, tilesPerWorkgroup, 3)),
      {uint32_t(n / tile / tilesPerWorkgroup), 1, 1}, &axpyArgs, sizeof axpyArgs, q));
  MIMIC_CHECK(mimicQueueSynchronize(q));
  mimicKernelCounters c;
  MIMIC_CHECK(mimicQueueGetKernelCounters(q, &c));
  double ns = double(c.endNs - c.startNs);
  std::printf("%-28s %12.1f %9.0f GB/s %9.0f GB/s\n", "axpy, f32 (streaming)", ns / 1e3,
              double(c.hbmBytesRead + c.hbmBytesWritten) / ns, p.hbmBandwidthGBps);

  const int64_t m = 1024;
  void* a = zeroed(m * m * 4);
  void* b = zeroed(m * m * 4);
  void* out = zeroed(m * m * 4);
  struct {
    void *c, *a, *b;
    int64_t m, n, k;
  } gemmArgs{out, a, b, m, m, m};
  const uint32_t gemmTile = p.scratchpadBytes >= 80 * 1024 ? 64 : 32;
  MIMIC_CHECK(mimicLaunchKernel(loadKernel(mimic::kernels::gemm(gemmTile)),
                                {uint32_t(m / gemmTile), uint32_t(m / gemmTile), 1}, &gemmArgs,
                                sizeof gemmArgs, q));
  MIMIC_CHECK(mimicQueueSynchronize(q));
  MIMIC_CHECK(mimicQueueGetKernelCounters(q, &c));
  ns = double(c.endNs - c.startNs);
  std::printf("%-28s %12.1f %6.0f GFLOP/s %6.0f GFLOP/s\n", "gemm, 1024^3 f32 (tiled)", ns / 1e3,
              double(c.flops) / ns, peakGflops);
  std::printf("  matrix pipe busy %.0f%%, vector %.0f%%, DMA issue %.1f%%\n",
              c.busy[MIMIC_PIPE_MATRIX] * 100, c.busy[MIMIC_PIPE_VECTOR] * 100,
              c.busy[MIMIC_PIPE_DMA] * 100);
  for (void* ptr : {x, y, a, b, out}) MIMIC_CHECK(mimicMemFree(ptr));
  MIMIC_CHECK(mimicQueueDestroy(q));
}

}  // namespace

int main() {
  try {
    MIMIC_CHECK(mimicInit(0));
    int count = 0;
    MIMIC_CHECK(mimicDeviceGetCount(&count));
    listDevices(count);
    bandwidthTable(count);
    kernelTable();
  } catch (const mimic::Error& e) {
    std::fprintf(stderr, "mimic-device-tour: %s\n", e.what());
    return 1;
  }
  return 0;
}
