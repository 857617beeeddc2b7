#include "replay.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "errors.h"
#include "mimic/mimic_trace.h"
#include "runtime.h"
#include "sim/device.h"

namespace mimic::driver {
namespace {

// The most bytes the replay provides where the recorded call failed before reading them
// (pageable buffers, module images, kernel arguments): the replayed call fails alike.
constexpr size_t kMaxScratchForFailedCall = size_t(1) << 20;

// A host task of the replay: it returns the end time the recorded run's task returned.
struct ReplayTask {
  uint64_t launchCall;
  bool recorded;  // the recorded run saw the task run
  uint64_t recordedStartNs, recordedEndNs;
  std::atomic<bool> ran{false};
  uint64_t startNs = 0;
};

// Tasks may run after the replay returns, so they live as long as the process.
std::deque<ReplayTask>& replayTasks() {
  static auto* tasks = new std::deque<ReplayTask>;
  return *tasks;
}

uint64_t runReplayTask(void* data, uint64_t startNs) {
  auto* task = static_cast<ReplayTask*>(data);
  task->startNs = startNs;
  task->ran.store(true, std::memory_order_release);
  return task->recorded ? task->recordedEndNs : startNs;
}

void replayHostFunc(void*) {}

std::string hex(uint64_t value) {
  char text[32];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string describe(mimicResult r) {
  return mimicGetErrorName(r);
}
std::string describe(uint64_t v) {
  return std::to_string(v);
}

template <typename T>
T* outputIf(uint64_t recordedPointer, T* local) {
  return recordedPointer ? local : nullptr;
}

}  // namespace

Replayer::Replayer(CallLog log) : log_(std::move(log)) {
  for (const LoggedHostTaskEnd& end : log_.hostTaskEnds) taskEnds_[end.launchCall] = end;
}

void Replayer::initialize(size_t traceCapacity) {
  if (Runtime::instance()) {
    fail(MIMIC_ERROR_ALREADY_INITIALIZED,
         "a replay needs a process without a simulation, and mimicInit was called before");
  }
  // The header alone says how to build the simulation.
  for (const char* name : {"MIMIC_PRESET", "MIMIC_OVERRIDES", "MIMIC_NUM_DEVICES", "MIMIC_RECORD"})
    unsetenv(name);
  setenv("MIMIC_FAULTS", log_.header.faults.c_str(), 1);
  const mimicResult init =
      mimicInitWithPreset(0, log_.header.preset.c_str(), log_.header.overrides.c_str());
  if (init != MIMIC_SUCCESS) {
    const char* detail = "";
    mimicGetErrorDetail(&detail);
    fail(init, std::string("the log's configuration cannot be built: ") + detail);
  }
  Runtime& rt = *Runtime::instance();
  for (int d = 0; d < rt.numDevices(); ++d) {
    const sim::DeviceMemory& memory = rt.sim().device(d).memory();
    deviceRanges_.push_back({memory.base(), memory.capacity()});
  }
  if (deviceRanges_.size() != log_.deviceRanges.size()) {
    fail(MIMIC_ERROR_REPLAY_DIVERGED,
         "the log's system has " + std::to_string(log_.deviceRanges.size()) +
             " devices, the replay's " + std::to_string(deviceRanges_.size()));
  }
  if (traceCapacity > 0 && mimicTraceStart(traceCapacity) != MIMIC_SUCCESS) {
    fail(MIMIC_ERROR_INVALID_SIZE, "tracing cannot start");
  }
}

void Replayer::run(size_t traceCapacity, mimicReplayResult* result) {
  *result = mimicReplayResult{};
  result->callsInLog = log_.calls.size();
  initialize(traceCapacity);
  uint64_t correlation = 0;
  for (const LoggedCall& call : log_.calls) {
    ++callNumber_;
    current_ = &call;
    if (call.correlation != correlation) {
      mimicTraceSetCorrelationId(call.correlation, nullptr);
      correlation = call.correlation;
    }
    ByteReader payload(call.payload.data(), call.payload.size(),
                       "call " + std::to_string(callNumber_) + " (" + callName(call.id) +
                           "): its payload is shorter than its fields");
    scratch_.clear();
    const mimicResult replayed = issue(call, payload);
    const char* detail = "";
    mimicGetErrorDetail(&detail);  // before other calls can replace it
    mimicGetSimTime(&result->endSimTimeNs);
    expectEqual("result", call.result, replayed);
    checkHostTasks();
    result->callsReplayed = callNumber_;
    if (replayed != MIMIC_SUCCESS && replayed != MIMIC_NOT_READY && !result->failedCall) {
      result->failedCall = callNumber_;
      result->failedResult = replayed;
      std::snprintf(result->failedDetail, sizeof result->failedDetail, "%s", detail);
    }
  }
}

template <typename Handle>
Handle Replayer::handle(uint64_t recorded) const {
  auto it = handles_.find(recorded);
  // Handles the recorded run never got (NULL, destroyed, forged) pass as they were.
  return reinterpret_cast<Handle>(
      static_cast<uintptr_t>(it == handles_.end() ? recorded : it->second));
}

void Replayer::mapHandle(uint64_t recorded, const void* replayed) {
  if (recorded) handles_[recorded] = reinterpret_cast<uintptr_t>(replayed);
}

uint64_t Replayer::deviceAddress(uint64_t recorded) const {
  for (size_t d = 0; d < deviceRanges_.size(); ++d) {
    const LoggedDeviceRange& logged = log_.deviceRanges[d];
    if (recorded - logged.base < logged.size)
      return deviceRanges_[d].base + (recorded - logged.base);
  }
  return recorded;
}

void* Replayer::devicePointer(uint64_t recorded) const {
  return reinterpret_cast<void*>(static_cast<uintptr_t>(deviceAddress(recorded)));
}

void* Replayer::hostMemory(PointerKind kind, uint64_t recorded, size_t bytes) {
  switch (kind) {
    case PointerKind::Null:
      return nullptr;
    case PointerKind::Device:
      return devicePointer(recorded);
    case PointerKind::Pinned: {
      auto it = pinned_.upper_bound(recorded);
      if (it != pinned_.begin()) {
        --it;
        if (recorded - it->first < it->second.size) {
          return it->second.replayBase + (recorded - it->first);
        }
      }
      diverged("the log has pinned memory at " + hex(recorded) + " that no mimicHostAlloc made");
    }
    case PointerKind::Pageable:
      break;
  }
  if (current_->result != MIMIC_SUCCESS) bytes = std::min(bytes, kMaxScratchForFailedCall);
  scratch_.emplace_back(std::max<size_t>(bytes, 1));
  return scratch_.back().data();
}

void Replayer::diverged(const std::string& what) const {
  fail(MIMIC_ERROR_REPLAY_DIVERGED, "replay diverged at call " + std::to_string(callNumber_) +
                                        " (" + callName(current_->id) + "): " + what);
}

template <typename T>
void Replayer::expectEqual(const char* what, T logged, T replayed) const {
  if (logged == replayed) return;
  diverged(std::string("the log has ") + what + " " + describe(logged) + ", the replay got " +
           describe(replayed));
}

void Replayer::checkHostTasks() {
  std::deque<ReplayTask>& tasks = replayTasks();
  for (; tasksChecked_ < tasks.size(); ++tasksChecked_) {
    ReplayTask& task = tasks[tasksChecked_];
    if (!task.ran.load(std::memory_order_acquire)) return;
    if (task.recorded && task.startNs != task.recordedStartNs) {
      diverged("the host task launched by call " + std::to_string(task.launchCall) +
               " started at " + std::to_string(task.startNs) + " ns; the log has " +
               std::to_string(task.recordedStartNs) + " ns");
    }
  }
}

mimicResult Replayer::issueHostTask(const LoggedCall& call) {
  auto found = taskEnds_.find(callNumber_);
  const bool recorded = found != taskEnds_.end();
  ReplayTask& task = replayTasks().emplace_back();
  task.launchCall = callNumber_;
  task.recorded = recorded;
  task.recordedStartNs = recorded ? found->second.startNs : 0;
  task.recordedEndNs = recorded ? found->second.endNs : 0;
  return mimicLaunchHostTask(handle<mimicQueue>(call.args[0]),
                             call.args[1] ? runReplayTask : nullptr, &task);
}

mimicResult Replayer::issueTransfer(const LoggedCall& call, ByteReader& payload) {
  const auto& a = call.args;
  const auto to = PointerKind(payload.u8());
  const auto from = PointerKind(payload.u8());
  const bool peer = call.id == CallId::MemcpyPeerAsync;
  const uint64_t bytes = a[peer ? 4 : 2];
  void* dst = hostMemory(to, a[0], bytes);
  if (call.id == CallId::MemsetAsync) {
    return mimicMemsetAsync(dst, int(a[1]), bytes, handle<mimicQueue>(a[3]));
  }
  void* src = hostMemory(from, a[peer ? 2 : 1], bytes);
  const bool toHost = to == PointerKind::Pinned || to == PointerKind::Pageable;
  const bool fromHost = from == PointerKind::Pinned || from == PointerKind::Pageable;
  const bool hostToDevice = call.result == MIMIC_SUCCESS && fromHost && to == PointerKind::Device;
  const bool deviceToHost = call.result == MIMIC_SUCCESS && toHost && from == PointerKind::Device;
  if (hostToDevice) {
    const std::vector<uint8_t> data = payload.blob();
    if (data.size() != bytes) diverged("the log's copied data does not match its size");
    std::memcpy(src, data.data(), bytes);
  }
  mimicResult r;
  switch (call.id) {
    case CallId::Memcpy:
      r = mimicMemcpy(dst, src, bytes);
      break;
    case CallId::MemcpyAsync:
      r = mimicMemcpyAsync(dst, src, bytes, handle<mimicQueue>(a[3]));
      break;
    default:
      r = mimicMemcpyPeerAsync(dst, int(a[1]), src, int(a[3]), bytes, handle<mimicQueue>(a[5]));
      break;
  }
  if (deviceToHost && r == MIMIC_SUCCESS) {
    const uint64_t logged = payload.u64();
    const uint64_t replayed = fnv1a64(dst, bytes);
    if (logged != replayed) {
      diverged("the data copied to the host differs (FNV-1a " + hex(logged) + " in the log, " +
               hex(replayed) + " in the replay)");
    }
  }
  return r;
}

mimicResult Replayer::issue(const LoggedCall& call, ByteReader& payload) {
  const auto& a = call.args;
  switch (call.id) {
    case CallId::MemAlloc: {
      void* p = nullptr;
      const mimicResult r = mimicMemAlloc(int(a[0]), a[1], outputIf(a[2], &p));
      const uint64_t logged = payload.u64();
      if (r == MIMIC_SUCCESS && deviceAddress(logged) != reinterpret_cast<uintptr_t>(p)) {
        diverged("the log has " + hex(logged) + " (" + hex(deviceAddress(logged)) +
                 " in the replay's address range), the replay got " + hex(uintptr_t(p)));
      }
      return r;
    }
    case CallId::MemFree:
      return mimicMemFree(devicePointer(a[0]));
    case CallId::HostAlloc: {
      void* p = nullptr;
      const mimicResult r = mimicHostAlloc(a[0], outputIf(a[1], &p));
      const uint64_t logged = payload.u64();
      if (r == MIMIC_SUCCESS && logged) pinned_[logged] = {a[0], static_cast<uint8_t*>(p)};
      return r;
    }
    case CallId::HostFree: {
      auto it = pinned_.find(a[0]);
      if (it == pinned_.end()) return mimicHostFree(reinterpret_cast<void*>(uintptr_t(a[0])));
      const mimicResult r = mimicHostFree(it->second.replayBase);
      if (r == MIMIC_SUCCESS) pinned_.erase(it);
      return r;
    }
    case CallId::Memcpy:
    case CallId::MemcpyAsync:
    case CallId::MemcpyPeerAsync:
    case CallId::MemsetAsync:
      return issueTransfer(call, payload);
    case CallId::QueueCreate: {
      mimicQueue q = nullptr;
      const mimicResult r =
          mimicQueueCreate(int(a[0]), unsigned(a[1]), int(a[2]), outputIf(a[3], &q));
      mapHandle(payload.u64(), q);
      return r;
    }
    case CallId::QueueDestroy:
      return mimicQueueDestroy(handle<mimicQueue>(a[0]));
    case CallId::QueueQuery:
      return mimicQueueQuery(handle<mimicQueue>(a[0]));
    case CallId::QueueSynchronize:
      return mimicQueueSynchronize(handle<mimicQueue>(a[0]));
    case CallId::QueueWaitEvent:
      return mimicQueueWaitEvent(handle<mimicQueue>(a[0]), handle<mimicEvent>(a[1]));
    case CallId::LaunchHostFunc:
      return mimicLaunchHostFunc(handle<mimicQueue>(a[0]), a[1] ? replayHostFunc : nullptr,
                                 nullptr);
    case CallId::LaunchHostTask:
      return issueHostTask(call);
    case CallId::EventCreate: {
      mimicEvent e = nullptr;
      const mimicResult r = mimicEventCreate(int(a[0]), unsigned(a[1]), outputIf(a[2], &e));
      mapHandle(payload.u64(), e);
      return r;
    }
    case CallId::EventDestroy:
      return mimicEventDestroy(handle<mimicEvent>(a[0]));
    case CallId::EventRecord:
      return mimicEventRecord(handle<mimicEvent>(a[0]), handle<mimicQueue>(a[1]));
    case CallId::EventQuery:
      return mimicEventQuery(handle<mimicEvent>(a[0]));
    case CallId::EventSynchronize:
      return mimicEventSynchronize(handle<mimicEvent>(a[0]));
    case CallId::EventElapsedTime: {
      float ms = 0;
      const mimicResult r = mimicEventElapsedTime(outputIf(a[0], &ms), handle<mimicEvent>(a[1]),
                                                  handle<mimicEvent>(a[2]));
      uint32_t bits = 0;
      if (r == MIMIC_SUCCESS) std::memcpy(&bits, &ms, sizeof bits);
      expectEqual("elapsed time bits", uint64_t(payload.u32()), uint64_t(bits));
      return r;
    }
    case CallId::EventGetTimestamp: {
      uint64_t ns = 0;
      const mimicResult r = mimicEventGetTimestamp(handle<mimicEvent>(a[0]), outputIf(a[1], &ns));
      expectEqual("timestamp (ns)", payload.u64(), ns);
      return r;
    }
    case CallId::ModuleLoad: {
      std::vector<uint8_t> image = payload.blob();
      // The log has no image when the driver rejected the call before reading it.
      if (image.empty()) image.resize(std::min<size_t>(a[2], kMaxScratchForFailedCall) + 1);
      mimicModule m = nullptr;
      const mimicResult r =
          mimicModuleLoad(int(a[0]), a[1] ? image.data() : nullptr, a[2], outputIf(a[3], &m));
      mapHandle(payload.u64(), m);
      return r;
    }
    case CallId::ModuleUnload:
      return mimicModuleUnload(handle<mimicModule>(a[0]));
    case CallId::ModuleGetFunction: {
      const std::string name = payload.text();
      mimicFunction f = nullptr;
      const mimicResult r = mimicModuleGetFunction(
          handle<mimicModule>(a[0]), a[1] ? name.c_str() : nullptr, outputIf(a[2], &f));
      mapHandle(payload.u64(), f);
      return r;
    }
    case CallId::LaunchKernel: {
      std::vector<uint8_t> args = payload.blob();
      // The log has the arguments of launches that succeeded: others never read them.
      if (args.empty() && a[4]) args.resize(std::min<size_t>(a[5], kMaxScratchForFailedCall) + 1);
      // Kernel arguments are 8-byte words; those that point into a device are moved.
      for (size_t at = 0; at + sizeof(uint64_t) <= args.size(); at += sizeof(uint64_t)) {
        uint64_t word = 0;
        std::memcpy(&word, &args[at], sizeof word);
        word = deviceAddress(word);
        std::memcpy(&args[at], &word, sizeof word);
      }
      return mimicLaunchKernel(handle<mimicFunction>(a[0]),
                               {uint32_t(a[1]), uint32_t(a[2]), uint32_t(a[3])},
                               a[4] ? args.data() : nullptr, a[5], handle<mimicQueue>(a[6]));
    }
    case CallId::QueueGetKernelCounters: {
      mimicKernelCounters counters{};
      const mimicResult r =
          mimicQueueGetKernelCounters(handle<mimicQueue>(a[0]), outputIf(a[1], &counters));
      expectEqual("kernel start (ns)", payload.u64(), r == MIMIC_SUCCESS ? counters.startNs : 0);
      expectEqual("kernel end (ns)", payload.u64(), r == MIMIC_SUCCESS ? counters.endNs : 0);
      return r;
    }
    case CallId::DeviceSynchronize:
      return mimicDeviceSynchronize(int(a[0]));
    case CallId::DeviceReset:
      return mimicDeviceReset(int(a[0]));
    case CallId::GetSimTime: {
      uint64_t ns = 0;
      const mimicResult r = mimicGetSimTime(outputIf(a[0], &ns));
      expectEqual("simulated time (ns)", payload.u64(), ns);
      return r;
    }
    case CallId::QueueBeginRange: {
      const std::string name = payload.text();
      return mimicQueueBeginRange(handle<mimicQueue>(a[0]), int(a[1]),
                                  a[2] ? name.c_str() : nullptr);
    }
    case CallId::QueueEndRange:
      return mimicQueueEndRange(handle<mimicQueue>(a[0]), int(a[1]));
    case CallId::DebugInjectFault:
      return mimicDebugInjectFault(handle<mimicQueue>(a[0]), mimicResult(int(a[1])));
    case CallId::DebugSetFaults: {
      const std::string spec = payload.text();
      return mimicDebugSetFaults(a[0] ? spec.c_str() : nullptr);
    }
    case CallId::End:
      break;
  }
  fail(MIMIC_ERROR_INVALID_CALL_LOG, "unknown function in the log");
}

}  // namespace mimic::driver

using namespace mimic::driver;

extern "C" mimicResult mimicDebugReplay(const char* logPath, size_t traceCapacity,
                                        mimicReplayResult* result) {
  const char* function = "mimicDebugReplay";
  if (!logPath) return recordFailure(function, MIMIC_ERROR_NULL_POINTER, "logPath is NULL");
  if (!result) return recordFailure(function, MIMIC_ERROR_NULL_POINTER, "result is NULL");
  *result = mimicReplayResult{};
  if (mimic::sim::Simulator::onSimulationThread()) {
    return recordFailure(function, MIMIC_ERROR_NOT_PERMITTED,
                         "called from a host function running on a queue");
  }
  try {
    Replayer replayer(readCallLog(logPath));
    replayer.run(traceCapacity, result);
  } catch (const ApiError& e) {
    return recordFailure(function, e.result(), e.message());
  } catch (const std::bad_alloc&) {
    return recordFailure(function, MIMIC_ERROR_HOST_OUT_OF_MEMORY, "host memory exhausted");
  }
  return MIMIC_SUCCESS;
}

extern "C" mimicResult mimicDebugReadCallLog(const char* logPath, mimicLoggedCall* calls,
                                             size_t capacity, size_t* count) {
  const char* function = "mimicDebugReadCallLog";
  if (!logPath) return recordFailure(function, MIMIC_ERROR_NULL_POINTER, "logPath is NULL");
  if (!count) return recordFailure(function, MIMIC_ERROR_NULL_POINTER, "count is NULL");
  if (!calls && capacity > 0) {
    return recordFailure(function, MIMIC_ERROR_NULL_POINTER, "calls is NULL and capacity > 0");
  }
  try {
    const CallLog log = readCallLog(logPath);
    *count = log.calls.size();
    for (size_t i = 0; i < log.calls.size() && i < capacity; ++i) {
      const LoggedCall& call = log.calls[i];
      calls[i] = {callName(call.id), call.result, call.correlation};
    }
  } catch (const ApiError& e) {
    return recordFailure(function, e.result(), e.message());
  } catch (const std::bad_alloc&) {
    return recordFailure(function, MIMIC_ERROR_HOST_OUT_OF_MEMORY, "host memory exhausted");
  }
  return MIMIC_SUCCESS;
}
