#include "call_recorder.h"

#include <atomic>
#include <cstring>

#include "runtime.h"
#include "sim/device.h"
#include "tracer.h"

namespace mimic::driver {
namespace {

// Set once by mimicInit and never freed: host tasks may log their end after exit begins.
std::atomic<CallLogWriter*> activeLog{nullptr};
std::mutex callOrderMutex;

struct WrappedTask {
  uint64_t (*fn)(void*, uint64_t);
  void* userData;
  uint64_t launchCall;
};

uint64_t runWrappedTask(void* data, uint64_t startNs) {
  auto* task = static_cast<WrappedTask*>(data);
  const uint64_t endNs = task->fn(task->userData, startNs);
  activeLog.load()->appendHostTaskEnd({task->launchCall, startNs, endNs});
  delete task;
  return endNs;
}

template <typename T>
T* pointer(uint64_t value) {
  return reinterpret_cast<T*>(static_cast<uintptr_t>(value));
}

// As the driver sees it: host memory is pinned only if all `bytes` lie in one pinned block.
PointerKind classify(Runtime& rt, uint64_t value, uint64_t bytes) {
  if (value == 0) return PointerKind::Null;
  const void* p = pointer<const void>(value);
  if (rt.deviceOfAddress(p) >= 0) return PointerKind::Device;
  void* base = nullptr;
  size_t size = 0;
  return rt.findPinned(p, bytes, &base, &size) ? PointerKind::Pinned : PointerKind::Pageable;
}

bool onHost(PointerKind kind) {
  return kind == PointerKind::Pinned || kind == PointerKind::Pageable;
}

// Copies and fills: the kind of each pointer; after a successful call, the bytes a
// host-to-device copy read and the hash of those a device-to-host copy wrote.
void describeTransfer(Runtime& rt, const uint64_t* args, size_t dst, size_t src, size_t bytes,
                      mimicResult result, ByteWriter& out) {
  const PointerKind to = classify(rt, args[dst], args[bytes]);
  const PointerKind from = src == dst ? PointerKind::Null : classify(rt, args[src], args[bytes]);
  out.u8(uint8_t(to));
  out.u8(uint8_t(from));
  if (result != MIMIC_SUCCESS || src == dst) return;
  if (from == PointerKind::Device && onHost(to)) {
    out.u64(fnv1a64(pointer<const void>(args[dst]), args[bytes]));
  } else if (onHost(from) && to == PointerKind::Device) {
    out.blob(pointer<const void>(args[src]), args[bytes]);
  }
}

template <typename T>
void output(const uint64_t* args, size_t index, mimicResult result, ByteWriter& out) {
  const bool written = result == MIMIC_SUCCESS && args[index] != 0;
  out.u64(written ? uint64_t(*pointer<const T>(args[index])) : 0);
}

void text(uint64_t value, ByteWriter& out) {
  out.text(value ? pointer<const char>(value) : "");
}

// What the replay needs beyond the arguments; replay.cpp reads it in the same order.
void describe(Runtime& rt, CallId id, const uint64_t* a, mimicResult result, ByteWriter& out) {
  switch (id) {
    case CallId::MemAlloc:
      return output<uintptr_t>(a, 2, result, out);
    case CallId::HostAlloc:
      return output<uintptr_t>(a, 1, result, out);
    case CallId::Memcpy:
    case CallId::MemcpyAsync:
      return describeTransfer(rt, a, 0, 1, 2, result, out);
    case CallId::MemcpyPeerAsync:
      return describeTransfer(rt, a, 0, 2, 4, result, out);
    case CallId::MemsetAsync:
      return describeTransfer(rt, a, 0, 0, 2, result, out);
    case CallId::QueueCreate:
      return output<uintptr_t>(a, 3, result, out);
    case CallId::EventCreate:
      return output<uintptr_t>(a, 2, result, out);
    case CallId::EventElapsedTime: {
      uint32_t bits = 0;
      if (result == MIMIC_SUCCESS) std::memcpy(&bits, pointer<const float>(a[0]), sizeof bits);
      return out.u32(bits);
    }
    case CallId::EventGetTimestamp:
      return output<uint64_t>(a, 1, result, out);
    case CallId::GetSimTime:
      return output<uint64_t>(a, 0, result, out);
    case CallId::ModuleLoad: {
      // The image as the driver read it: also when it rejected it, so the replay fails alike.
      const bool read = result == MIMIC_SUCCESS || result == MIMIC_ERROR_INVALID_IMAGE ||
                        result == MIMIC_ERROR_UNSUPPORTED_IMAGE_VERSION;
      out.blob(pointer<const void>(a[1]), read ? a[2] : 0);
      return output<uintptr_t>(a, 3, result, out);
    }
    case CallId::ModuleGetFunction:
      text(a[1], out);
      return output<uintptr_t>(a, 2, result, out);
    case CallId::LaunchKernel:
      return out.blob(pointer<const void>(a[4]), result == MIMIC_SUCCESS && a[4] ? a[5] : 0);
    case CallId::QueueGetKernelCounters: {
      const auto* counters = pointer<const mimicKernelCounters>(a[1]);
      out.u64(result == MIMIC_SUCCESS ? counters->startNs : 0);
      return out.u64(result == MIMIC_SUCCESS ? counters->endNs : 0);
    }
    case CallId::QueueBeginRange:
      return text(a[2], out);
    case CallId::DebugSetFaults:
      return text(a[0], out);
    default:
      return;  // the arguments say it all
  }
}

}  // namespace

RecordedCall::RecordedCall(CallId id, std::initializer_list<LogArg> args) : id_(id) {
  // A host function calling mimic is refused (NOT_PERMITTED) and must not wait for the lock
  // that the host thread waiting for it holds.
  if (!activeLog.load(std::memory_order_acquire) || sim::Simulator::onSimulationThread()) return;
  lock_ = std::unique_lock<std::mutex>(callOrderMutex);
  active_ = true;
  for (const LogArg& arg : args) {
    if (argCount_ < kMaxArgs) args_[argCount_++] = arg.value;
  }
  correlation_ = Tracer::correlation();
}

RecordedCall::~RecordedCall() {
  if (!active_) return;
  if (result != MIMIC_SUCCESS) delete static_cast<WrappedTask*>(wrappedTask_);
  try {
    Runtime* rt = Runtime::instance();
    if (!rt) return;
    LoggedCall call{id_, result, correlation_, {args_, args_ + argCount_}, {}};
    ByteWriter payload;
    describe(*rt, id_, args_, result, payload);
    call.payload = std::move(payload.bytes());
    activeLog.load()->appendCall(call);
  } catch (const std::bad_alloc&) {
    // The log misses this call; the replay reports where it diverges.
  }
}

void RecordedCall::wrapHostTask(uint64_t (**fn)(void*, uint64_t), void** userData) {
  if (!active_ || !*fn) return;
  // This call's number: appends happen in the order of callOrderMutex, which it holds.
  const uint64_t number = activeLog.load()->callsAppended() + 1;
  auto* task = new WrappedTask{*fn, *userData, number};
  wrappedTask_ = task;
  *fn = runWrappedTask;
  *userData = task;
}

std::unique_ptr<CallLogWriter> openCallLog(const std::string& path, const CallLogHeader& header) {
  if (path.empty()) return nullptr;
  return std::make_unique<CallLogWriter>(path, header);
}

void startRecording(std::unique_ptr<CallLogWriter> log) {
  Runtime* rt = Runtime::instance();
  if (!log || !rt) return;
  std::vector<LoggedDeviceRange> ranges;
  for (int d = 0; d < rt->numDevices(); ++d) {
    const sim::DeviceMemory& memory = rt->sim().device(d).memory();
    ranges.push_back({memory.base(), memory.capacity()});
  }
  log->appendDeviceRanges(ranges);
  activeLog.store(log.release(), std::memory_order_release);
}

}  // namespace mimic::driver
