// Timing-only mode's host reads of device data: a copy from a device into host memory gets
// placeholder bytes (the driver's rule: zeros, or bytes a small host copy left there), and every
// such copy made by the backend is reported, with the op that made it, to a hook that
// torch_mimic's _timing_mode.py installs (it adds the Python line, counts and warns). Values
// the backend itself acts on (scalar reads, the CPU fallback's inputs, the sizes of
// data-dependent ops) are zeros. In full mode nothing here does any work.
#pragma once

#include <cstdint>

namespace mimic::torch_backend {

// What made a placeholder read: a plain copy to the host (.cpu(), .tolist(), printing), a
// scalar read (.item(), bool()) or the CPU fallback of an op, which computes on the zeros.
enum class PlaceholderReadKind : int { Copy = 0, Scalar = 1, Fallback = 2 };

// While alive, the placeholder reads of this thread are credited to `op` (a static or
// longer-lived string); scopes nest, the innermost wins.
class PlaceholderReadScope {
 public:
  PlaceholderReadScope(const char* op, PlaceholderReadKind kind);
  ~PlaceholderReadScope();
  PlaceholderReadScope(const PlaceholderReadScope&) = delete;
  PlaceholderReadScope& operator=(const PlaceholderReadScope&) = delete;

 private:
  const char* previousOp_;
  PlaceholderReadKind previousKind_;
};

// Whether the driver runs in timing-only mode (asked once: the mode is fixed at mimicInit).
bool timingOnlyMode();
// Called after the backend queued a copy of `bytes` from a device into host memory: in timing
// mode, unless torch_mimic declared the thread's reads control data (set_control_data_reads,
// which _distributed.py uses for DDP's parameter check), reports it to the hook (if installed) with
// the innermost scope's op. True when the reader must see zeros: a scalar read, the fallback's
// inputs, or a read the hook names as a data-dependent op's sync; a plain copy keeps the bytes the
// driver gave.
bool notePlaceholderRead(uint64_t bytes);

}  // namespace mimic::torch_backend
