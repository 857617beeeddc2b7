"""Device activity in torch.profiler's results: while a torch.profiler session traces, mimic
traces too, and hands every device activity to the session before it stops (PyTorch's
reportBackendEventToActiveKinetoProfiler, called on the user's thread, as it requires). Times
are placed on the session's wall clock at the start of tracing plus the simulated offset, so
durations are simulated durations. torch.profiler has no hook for this: the bridge wraps its
start_trace and stop_trace."""
import time

import torch
from torch.profiler import profiler as _torch_profiler


def _label(act):
    if act["kind"] == "memcpy":
        return f"mimic memcpy {act['copy_kind']}"
    if act["kind"] in ("kernel", "range"):
        return act["name"]
    return f"mimic {act['kind']}"


def _report(trace, wall_start_us, sim_start_ns):
    for act in trace["activities"]:
        if act["kind"] in ("alloc", "free", "synchronize", "event_record", "event_wait"):
            continue
        start = wall_start_us + (act["start_ns"] - sim_start_ns) // 1000
        end = wall_start_us + (act["end_ns"] - sim_start_ns) // 1000
        torch.ops.mimic.profiler_report_to_torch(start, max(end, start), _label(act))


def install(profile_class):
    kineto = _torch_profiler._KinetoProfile
    if getattr(kineto, "_mimic_bridge", False):
        return
    original_start, original_stop = kineto.start_trace, kineto.stop_trace

    def start_trace(self):
        original_start(self)
        self._mimic_profile = profile_class()
        self._mimic_profile.__enter__()
        self._mimic_origin = (int(time.time() * 1e6), torch.ops.mimic.sim_time())

    def stop_trace(self):
        mimic = getattr(self, "_mimic_profile", None)
        if mimic is not None:
            self._mimic_profile = None
            mimic.__exit__(None, None, None)
            _report(mimic.trace, *self._mimic_origin)
        original_stop(self)

    kineto.start_trace, kineto.stop_trace = start_trace, stop_trace
    kineto._mimic_bridge = True
