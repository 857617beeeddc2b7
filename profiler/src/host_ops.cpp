// Host-op correlation for torch_mimic.profiler: while enabled, a RecordFunction callback gives
// every op (and autograd node) a correlation id, hands it to the driver for the device work
// the op queues (mimicTraceSetCorrelationId, per thread), and keeps the op's name and its span
// on the host's simulated clock. torch.ops.mimic.profiler_* expose them to Python.
#include <Python.h>
#include <frameobject.h>

#include <ATen/ops/empty.h>
#include <ATen/record_function.h>
#include <torch/library.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "mimic/mimic_debug.h"
#include "mimic/mimic_trace.h"
#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {
namespace {

struct HostOp {
  int64_t id;
  int64_t startNs;
  int64_t endNs;
  int64_t thread;
  int64_t parent;  // the op of this thread that called it (its correlation id), 0: none
  std::string name;
};

// What a callback keeps between an op's start and its end.
struct OpContext : at::ObserverContext {
  size_t index = SIZE_MAX;  // in Recorder::ops, when the profiler keeps ops
  uint64_t previousCorrelation = 0;
};

struct Recorder {
  std::mutex mutex;
  std::vector<HostOp> ops;
  std::unordered_map<std::thread::id, int64_t> threads;
  std::atomic<int64_t> nextId{1};
  at::CallbackHandle handle = 0;
  std::atomic<bool> profiling{false};  // keep each op's span for the profiler
  std::atomic<bool> naming{false};     // tell the driver each op's name (the sanitizer's reports)
};

Recorder& recorder() {
  static Recorder* instance = new Recorder();  // outlives callbacks still running at exit
  return *instance;
}

int64_t hostNow() {
  uint64_t ns = 0;
  mimicGetSimTime(&ns);
  return int64_t(ns);
}

// torch_mimic's own primitives (torch.ops.mimic.*) run inside the aten op that the user called:
// the device work is credited to that op.
bool isBackendPrimitive(const at::RecordFunction& fn) {
  return std::strncmp(fn.name(), "mimic::", 7) == 0;
}

// The Python line that called the op: the innermost frame outside torch's own package (and
// torch_mimic's), e.g. "model.py:12". Empty on threads that never ran Python (autograd's).
std::string pythonCaller() {
  if (!Py_IsInitialized() || PyGILState_GetThisThreadState() == nullptr) return "";
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string where;
  PyFrameObject* frame = PyEval_GetFrame();
  Py_XINCREF(frame);
  while (frame && where.empty()) {
    PyCodeObject* code = PyFrame_GetCode(frame);
    const char* file = PyUnicode_AsUTF8(code->co_filename);
    if (file && !std::strstr(file, "/torch/") && !std::strstr(file, "/torch_mimic/")) {
      const char* base = std::strrchr(file, '/');
      where =
          std::string(base ? base + 1 : file) + ":" + std::to_string(PyFrame_GetLineNumber(frame));
    }
    Py_DECREF(code);
    PyFrameObject* back = PyFrame_GetBack(frame);
    Py_DECREF(frame);
    frame = back;
  }
  Py_XDECREF(frame);
  PyErr_Clear();
  PyGILState_Release(gil);
  return where;
}

// The sanitizer's name for an op: "aten::mul (model.py:12)".
std::string sanitizerName(const at::RecordFunction& fn) {
  const std::string caller = pythonCaller();
  return caller.empty() ? fn.name() : std::string(fn.name()) + " (" + caller + ")";
}

// Ops running on this thread: a backend primitive called straight from Python (say
// torch_mimic.caching_allocator_alloc) is named for the sanitizer, as no aten op is around it.
thread_local int opsRunning = 0;

std::unique_ptr<at::ObserverContext> onStart(const at::RecordFunction& fn) {
  Recorder& r = recorder();
  const bool primitive = isBackendPrimitive(fn);
  if (primitive && (opsRunning > 0 || !r.naming)) return nullptr;
  auto context = std::make_unique<OpContext>();
  ++opsRunning;
  const int64_t id = r.nextId++;
  mimicTraceSetCorrelationId(uint64_t(id), &context->previousCorrelation);
  if (r.naming) mimicDebugNameCorrelation(uint64_t(id), sanitizerName(fn).c_str());
  if (!r.profiling || primitive) return context;
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto thread = r.threads.emplace(std::this_thread::get_id(), int64_t(r.threads.size()));
  context->index = r.ops.size();
  r.ops.push_back(HostOp{id, hostNow(), -1, thread.first->second,
                         int64_t(context->previousCorrelation), fn.name()});
  return context;
}

void onEnd(const at::RecordFunction&, at::ObserverContext* base) {
  auto* context = static_cast<OpContext*>(base);
  if (!context) return;
  --opsRunning;
  mimicTraceSetCorrelationId(context->previousCorrelation, nullptr);
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (context->index < r.ops.size()) r.ops[context->index].endNs = hostNow();
}

// The callback runs while the profiler or the sanitizer's naming wants it.
void updateCallback() {
  Recorder& r = recorder();
  const bool on = r.profiling || r.naming;
  if (on && r.handle == 0) {
    r.handle = at::addGlobalCallback(
        at::RecordFunctionCallback(onStart, onEnd)
            .needsInputs(false)
            .scopes({at::RecordScope::FUNCTION, at::RecordScope::BACKWARD_FUNCTION,
                     at::RecordScope::USER_SCOPE}));
  } else if (!on && r.handle != 0) {
    at::removeCallback(r.handle);
    r.handle = 0;
  }
}

void enable(bool on) {
  recorder().profiling = on;
  updateCallback();
}

// The driver starts now, so that the first op's allocations are named too.
void nameOpsForSanitizer() {
  ensureInitialized();
  recorder().naming = true;
  updateCallback();
}

// The finished host ops since the last call: ids, spans, threads and parents as an N x 5
// tensor, and their names. Ops still running stay for the next call.
std::tuple<at::Tensor, std::vector<std::string>> takeHostOps() {
  Recorder& r = recorder();
  std::vector<HostOp> done;
  {
    std::lock_guard<std::mutex> lock(r.mutex);
    std::vector<HostOp> running;
    for (HostOp& op : r.ops) (op.endNs >= 0 ? done : running).push_back(std::move(op));
    r.ops = std::move(running);
  }
  at::Tensor table = at::empty({int64_t(done.size()), 5}, at::kLong);
  std::vector<std::string> names;
  int64_t* row = table.data_ptr<int64_t>();
  for (const HostOp& op : done) {
    *row++ = op.id;
    *row++ = op.startNs;
    *row++ = op.endNs;
    *row++ = op.thread;
    *row++ = op.parent;
    names.push_back(op.name);
  }
  return {table, names};
}

int64_t streamQueueId(int64_t packed) {
  const c10::Stream stream = c10::Stream::unpack(static_cast<uint64_t>(packed));
  uint64_t id = 0;
  MIMIC_TORCH_CHECK(mimicQueueGetId(queueOf(stream), int(stream.device_index()), &id));
  return int64_t(id);
}

}  // namespace

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("profiler_enable(bool on) -> ()", enable);
  m.def("sanitizer_name_ops() -> ()", nameOpsForSanitizer);
  m.def("profiler_take_host_ops() -> (Tensor, str[])", takeHostOps);
  m.def("stream_queue_id(int stream) -> int", streamQueueId);
}

}  // namespace mimic::torch_backend
