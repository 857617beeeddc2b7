#include "torch_backend/src/placeholder_reads.h"

#include <torch/library.h>

#include <atomic>
#include <string>
#include <tuple>

#include "torch_backend/src/device_runtime.h"

namespace mimic::torch_backend {
namespace {

// The hook's C signature, so that Python can provide it through ctypes: op name, kind, bytes;
// it returns nonzero when the read must give zeros.
using PlaceholderReadHook = int (*)(const char*, int, uint64_t);

std::atomic<PlaceholderReadHook> hook{nullptr};

thread_local const char* scopeOp = "aten::_copy_from";
thread_local PlaceholderReadKind scopeKind = PlaceholderReadKind::Copy;
// The caller vouches that this thread's host reads are of control data, which timing mode moves
// (driver/src/timing_mode_transfers.h): they get the driver's bytes and are no placeholders.
thread_local bool controlDataReads = false;

// -1: not asked yet; else the mimicSimulationMode.
std::atomic<int> cachedMode{-1};

std::string simulationModeName() {
  return timingOnlyMode() ? "timing" : "full";
}

// The address of a ctypes function (0 removes the hook, as the interpreter's exit does).
void setHook(int64_t address) {
  hook = reinterpret_cast<PlaceholderReadHook>(static_cast<intptr_t>(address));
}

// Returns the previous setting, so that callers can nest.
bool setControlDataReads(bool on) {
  const bool previous = controlDataReads;
  controlDataReads = on;
  return previous;
}

std::tuple<int64_t, int64_t> placeholderCopies() {
  ensureInitialized();
  uint64_t copies = 0, bytes = 0;
  MIMIC_TORCH_CHECK(mimicGetPlaceholderCopies(&copies, &bytes));
  return {int64_t(copies), int64_t(bytes)};
}

}  // namespace

PlaceholderReadScope::PlaceholderReadScope(const char* op, PlaceholderReadKind kind)
    : previousOp_(scopeOp), previousKind_(scopeKind) {
  scopeOp = op;
  scopeKind = kind;
}

PlaceholderReadScope::~PlaceholderReadScope() {
  scopeOp = previousOp_;
  scopeKind = previousKind_;
}

bool timingOnlyMode() {
  int mode = cachedMode.load(std::memory_order_relaxed);
  if (mode < 0) {
    ensureInitialized();
    mimicSimulationMode value = MIMIC_SIMULATION_FULL;
    MIMIC_TORCH_CHECK(mimicGetSimulationMode(&value));
    mode = int(value);
    cachedMode = mode;
  }
  return mode == MIMIC_SIMULATION_TIMING;
}

bool notePlaceholderRead(uint64_t bytes) {
  if (!timingOnlyMode() || controlDataReads) return false;
  const bool zeros = scopeKind != PlaceholderReadKind::Copy;
  PlaceholderReadHook report = hook.load();
  return (report && report(scopeOp, int(scopeKind), bytes) != 0) || zeros;
}

TORCH_LIBRARY_FRAGMENT(mimic, m) {
  m.def("simulation_mode() -> str", simulationModeName);
  m.def("set_placeholder_read_hook(int address) -> ()", setHook);
  m.def("placeholder_copies() -> (int, int)", placeholderCopies);
  m.def("set_control_data_reads(bool on) -> bool", setControlDataReads);
}

}  // namespace mimic::torch_backend
