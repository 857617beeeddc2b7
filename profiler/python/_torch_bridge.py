"""Device work in torch.profiler's results, as device work: while a torch.profiler session
traces, mimic traces too, and when the session stops, every device activity becomes a device
event of the session (a FunctionEvent of a device type, as PyTorch makes of CUDA kernels) and a
kernel of the host op that launched it. So key_averages().table() shows simulated device time
in its device columns (PyTorch 1.13 names them CUDA: it knows no other device there) and none
in the CPU columns, and export_chrome_trace() puts the device work on a process of its own per
device ("mimic device 0 (name)", one track per queue) with arrows from the launching ops.

Times: device events start at the session's start plus the simulated offset, so their
durations are simulated durations; host ops keep torch.profiler's wall-clock times. A host op
is matched to mimic's record of it by name, in call order (both come from the same
RecordFunction calls). torch.profiler has no hook for this: the bridge wraps its start_trace,
stop_trace and export_chrome_trace.
"""
import json

import torch
from torch.autograd import DeviceType
from torch.autograd.profiler_util import FunctionEvent
from torch.profiler import profiler as _torch_profiler

from . import _chrome
from ._files import write_atomically
from ._key_averages import DEVICE_KINDS, device_label

# Ids of the device events, apart from the host ops' ids (correlation ids, which are small).
FIRST_DEVICE_EVENT_ID = 1 << 40
# How far ahead in torch's ops the matching looks for mimic's next op (torch records ops that
# mimic does not, e.g. the backend's own mimic:: primitives).
MATCH_WINDOW = 64


def _match_ops(torch_events, host_ops):
    """{mimic op id: torch FunctionEvent}, pairing ops of the same name in call order."""
    cpu = sorted((e for e in torch_events if e.device_type == DeviceType.CPU),
                 key=lambda e: (e.time_range.start, e.id))
    matched, position = {}, 0
    for op in sorted(host_ops, key=lambda o: o["id"]):
        for index in range(position, min(position + MATCH_WINDOW, len(cpu))):
            if cpu[index].name == op["name"]:
                matched[op["id"]] = cpu[index]
                position = index + 1
                break
    return matched


def _attach(function_events, trace, sim_origin_ns):
    """Adds the trace's device work to torch's events; returns [(activity, kernel)] for the
    Chrome export (kernel: the launching op's Kernel entry, or None)."""
    launched_by = _match_ops(function_events, trace["host_ops"])
    attached = []
    for number, act in enumerate(a for a in trace["activities"] if a["kind"] in DEVICE_KINDS):
        label = device_label(act)
        start_us = (act["start_ns"] - sim_origin_ns) / 1000.0
        end_us = (act["end_ns"] - sim_origin_ns) / 1000.0
        # trace_name None: torch's own Chrome writer (CPU tracks only) leaves it to ours.
        function_events.append(FunctionEvent(
            id=FIRST_DEVICE_EVENT_ID + number, name=label, thread=act.get("queue") or 0,
            start_us=start_us, end_us=end_us, device_type=DeviceType.CUDA,
            device_index=act["device"], input_shapes=[], stack=[], trace_name=None))
        op = launched_by.get(act.get("correlation"))
        kernel = None
        if op is not None:
            op.append_kernel(label, act["device"], end_us - start_us)
            kernel = op.kernels[-1]
        attached.append((act, kernel))
    return attached


def _device_events(trace, attached, function_events, sim_origin_ns):
    """Trace events for torch's Chrome export: per device a process and per queue a track,
    with the "f" ends of the arrows torch's writer starts ("s") at each kernel of an op."""
    used = {_chrome.device_pid(act["device"]) for act, _ in attached}
    events = [e for e in _chrome.to_chrome(trace)["traceEvents"]
              if e["ph"] == "M" and e["pid"] in used]
    flow_ids, next_id = {}, 0
    for evt in function_events:  # the order in which torch's writer numbers its arrows
        if evt.trace_name is None:
            continue
        for kernel in evt.kernels:
            flow_ids[id(kernel)] = next_id
            next_id += 1
    for act, kernel in attached:
        pid, tid = _chrome.device_pid(act["device"]), _chrome.queue_tid(act.get("queue"))
        ts = (act["start_ns"] - sim_origin_ns) / 1000.0
        events.append({"ph": "X", "cat": act["kind"], "name": device_label(act), "pid": pid,
                       "tid": tid, "ts": ts, "dur": (act["end_ns"] - act["start_ns"]) / 1000.0,
                       "args": {"device": act["device"], "simulated": True}})
        if kernel is not None and id(kernel) in flow_ids:
            events.append({"ph": "f", "bp": "e", "cat": "cpu_to_cuda", "id": flow_ids[id(kernel)],
                           "name": device_label(act), "pid": pid, "tid": tid, "ts": ts})
    return events


def install(profile_class):
    kineto = _torch_profiler._KinetoProfile
    if getattr(kineto, "_mimic_bridge", False):
        return
    original_start, original_stop = kineto.start_trace, kineto.stop_trace
    original_export = kineto.export_chrome_trace

    def start_trace(self):
        original_start(self)
        self._mimic_profile = profile_class()
        self._mimic_profile.__enter__()
        self._mimic_origin_ns = torch.ops.mimic.sim_time()

    def stop_trace(self):
        mimic = getattr(self, "_mimic_profile", None)
        if mimic is not None:
            self._mimic_profile = None
            mimic.__exit__(None, None, None)
        original_stop(self)
        if mimic is not None and mimic.trace is not None:
            events = self.profiler.function_events
            self._mimic_device = (mimic.trace,
                                  _attach(events, mimic.trace, self._mimic_origin_ns))

    def export_chrome_trace(self, path):
        result = original_export(self, path)
        device = getattr(self, "_mimic_device", None)
        if device is None:
            return result
        trace, attached = device
        with open(path) as src:
            data = json.load(src)
        extra = _device_events(trace, attached, self.profiler.function_events,
                               self._mimic_origin_ns)
        if isinstance(data, list):  # torch's own writer: a bare list of events
            data.extend(extra)
        else:
            data.setdefault("traceEvents", []).extend(extra)
        text = json.dumps(data, separators=(",", ":"))
        write_atomically(path, lambda out: out.write(text))
        return result

    kineto.start_trace, kineto.stop_trace = start_trace, stop_trace
    kineto.export_chrome_trace = export_chrome_trace
    kineto._mimic_bridge = True
