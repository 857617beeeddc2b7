"""Chrome / Perfetto trace-event export of a mimic trace (see SCHEMA.md), and loading it back.

The exported JSON opens in chrome://tracing and ui.perfetto.dev. Layout:
  * pid 0 "host": one track per host thread, host ops as complete ("X") events;
  * pid 1 + device index: one track per device queue (tid = queue id + 1), plus tid 0 for the
    device-level records that have no queue (alloc, free, device synchronize);
  * flow arrows ("s" -> "f") from each host op to the device work it launched (same correlation);
  * counter tracks ("C") per device: memory allocated and HBM bandwidth in use.
The original trace dict is embedded under "mimic" so that `load_trace` gives it back unchanged.

Pure Python on purpose (no torch import): it must run on a machine that only has the JSON.
"""
import json

from ._files import write_atomically
from ._table import kernel_hbm_bytes

FORMAT = "mimic-trace"
VERSION = 1
HOST_PID = 0
REQUIRED_KEYS = ("format", "version", "devices", "queues", "host_ops", "activities")


def _us(ns):
    """Trace-event timestamps are microseconds; keep the ns precision as a float."""
    return ns / 1000.0


def device_pid(index):
    return 1 + index


def queue_tid(queue_id):
    # tid 0 is reserved for the queue-less device records, so queue ids are shifted by one.
    return 0 if queue_id is None else queue_id + 1


def _meta(name, pid, tid, value, key="name"):
    return {"ph": "M", "name": name, "pid": pid, "tid": tid, "args": {key: value}}


def _metadata_events(trace):
    events = [_meta("process_name", HOST_PID, 0, "host"),
              _meta("process_sort_index", HOST_PID, 0, -1, key="sort_index")]
    for thread in sorted({op.get("thread", 0) for op in trace["host_ops"]}):
        events.append(_meta("thread_name", HOST_PID, thread, "host thread %d" % thread))
    for dev in trace["devices"]:
        pid = device_pid(dev["index"])
        events.append(_meta("process_name", pid, 0,
                            "mimic device %d (%s)" % (dev["index"], dev.get("name", "?"))))
        events.append(_meta("process_sort_index", pid, 0, dev["index"], key="sort_index"))
        events.append(_meta("thread_name", pid, 0, "device (alloc/free/sync)"))
    for queue in trace["queues"]:
        pid, tid = device_pid(queue["device"]), queue_tid(queue["id"])
        events.append(_meta("thread_name", pid, tid, queue["label"]))
        events.append(_meta("thread_sort_index", pid, tid, tid, key="sort_index"))
    return events


def _activity_args(act):
    args = {"kind": act["kind"], "correlation": act.get("correlation", 0)}
    for key in ("bytes", "copy_kind", "pinned", "grid", "counters", "op_kernel"):
        if act.get(key) is not None:
            args[key] = act[key]
    return args


def _complete_events(trace):
    # The exporter's hot loops: one dict per record, timestamps divided inline (no calls).
    events = []
    append = events.append
    for op in trace["host_ops"]:
        start = op["start_ns"]
        append({"ph": "X", "cat": "host_op", "name": op["name"], "pid": HOST_PID,
                "tid": op.get("thread", 0), "ts": start / 1000.0,
                "dur": (op["end_ns"] - start) / 1000.0, "args": {"correlation": op["id"]}})
    for act in trace["activities"]:
        start = act["start_ns"]
        append({"ph": "X", "cat": act["kind"], "name": act["name"],
                "pid": device_pid(act["device"]), "tid": queue_tid(act.get("queue")),
                "ts": start / 1000.0, "dur": (act["end_ns"] - start) / 1000.0,
                "args": _activity_args(act)})
    return events


def _flow_events(trace):
    """One arrow per (host op, device activity) pair sharing a correlation id."""
    ops = {op["id"]: op for op in trace["host_ops"]}
    events = []
    append = events.append
    flow_id = 0
    for act in trace["activities"]:
        correlation = act.get("correlation", 0)
        op = ops.get(correlation)
        if op is None or correlation == 0:
            continue
        flow_id += 1  # unique per arrow: one host op may launch several activities
        name = op["name"]
        append({"cat": "launch", "name": name, "id": flow_id, "ph": "s", "pid": HOST_PID,
                "tid": op.get("thread", 0), "ts": op["start_ns"] / 1000.0})
        # "bp": "e" binds the arrow head to the enclosing slice (the activity itself).
        append({"cat": "launch", "name": name, "id": flow_id, "ph": "f", "bp": "e",
                "pid": device_pid(act["device"]), "tid": queue_tid(act.get("queue")),
                "ts": act["start_ns"] / 1000.0})
    return events


def memory_samples(trace, device):
    """[(ns, allocated bytes)] after each alloc/free on `device`, in time order."""
    records = [a for a in trace["activities"]
               if a["device"] == device and a["kind"] in ("alloc", "free")]
    records.sort(key=lambda a: a["start_ns"])  # stable: equal times keep record order
    samples, allocated = [], 0
    for rec in records:
        nbytes = rec.get("bytes") or 0
        allocated += nbytes if rec["kind"] == "alloc" else -nbytes
        samples.append((rec["start_ns"], allocated))
    return samples


def _hbm_bytes(act):
    if act["kind"] == "kernel":
        counters = act.get("counters") or {}
        return kernel_hbm_bytes(counters)
    if act["kind"] == "memcpy" and act.get("copy_kind") == "HtoH":
        return 0  # host to host never touches the device's HBM
    if act["kind"] in ("memcpy", "memset"):
        return act.get("bytes") or 0
    return 0


def bandwidth_samples(trace, device):
    """[(ns, GB/s)]: HBM bandwidth in use on `device` as a step function.

    Each kernel / memcpy / memset contributes bytes/duration over its interval; bytes per ns is
    exactly GB/s. A value holds from its timestamp until the next sample. One sweep over the
    interval ends in time order; each sample sums the intervals then open, in record order (so
    that the sum, and its rounding, does not depend on how they were reached).
    """
    changes = []  # (ns, 0 for an end / 1 for a start, record order, rate)
    for order, act in enumerate(trace["activities"]):
        duration = act["end_ns"] - act["start_ns"]
        nbytes = _hbm_bytes(act)
        if act["device"] == device and duration > 0 and nbytes > 0:
            changes.append((act["start_ns"], 1, order, nbytes / duration))
            changes.append((act["end_ns"], 0, order, 0.0))
    changes.sort()
    samples, open_rates, i = [], {}, 0
    while i < len(changes):
        t = changes[i][0]
        while i < len(changes) and changes[i][0] == t:
            _, starts, order, rate = changes[i]
            if starts:
                open_rates[order] = rate
            else:
                del open_rates[order]
            i += 1
        samples.append((t, sum(open_rates[order] for order in sorted(open_rates))))
    return samples


def _counter_events(trace):
    events = []
    for dev in trace["devices"]:
        pid = device_pid(dev["index"])
        for ns, allocated in memory_samples(trace, dev["index"]):
            events.append({"ph": "C", "name": "memory allocated", "pid": pid, "ts": _us(ns),
                           "args": {"bytes": allocated}})
        for ns, gbps in bandwidth_samples(trace, dev["index"]):
            events.append({"ph": "C", "name": "HBM bandwidth", "pid": pid, "ts": _us(ns),
                           "args": {"GB/s": gbps}})
    return events


def to_chrome(trace):
    """The trace-event dict for `trace` (a mimic trace dict, see SCHEMA.md)."""
    events = (_metadata_events(trace) + _complete_events(trace) + _flow_events(trace)
              + _counter_events(trace))
    return {"traceEvents": events, "displayTimeUnit": "ns", "mimic": trace}


def save_chrome(trace, path):
    # json.dumps runs the C encoder; json.dump to a file walks the tree in Python (4x slower).
    text = json.dumps(to_chrome(trace), separators=(",", ":"), check_circular=False)
    write_atomically(path, lambda out: out.write(text))


def _check_trace(trace, path):
    if not isinstance(trace, dict):
        raise ValueError("%s: not a mimic trace (top level is not a JSON object)" % path)
    missing = [key for key in REQUIRED_KEYS if key not in trace]
    if trace.get("format") != FORMAT and "format" in trace:
        raise ValueError("%s: format is %r, expected %r" % (path, trace["format"], FORMAT))
    if missing:
        raise ValueError("%s: not a mimic trace (missing keys: %s)" % (path, ", ".join(missing)))
    if trace["version"] != VERSION:
        raise ValueError("%s: mimic trace version %r is not supported (expected %d)"
                         % (path, trace["version"], VERSION))
    for key in ("devices", "queues", "host_ops", "activities"):
        if not isinstance(trace[key], list):
            raise ValueError("%s: %r must be a list" % (path, key))
    return trace


def load_trace(path):
    """The mimic trace dict from `path`: a `save_chrome` file or a raw mimic trace JSON.

    Raises OSError if the file cannot be read and ValueError (naming the file) if it is not one
    of the two formats.
    """
    with open(path) as src:
        try:
            data = json.load(src)
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError("%s: not valid JSON (%s)" % (path, error)) from None
    if isinstance(data, dict) and "traceEvents" in data:
        if "mimic" not in data:
            raise ValueError("%s: a Chrome trace without an embedded mimic trace" % path)
        data = data["mimic"]
    return _check_trace(data, path)
