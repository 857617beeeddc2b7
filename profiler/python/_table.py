"""Per-kernel summary table of a mimic trace, like torch.profiler's key_averages().table().

Units: simulated time in ns (shown as us); FLOP per ns is exactly GFLOP/s and bytes per ns is
exactly GB/s, so rates are computed without unit factors. Roofline figures use the f32 matrix
peak (`peak_flops`) of the device: the trace does not record a kernel's dtype.
"""
import math


def kernel_hbm_bytes(counters):
    """A kernel's HBM traffic: what its DMAs read that missed the device's cache, and what they
    wrote (every written byte reaches HBM in the end)."""
    return (counters.get("hbm_bytes_read", 0) - counters.get("cache_hit_bytes", 0)
            + counters.get("hbm_bytes_written", 0))

SORT_KEYS = ("total_ns", "avg_ns", "calls", "flops")
COPY_KINDS = ("memcpy", "memset")
COLLECTIVE_KINDS = ("collective", "range", "host_task")
# Kinds during which a queue is doing work; event records/waits and syncs count as idle.
BUSY_KINDS = ("kernel", "memcpy", "memset", "host_func", "host_task", "range", "collective")


def _duration(act):
    return act["end_ns"] - act["start_ns"]


def summary(trace):
    """One row (a dict) per kernel name, sorted by name; see `format_table` for the columns."""
    devices = {dev["index"]: dev for dev in trace["devices"]}
    groups = {}
    for act in trace["activities"]:
        if act["kind"] == "kernel":
            groups.setdefault(act["name"], []).append(act)
    rows = []
    for name in sorted(groups):
        calls = groups[name]
        total_ns = sum(_duration(a) for a in calls)
        counters = [a.get("counters") or {} for a in calls]
        flops = sum(c.get("flops", 0) for c in counters)
        hbm_bytes = sum(kernel_hbm_bytes(c) for c in counters)
        # Roofline of the device the kernel spent most time on (devices of a preset are equal).
        time_on = {}
        for a in calls:
            time_on[a["device"]] = time_on.get(a["device"], 0) + _duration(a)
        dev = devices.get(max(sorted(time_on), key=time_on.get), {})
        rows.append(_row(name, len(calls), total_ns, flops, hbm_bytes, dev))
    return rows


def _row(name, calls, total_ns, flops, hbm_bytes, dev):
    gflops = flops / total_ns if total_ns else 0.0
    gbps = hbm_bytes / total_ns if total_ns else 0.0
    intensity = flops / hbm_bytes if hbm_bytes else (math.inf if flops else None)
    peak, bandwidth = dev.get("peak_flops"), dev.get("hbm_bytes_per_s")
    bound = pct = None
    if intensity is not None and peak and bandwidth:
        bound = "compute-bound" if intensity >= peak / bandwidth else "memory-bound"
        attainable = min(peak, intensity * bandwidth)  # FLOP/s
        pct = 100.0 * gflops * 1e9 / attainable
    return {"name": name, "calls": calls, "total_ns": total_ns, "avg_ns": total_ns / calls,
            "flops": flops, "hbm_bytes": hbm_bytes, "gflops_per_s": gflops,
            "gb_per_s": gbps, "intensity": intensity, "bound": bound, "pct_roofline": pct}


def totals(trace):
    """Span, time per activity kind, idle time per queue and dropped records."""
    acts = trace["activities"]
    times = [t for a in acts for t in (a["start_ns"], a["end_ns"])]
    times += [t for op in trace["host_ops"] for t in (op["start_ns"], op["end_ns"])]
    begin, end = (min(times), max(times)) if times else (0, 0)

    def kind_time(kinds):
        return sum(_duration(a) for a in acts if a["kind"] in kinds)

    idle = []
    for queue in trace["queues"]:
        busy = sorted((a["start_ns"], a["end_ns"]) for a in acts
                      if a.get("queue") == queue["id"] and a["device"] == queue["device"]
                      and a["kind"] in BUSY_KINDS)
        idle.append((queue, (end - begin) - _union_length(busy)))
    return {"begin_ns": begin, "span_ns": end - begin, "kernel_ns": kind_time(("kernel",)),
            "copy_ns": kind_time(COPY_KINDS), "collective_ns": kind_time(COLLECTIVE_KINDS),
            "idle": idle, "dropped": trace.get("dropped", 0)}


def _union_length(intervals):
    """Length covered by sorted (start, end) intervals; overlaps count once."""
    covered, reach = 0, None
    for start, end in intervals:
        if reach is None or start > reach:
            covered += end - start
            reach = end
        elif end > reach:
            covered += end - reach
            reach = end
    return covered


def _fmt(value, spec):
    if value is None:
        return "-"
    if value == math.inf:
        return "inf"
    return format(value, spec)


COLUMNS = (  # header, row key, format
    ("Calls", "calls", "d"), ("Total (us)", "total_ns", ",.3f"), ("Avg (us)", "avg_ns", ",.3f"),
    ("FLOPs", "flops", ".3g"), ("GFLOP/s", "gflops_per_s", ",.1f"), ("GB/s", "gb_per_s", ",.1f"),
    ("FLOP/B", "intensity", ".2f"), ("Bound", "bound", "s"), ("% roofline", "pct_roofline", ".1f"))


def _cell(row, key, spec):
    value = row[key]
    if key in ("total_ns", "avg_ns"):
        value = value / 1000.0
    return _fmt(value, spec)


def format_table(rows, sort_by="total_ns", top=None):
    """The rows as a fixed-width text table, largest `sort_by` first (ties by name)."""
    if sort_by not in SORT_KEYS:
        raise ValueError("sort_by must be one of %s, not %r" % (", ".join(SORT_KEYS), sort_by))
    rows = sorted(rows, key=lambda r: (-r[sort_by], r["name"]))
    if top is not None:
        rows = rows[:top]
    header = ["Name"] + [c[0] for c in COLUMNS]
    body = [[r["name"]] + [_cell(r, key, spec) for _, key, spec in COLUMNS] for r in rows]
    widths = [max(len(line[i]) for line in [header] + body) for i in range(len(header))]

    def line(cells):
        # Name left-aligned, numbers right-aligned.
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    rule = "-" * len(line(header))
    if not body:
        return "(no kernels)"
    return "\n".join([rule, line(header), rule] + [line(cells) for cells in body] + [rule])


def format_totals(trace):
    t = totals(trace)
    lines = ["Total simulated span: %.3f us" % (t["span_ns"] / 1000.0),
             "Kernels: %.3f us" % (t["kernel_ns"] / 1000.0),
             "Copies (memcpy/memset): %.3f us" % (t["copy_ns"] / 1000.0),
             "Collectives (collective/range/host_task): %.3f us" % (t["collective_ns"] / 1000.0)]
    for queue, idle_ns in t["idle"]:
        share = 100.0 * idle_ns / t["span_ns"] if t["span_ns"] else 0.0
        lines.append("Idle, device %d %s: %.3f us (%.1f%%)"
                     % (queue["device"], queue["label"], idle_ns / 1000.0, share))
    if t["dropped"]:
        lines.append("WARNING: %d records were dropped" % t["dropped"])
    return "\n".join(lines)


def report(trace, sort_by="total_ns", top=None):
    """Table plus totals, as printed by `python3 -m torch_mimic.profiler`."""
    return format_table(summary(trace), sort_by, top) + "\n\n" + format_totals(trace)
