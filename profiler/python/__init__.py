"""torch_mimic.profiler: where simulated time goes, and which host op launched which device work.

    with torch_mimic.profiler.profile() as prof:
        loss = model(x).sum(); loss.backward()
    print(prof.table())                      # per kernel: calls, time, FLOP/s, roofline
    print(prof.key_averages().table(sort_by="device_time_total", row_limit=10))
    prof.export_chrome_trace("trace.json")   # Perfetto / chrome://tracing, loads back too
    prof.export_timeline("trace.html")       # self-contained timeline

The driver records every command with its simulated start and end (driver/include/mimic/
mimic_trace.h); a RecordFunction callback gives each host op a correlation id that the driver
stamps on the device work the op queues. For training loops, pass a schedule as
torch.profiler does: ``profile(schedule=torch.profiler.schedule(wait=1, warmup=1, active=2),
on_trace_ready=handler)`` and call ``prof.step()`` after each iteration.
`python3 -m torch_mimic.profiler TRACE.json` prints the table and writes the timeline of a
saved trace. The trace format is in SCHEMA.md. Under torch.profiler, device activities appear
in its results too (_torch_bridge.py).
"""
import json
import os

import torch

from .. import _device

# The host-op correlation: torch.ops.mimic.profiler_* (profiler/src/host_ops.cpp).
torch.ops.load_library(os.path.join(os.path.dirname(__file__), "libmimic_profiler.so"))

from . import (_chrome, _driver, _files, _fused_names, _key_averages, _table,  # noqa: E402
               _timeline, _torch_bridge)

# Under MIMIC_SANITIZE, the driver's reports name the aten op behind each command.
if os.environ.get("MIMIC_SANITIZE"):
    torch.ops.mimic.sanitizer_name_ops()

DEFAULT_CAPACITY = 1 << 20  # records the driver holds between two reads


def _device_info(index):
    props = _device.get_device_properties(index)
    clock = props.clock_mhz * 1e6
    return {"index": index, "name": props.name,
            "peak_flops": 2.0 * props.mma_f32_macs_per_cycle * props.compute_units * clock,
            "peak_f16_flops": 2.0 * props.mma_f16_macs_per_cycle * props.compute_units * clock,
            "hbm_bytes_per_s": props.hbm_bandwidth_gbps * 1e9}


def _queue_labels(activities):
    """Labels for the queues that appear: the default queue of device d has id d + 1."""
    count = _device.device_count()
    labels = {}
    for act in activities:
        queue = act["queue"]
        if queue is None or queue in labels:
            continue
        default = 1 <= queue <= count
        labels[queue] = {"id": queue, "device": act["device"],
                         "label": "default queue" if default else f"queue {queue}"}
    return [labels[q] for q in sorted(labels)]


def _host_ops():
    table, names = torch.ops.mimic.profiler_take_host_ops()
    return [{"id": int(row[0]), "name": name, "start_ns": int(row[1]), "end_ns": int(row[2]),
             "thread": int(row[3]), "parent": int(row[4])}
            for row, name in zip(table.tolist(), names)]


class profile:
    """Traces the device work and host ops of its block (or of a schedule's active steps)."""

    def __init__(self, schedule=None, on_trace_ready=None, capacity=DEFAULT_CAPACITY):
        self.schedule = schedule
        self.on_trace_ready = on_trace_ready
        self.capacity = capacity
        self.step_num = 0
        self.trace = None
        self._recording = False
        self._steps = []  # host times (simulated ns) at which step() was called while recording

    # -- recording ------------------------------------------------------------------------------

    def _start(self):
        _device.synchronize()
        _driver.read()  # anything left over from before belongs to nobody
        torch.ops.mimic.profiler_take_host_ops()
        _driver.start(self.capacity)
        torch.ops.mimic.profiler_enable(True)
        _fused_names.start()
        self._steps = []
        self._recording = True

    def _stop(self, keep=True):
        torch.ops.mimic.profiler_enable(False)
        labels = _fused_names.stop()
        _device.synchronize()
        dropped = _driver.dropped()
        _driver.stop()
        activities = _driver.read()
        host_ops = _host_ops()
        self._recording = False
        if not keep:
            return
        _fused_names.rename(activities, host_ops, labels)
        self.trace = {"format": "mimic-trace", "version": 1,
                      "preset": _device.get_device_properties(0).preset,
                      "devices": [_device_info(d) for d in range(_device.device_count())],
                      "queues": _queue_labels(activities), "host_ops": host_ops,
                      "activities": activities, "dropped": dropped, "steps": self._steps}

    def _action(self):
        """What the schedule says for the current step, as torch.profiler's ProfilerAction."""
        if self.schedule is None:
            return None
        return self.schedule(self.step_num)

    def __enter__(self):
        action = self._action()
        if action is None or action.name in ("WARMUP", "RECORD", "RECORD_AND_SAVE"):
            self._start()
        return self

    def __exit__(self, *exc):
        if self._recording:
            action = self._action()
            # A schedule's trace is kept only if the block ends during its active steps.
            keep = exc[0] is None and (action is None or action.name != "WARMUP")
            self._stop(keep=keep)
            if keep and self.on_trace_ready and action is not None:
                self.on_trace_ready(self)
        return False

    def step(self):
        """Ends a training step (marked in the timeline): with a schedule, starts, discards or
        hands over the trace."""
        if self._recording:
            self._steps.append(_device.sim_time())
        if self.schedule is None:
            self.step_num += 1
            return
        before = self._action().name
        self.step_num += 1
        after = self._action().name
        if before == "RECORD_AND_SAVE" and self._recording:
            self._stop()
            if self.on_trace_ready:
                self.on_trace_ready(self)
        elif before == "WARMUP" and after in ("RECORD", "RECORD_AND_SAVE") and self._recording:
            self._stop(keep=False)  # warm-up steps are traced to settle, then dropped
        if after in ("WARMUP", "RECORD", "RECORD_AND_SAVE") and not self._recording:
            self._start()

    # -- results --------------------------------------------------------------------------------

    def _require_trace(self):
        if self.trace is None:
            raise RuntimeError("torch_mimic.profiler: no trace yet (the profiled block or the "
                               "schedule's active steps have not ended)")
        return self.trace

    def table(self, sort_by="total_ns", top=None):
        return _table.report(self._require_trace(), sort_by=sort_by, top=top)

    def key_averages(self):
        """Rows per host op and per kind of device work, as torch.profiler's key_averages():
        ``prof.key_averages().table(sort_by="device_time_total", row_limit=10)``. CPU columns
        are host time, Device columns simulated device time."""
        return _key_averages.key_averages(self._require_trace())

    def export_chrome_trace(self, path):
        _chrome.save_chrome(self._require_trace(), path)
        return path

    def export_timeline(self, path):
        _timeline.save_timeline(self._require_trace(), path)
        return path

    def save(self, path):
        trace = self._require_trace()
        text = json.dumps(trace, separators=(",", ":"))  # the C encoder
        _files.write_atomically(path, lambda out: out.write(text))
        return path


load_trace = _chrome.load_trace
_torch_bridge.install(profile)

__all__ = ["profile", "load_trace"]
