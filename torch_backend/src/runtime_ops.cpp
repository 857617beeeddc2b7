// torch.ops.mimic.* for the Python package: devices, streams, events, memory statistics, pinned
// host memory and the fallback report. Streams cross into Python packed as torch.Stream does
// (c10::Stream::pack), events as their driver handle.
#include <ATen/ops/from_blob.h>
#include <c10/core/StreamGuard.h>
#include <torch/library.h>

#include <map>
#include <mutex>

#include "mimic/mimic_debug.h"

#include "torch_backend/ops/kernel_cache.h"
#include "torch_backend/src/caching_allocator.h"
#include "torch_backend/src/device_runtime.h"
#include "torch_backend/src/fallback_counter.h"

namespace mimic::torch_backend {
namespace {

c10::Stream unpackStream(int64_t packed) {
  return c10::Stream::unpack(static_cast<uint64_t>(packed));
}
int64_t packStream(const c10::Stream& stream) {
  return static_cast<int64_t>(stream.pack());
}
mimicEvent eventOf(int64_t handle) {
  return reinterpret_cast<mimicEvent>(handle);
}

int64_t deviceCount() {
  return deviceCountNoThrow();
}
int64_t getDevice() {
  return currentDevice();
}
void setDevice(int64_t device) {
  ensureInitialized();
  setCurrentDevice(static_cast<int>(device));
}

void synchronize(int64_t device) {
  ensureInitialized();
  MIMIC_TORCH_CHECK(mimicDeviceSynchronize(static_cast<int>(device)));
}

// Name and preset, then the numeric properties in the order torch_mimic/_device.py reads them.
std::tuple<std::vector<std::string>, std::vector<double>> deviceProperties(int64_t device) {
  ensureInitialized();
  mimicDeviceProperties p{};
  MIMIC_TORCH_CHECK(mimicDeviceGetProperties(static_cast<int>(device), &p));
  return {{p.name, p.preset},
          {double(p.totalMemory),
           double(p.computeUnits),
           double(p.vectorLanes),
           p.clockMHz,
           double(p.scratchpadBytes),
           double(p.mmaF32MacsPerCycle),
           double(p.mmaF16MacsPerCycle),
           p.hbmBandwidthGBps,
           double(p.hbmLatencyNs),
           p.hostLinkBandwidthGBps,
           double(p.hostLinkLatencyNs),
           double(p.deviceLinkBandwidthGBps),
           double(p.deviceLinkLatencyNs),
           double(p.hardwareQueues),
           double(p.copyEngines),
           double(p.linkEngines),
           double(p.commandLatencyNs),
           p.matrixClockMHz,
           p.hbmEfficiency,
           p.hostLinkEfficiency,
           p.deviceLinkEfficiency,
           double(p.cacheBytes),
           p.cacheBandwidthGBps,
           double(p.cacheLatencyNs),
           double(p.maxWorkgroupsPerUnit)}};
}

int64_t simTime() {
  ensureInitialized();
  uint64_t ns = 0;
  MIMIC_TORCH_CHECK(mimicGetSimTime(&ns));
  return static_cast<int64_t>(ns);
}

int64_t streamCreate(int64_t device, int64_t priority) {
  ensureInitialized();
  return packStream(createStream(static_cast<int>(device), static_cast<int>(priority)));
}
int64_t streamCurrent(int64_t device) {
  ensureInitialized();
  return packStream(currentStream(static_cast<int>(device)));
}
int64_t streamDefault(int64_t device) {
  ensureInitialized();
  return packStream(c10::Stream(c10::Stream::DEFAULT, deviceOf(static_cast<int>(device))));
}
void streamSet(int64_t packed) {
  setCurrentStream(unpackStream(packed));
}
void streamSynchronize(int64_t packed) {
  MIMIC_TORCH_CHECK(mimicQueueSynchronize(queueOf(unpackStream(packed))));
}
bool streamQuery(int64_t packed) {
  mimicResult result = mimicQueueQuery(queueOf(unpackStream(packed)));
  if (result == MIMIC_NOT_READY) return false;
  MIMIC_TORCH_CHECK(result);
  return true;
}

int64_t eventCreate(int64_t device, bool timing) {
  ensureInitialized();
  mimicEvent event = nullptr;
  MIMIC_TORCH_CHECK(mimicEventCreate(
      static_cast<int>(device), timing ? MIMIC_EVENT_DEFAULT : MIMIC_EVENT_DISABLE_TIMING, &event));
  return reinterpret_cast<int64_t>(event);
}
void eventDestroy(int64_t event) {
  MIMIC_TORCH_CHECK(mimicEventDestroy(eventOf(event)));
}
void eventRecord(int64_t event, int64_t stream) {
  MIMIC_TORCH_CHECK(mimicEventRecord(eventOf(event), queueOf(unpackStream(stream))));
}
void eventWait(int64_t event, int64_t stream) {
  MIMIC_TORCH_CHECK(mimicQueueWaitEvent(queueOf(unpackStream(stream)), eventOf(event)));
}
bool eventQuery(int64_t event) {
  mimicResult result = mimicEventQuery(eventOf(event));
  if (result == MIMIC_NOT_READY) return false;
  MIMIC_TORCH_CHECK(result);
  return true;
}
void eventSynchronize(int64_t event) {
  MIMIC_TORCH_CHECK(mimicEventSynchronize(eventOf(event)));
}
double eventElapsed(int64_t start, int64_t end) {
  float ms = 0;
  MIMIC_TORCH_CHECK(mimicEventElapsedTime(&ms, eventOf(start), eventOf(end)));
  return ms;
}

// allocated, peak allocated, reserved, peak reserved, allocations, cache hits, driver
// allocations, out-of-memory count.
std::vector<int64_t> memoryStats(int64_t device) {
  ensureInitialized();
  const AllocatorStats s = cachingAllocator().stats(static_cast<int>(device));
  return {s.allocatedBytes, s.peakAllocatedBytes, s.reservedBytes,     s.peakReservedBytes,
          s.allocations,    s.cacheHits,          s.driverAllocations, s.outOfMemory};
}
void resetPeakMemoryStats(int64_t device) {
  cachingAllocator().resetPeakStats(static_cast<int>(device));
}
void emptyCache() {
  cachingAllocator().emptyCache();
}
// hits, misses (kernels built and loaded), evictions, entries, capacity.
std::vector<int64_t> kernelCacheStats() {
  const mimic::ops::KernelCacheStats s = mimic::ops::kernelCacheStats();
  return {s.hits, s.misses, s.evictions, s.entries, s.capacity};
}
void resetDevice(int64_t device) {
  ensureInitialized();
  cachingAllocator().resetDevice(static_cast<int>(device));
}
std::string memorySummary(int64_t device) {
  ensureInitialized();
  return cachingAllocator().summary(static_cast<int>(device));
}

// Raw device memory from the caching allocator (torch_mimic.caching_allocator_alloc/_delete, as
// torch.cuda's): the allocation lives until deleted.
std::mutex rawMutex;
std::map<int64_t, c10::DataPtr>& rawAllocations() {
  static auto* allocations = new std::map<int64_t, c10::DataPtr>();
  return *allocations;
}

int64_t rawAlloc(int64_t bytes, int64_t stream) {
  ensureInitialized();
  TORCH_CHECK(bytes > 0, "mimic: caching_allocator_alloc: size must be positive, got ", bytes);
  c10::StreamGuard guard(unpackStream(stream));
  c10::DataPtr data = cachingAllocator().allocate(static_cast<size_t>(bytes));
  const int64_t address = reinterpret_cast<int64_t>(data.get());
  std::lock_guard<std::mutex> lock(rawMutex);
  rawAllocations().emplace(address, std::move(data));
  return address;
}

void rawDelete(int64_t address) {
  std::unique_lock<std::mutex> lock(rawMutex);
  auto it = rawAllocations().find(address);
  if (it == rawAllocations().end()) {
    lock.unlock();
    // The sanitizer, if on, knows whether this was freed before and reports the double free.
    const mimicResult result = mimicDebugRegionUnregister(reinterpret_cast<void*>(address));
    TORCH_CHECK(
        false, "mimic: caching_allocator_delete: 0x", std::hex, address,
        " is not a live allocation of caching_allocator_alloc",
        result == MIMIC_ERROR_DOUBLE_FREE ? " (it was already deleted: a double free)" : "");
  }
  c10::DataPtr data = std::move(it->second);
  rawAllocations().erase(it);
  lock.unlock();
}

// The sanitizer (mimic_debug.h): its tools as MIMIC_SANITIZE_* bits, and its findings by kind.
int64_t sanitizerTools() {
  ensureInitialized();
  unsigned tools = 0;
  MIMIC_TORCH_CHECK(mimicDebugGetSanitizer(&tools));
  return tools;
}
void sanitizerSetTools(int64_t tools) {
  ensureInitialized();
  MIMIC_TORCH_CHECK(mimicDebugSetSanitizer(static_cast<unsigned>(tools)));
}
// out of bounds, use after free, double free, uninitialized read, race, leak.
std::vector<int64_t> sanitizerFindings() {
  ensureInitialized();
  mimicSanitizerFindings f{};
  MIMIC_TORCH_CHECK(mimicDebugGetSanitizerFindings(&f));
  return {int64_t(f.outOfBounds),       int64_t(f.useAfterFree), int64_t(f.doubleFree),
          int64_t(f.uninitializedRead), int64_t(f.race),         int64_t(f.leak)};
}
int64_t sanitizerCheckLeaks() {
  ensureInitialized();
  uint64_t leaks = 0;
  MIMIC_TORCH_CHECK(mimicDebugCheckLeaks(&leaks));
  return int64_t(leaks);
}

// A CPU tensor in pinned host memory (mimicHostAlloc): copies from it run asynchronously.
at::Tensor pinnedEmpty(std::vector<int64_t> size, c10::optional<at::ScalarType> dtype) {
  ensureInitialized();
  const at::ScalarType type = dtype.value_or(at::kFloat);
  const size_t bytes = std::max<size_t>(1, c10::multiply_integers(size) * c10::elementSize(type));
  void* host = nullptr;
  MIMIC_TORCH_CHECK(mimicHostAlloc(bytes, &host));
  return at::from_blob(
      host, size, [](void* p) { mimicHostFree(p); },
      at::TensorOptions().dtype(type).device(at::kCPU));
}

bool isPinned(const at::Tensor& tensor) {
  if (!tensor.device().is_cpu() || !tensor.data_ptr()) return false;
  mimicPointerAttributes attributes{};
  return mimicPointerGetAttributes(tensor.data_ptr(), &attributes) == MIMIC_SUCCESS &&
         attributes.type == MIMIC_MEMORY_TYPE_PINNED;
}

std::tuple<std::vector<std::string>, std::vector<int64_t>> fallbackReport() {
  std::tuple<std::vector<std::string>, std::vector<int64_t>> report;
  for (const auto& [op, count] : fallbackCounts()) {
    std::get<0>(report).push_back(op);
    std::get<1>(report).push_back(count);
  }
  return report;
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("device_count() -> int", deviceCount);
  m.def("current_device() -> int", getDevice);
  m.def("set_device(int device) -> ()", setDevice);
  m.def("synchronize(int device) -> ()", synchronize);
  m.def("device_properties(int device) -> (str[], float[])", deviceProperties);
  m.def("sim_time() -> int", simTime);
  m.def("stream_create(int device, int priority) -> int", streamCreate);
  m.def("stream_current(int device) -> int", streamCurrent);
  m.def("stream_default(int device) -> int", streamDefault);
  m.def("stream_set(int stream) -> ()", streamSet);
  m.def("stream_synchronize(int stream) -> ()", streamSynchronize);
  m.def("stream_query(int stream) -> bool", streamQuery);
  m.def("event_create(int device, bool timing) -> int", eventCreate);
  m.def("event_destroy(int event) -> ()", eventDestroy);
  m.def("event_record(int event, int stream) -> ()", eventRecord);
  m.def("event_wait(int event, int stream) -> ()", eventWait);
  m.def("event_query(int event) -> bool", eventQuery);
  m.def("event_synchronize(int event) -> ()", eventSynchronize);
  m.def("event_elapsed(int start, int end) -> float", eventElapsed);
  m.def("memory_stats(int device) -> int[]", memoryStats);
  m.def("reset_peak_memory_stats(int device) -> ()", resetPeakMemoryStats);
  m.def("empty_cache() -> ()", emptyCache);
  m.def("kernel_cache_stats() -> int[]", kernelCacheStats);
  m.def("reset_device(int device) -> ()", resetDevice);
  m.def("memory_summary(int device) -> str", memorySummary);
  m.def("sanitizer_tools() -> int", sanitizerTools);
  m.def("sanitizer_set_tools(int tools) -> ()", sanitizerSetTools);
  m.def("sanitizer_findings() -> int[]", sanitizerFindings);
  m.def("sanitizer_check_leaks() -> int", sanitizerCheckLeaks);
  m.def("caching_allocator_alloc(int size, int stream) -> int", rawAlloc);
  m.def("caching_allocator_delete(int ptr) -> ()", rawDelete);
  m.def("pinned_empty(int[] size, ScalarType? dtype=None) -> Tensor", pinnedEmpty);
  m.def("is_pinned(Tensor tensor) -> bool", isPinned);
  m.def("fallback_report() -> (str[], int[])", fallbackReport);
  m.def("fallback_reset() -> ()", resetFallbackCounts);
  m.def("fallback_note(str op) -> ()", [](c10::string_view op) { noteFallback(std::string(op)); });
}

}  // namespace mimic::torch_backend
