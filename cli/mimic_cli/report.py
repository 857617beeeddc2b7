"""The report printed after a script ran on the simulated devices (`mimic run`, `mimic demo`).

Plain Python on plain data: `summarize` runs in the child, on the profiler's trace, and its
result travels as JSON; `format_run_report` runs in the parent, which never imports torch.
"""
import json
import os

from .common import format_ns

COPY_KINDS = ("memcpy", "memset")
COLLECTIVE_KINDS = ("range", "host_task")  # the c10d backend and the communicator record these
BUSY_KINDS = ("kernel", "memcpy", "memset", "host_func", "host_task", "range")


def _union_ns(intervals):
    covered, reach = 0, None
    for start, end in sorted(intervals):
        if reach is None or start > reach:
            covered, reach = covered + end - start, end
        elif end > reach:
            covered, reach = covered + end - reach, end
    return covered


def breakdown(trace):
    """Where the traced span went: kernel, copy and collective time (summed over queues) and,
    per device, the time no queue of it was busy and the time only collectives were."""
    acts = trace["activities"]
    times = [t for a in acts for t in (a["start_ns"], a["end_ns"])]
    begin, end = (min(times), max(times)) if times else (0, 0)

    def total(kinds):
        return sum(a["end_ns"] - a["start_ns"] for a in acts if a["kind"] in kinds)

    def covered(device, kinds):
        return _union_ns([(a["start_ns"], a["end_ns"]) for a in acts
                          if a["device"] == device and a["kind"] in kinds])

    devices = []
    for dev in trace["devices"]:
        busy = covered(dev["index"], BUSY_KINDS)
        # Exposed communication: time a collective runs while no kernel or copy does.
        working = covered(dev["index"], ("kernel",) + COPY_KINDS)
        exposed = covered(dev["index"], ("kernel",) + COPY_KINDS + COLLECTIVE_KINDS) - working
        devices.append({"device": dev["index"], "busy_ns": busy, "idle_ns": (end - begin) - busy,
                        "exposed_collective_ns": exposed})
    # Kernels that read device data into their control flow or addresses (an embedding's ids):
    # timing-only mode reads zeros there, so their times are estimates in that mode.
    data_dependent = [a for a in acts if a["kind"] == "kernel" and a.get("counters")
                      and a["counters"]["data_dependent_reads"]]
    return {"span_ns": end - begin, "compute_ns": total(("kernel",)),
            "data_dependent_kernels": len(data_dependent),
            "data_dependent_ns": sum(a["end_ns"] - a["start_ns"] for a in data_dependent),
            "copy_ns": total(COPY_KINDS), "collective_ns": total(COLLECTIVE_KINDS),
            "exposed_collective_ns": sum(d["exposed_collective_ns"] for d in devices),
            "devices": devices, "dropped": trace.get("dropped", 0)}


def summarize(profile, top):
    """What the parent needs of a finished torch_mimic.profiler.profile: the breakdown and the
    top kernels table, with roofline position, as text (the profiler formats it)."""
    from torch_mimic.profiler import _table

    return {"breakdown": breakdown(profile.trace),
            "kernels": _table.format_table(_table.summary(profile.trace), top=top),
            "kernel_names": len({a["name"] for a in profile.trace["activities"]
                                 if a["kind"] == "kernel"})}


def step_times_ns(result):
    """Durations of the steps the script marked with mimic_cli.step(), from the start."""
    marks = [0] + result.get("step_marks_ns", [])
    return [b - a for a, b in zip(marks, marks[1:])]


def median(values):
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _share(ns, span):
    return f"{100.0 * ns / span:5.1f} %" if span else "    - "


def format_breakdown(result):
    b = result["summary"]["breakdown"]
    span = b["span_ns"]
    lines = [f"Simulated time: {format_ns(result['sim_ns'])} from the script's start to its end "
             f"({result['preset']}, {result['devices']} device{'s' * (result['devices'] != 1)})"]
    steps = step_times_ns(result)
    if steps:
        lines.append(f"Steps marked: {len(steps)}, median {format_ns(median(steps))}")
    lines.append(f"Traced span: {format_ns(span)}; busy time summed over queues, so shares "
                 "can add up to more than 100 %:")
    rows = [("compute (kernels)", b["compute_ns"]), ("copies (memcpy, memset)", b["copy_ns"]),
            ("collectives", b["collective_ns"])]
    if "exposed_collective_ns" in b:
        rows.append(("exposed communication", b["exposed_collective_ns"]))
    rows += [(f"idle, device {d['device']}" + (" (unused)" if not d["busy_ns"] else ""),
              d["idle_ns"]) for d in b["devices"]]
    for label, ns in rows:
        lines.append(f"  {label:<26}{format_ns(ns):>14}  {_share(ns, span)}")
    if b["dropped"]:
        lines.append(f"  WARNING: the trace dropped {b['dropped']} records")
    return "\n".join(lines)


def format_fallback(result, top=5):
    counts = result.get("fallback") or {}
    if not counts:
        return "CPU fallback: none (every op ran on the device)"
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    names = ", ".join(f"{name} x{count}" for name, count in ordered[:top])
    more = f", and {len(ordered) - top} more ops" if len(ordered) > top else ""
    return (f"CPU fallback: {sum(counts.values())} calls ({names}{more}); their copies are "
            "simulated, their CPU work is not")


def format_sanitizer(report_path, top=10):
    """The sanitizer's JSON report (MIMIC_SANITIZE_REPORT, driver/src/sanitizer.cpp) in short."""
    if not report_path or not os.path.exists(report_path):
        return "Sanitizer: no report was written (the script did not reach the device?)"
    with open(report_path) as src:
        report = json.load(src)
    counts = ", ".join(f"{n} {kind}" for kind, n in report["counts"].items() if n)
    lines = [f"Sanitizer ({report['tools']}): {report['total']} finding"
             f"{'s' * (report['total'] != 1)}" + (f" ({counts})" if counts else "")]
    for finding in report["findings"][:top]:
        lines.append(f"  [{finding['tool']}] {finding['message']}")
    if len(report["findings"]) > top:
        lines.append(f"  ... and {len(report['findings']) - top} more in {report_path}")
    return "\n".join(lines)


NO_DEVICE_WARNING = (
    "WARNING: {script} never used the simulated device: no tensor was allocated on it and it "
    "ran no command, so every time below is 0. After `import torch_mimic`, put the model and "
    "its inputs on the device: device = torch.device('privateuseone', 0); "
    "model.to(device); x = x.to(device)")


def format_run_report(result, sanitizer_report=None):
    """The whole report: time breakdown, top kernels, fallback, outputs, sanitizer."""
    parts = []
    if not result.get("device_used", True):
        parts.append(NO_DEVICE_WARNING.format(script=result["script"]))
    if "summary" in result:
        parts.append(format_breakdown(result))
        parts.append("Top kernels (roofline position against the f32 peak):\n"
                     + result["summary"]["kernels"])
    else:
        parts.append(f"Simulated time: {format_ns(result['sim_ns'])}")
    parts.append(format_fallback(result))
    if result.get("trace"):
        parts.append(f"Trace:    {result['trace']}\nTimeline: {result['timeline']}\n"
                     "(open the trace in ui.perfetto.dev or chrome://tracing; "
                     "`mimic trace FILE` summarises it)")
    if sanitizer_report is not None:
        parts.append(format_sanitizer(sanitizer_report))
    return "\n\n".join(parts)
