"""profile.key_averages(): the trace averaged per name, as torch.profiler's key_averages() does,
with host time and device time in columns of their own.

Rows are host ops (aten::mm, ...) and device work (kernels, copies, fills, collectives). Host
times come from the host ops' spans on the host's simulated clock; device times from the device
activities' simulated spans. An op's device time is the device work it launched (the work's
correlation id is the op's id); its total adds the ops it called, as torch's "CUDA total" does.
"""
# Device activities that are work; event records and waits, syncs, allocs and frees are not.
DEVICE_KINDS = ("kernel", "memcpy", "memset", "host_func", "host_task", "range", "collective")

# sort_by keys: torch.profiler's (its device is CUDA, here the simulated device) and ours.
SORT_KEYS = {
    "cpu_time": "cpu_time", "cpu_time_total": "cpu_time_total",
    "self_cpu_time_total": "self_cpu_time_total",
    "device_time": "device_time", "device_time_total": "device_time_total",
    "self_device_time_total": "self_device_time_total",
    "cuda_time": "device_time", "cuda_time_total": "device_time_total",
    "self_cuda_time_total": "self_device_time_total", "count": "count",
}


def device_label(act):
    """The row name of a device activity: the kernel's or range's name, else its kind."""
    if act["kind"] == "memcpy":
        return f"mimic memcpy {act.get('copy_kind') or ''}".rstrip()
    if act["kind"] in ("kernel", "range", "collective"):
        return act["name"]
    return f"mimic {act['kind']}"


class EventAverage:
    """One row: a name's calls, host and device time in us (as torch.profiler's FunctionEventAvg)."""

    def __init__(self, key, is_device_work):
        self.key = key
        self.is_device_work = is_device_work
        self.count = 0
        self.self_cpu_time_total = 0.0
        self.cpu_time_total = 0.0
        self.self_device_time_total = 0.0
        self.device_time_total = 0.0

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        return self.device_time_total / self.count if self.count else 0.0

    # torch.profiler's names for the device columns.
    cuda_time = device_time

    @property
    def cuda_time_total(self):
        return self.device_time_total

    @property
    def self_cuda_time_total(self):
        return self.self_device_time_total

    def __repr__(self):
        return (f"<EventAverage key={self.key} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"device_time_total={self.device_time_total:.3f}us>")


def _parents(host_ops):
    """{op id: parent op id or None}. The host clock may not move during an op (a preset
    without host costs), so nesting comes from the recorded caller, not from the spans; a
    caller outside the trace (it began before profiling) makes the op a top-level one."""
    ids = {op["id"] for op in host_ops}
    return {op["id"]: op["parent"] if op.get("parent") in ids else None for op in host_ops}


def key_averages(trace):
    """The rows of a trace, host ops first (in order of first call), then device work."""
    work = [a for a in trace["activities"] if a["kind"] in DEVICE_KINDS]
    self_device = {}
    for act in work:
        if act["correlation"]:
            self_device[act["correlation"]] = (self_device.get(act["correlation"], 0)
                                               + act["end_ns"] - act["start_ns"])
    ops = {op["id"]: op for op in trace["host_ops"]}
    parents = _parents(trace["host_ops"])
    child_cpu, device_total = {}, dict(self_device)
    for op_id, parent in parents.items():
        if parent is None:
            continue
        op = ops[op_id]
        child_cpu[parent] = child_cpu.get(parent, 0) + op["end_ns"] - op["start_ns"]
    # Device time flows up to every ancestor of the op that launched it.
    for op_id, ns in self_device.items():
        parent = parents.get(op_id)
        while parent is not None:
            device_total[parent] = device_total.get(parent, 0) + ns
            parent = parents.get(parent)
    rows = {}
    for op in trace["host_ops"]:
        row = rows.setdefault(("host", op["name"]), EventAverage(op["name"], False))
        duration = op["end_ns"] - op["start_ns"]
        row.count += 1
        row.cpu_time_total += duration / 1000.0
        row.self_cpu_time_total += (duration - child_cpu.get(op["id"], 0)) / 1000.0
        row.self_device_time_total += self_device.get(op["id"], 0) / 1000.0
        row.device_time_total += device_total.get(op["id"], 0) / 1000.0
    for act in work:
        label = device_label(act)
        row = rows.setdefault(("device", label), EventAverage(label, True))
        row.count += 1
        row.self_device_time_total += (act["end_ns"] - act["start_ns"]) / 1000.0
        row.device_time_total = row.self_device_time_total
    return EventAverages(rows.values(), trace)


def _us(value):
    """As torch.profiler prints times: us, ms or s with three decimals."""
    if value >= 1e6:
        return f"{value / 1e6:.3f}s"
    if value >= 1e3:
        return f"{value / 1e3:.3f}ms"
    return f"{value:.3f}us"


def _percent(part, whole):
    return f"{100.0 * part / whole:.2f}%" if whole else "0.00%"


class EventAverages(list):
    """key_averages()'s result: a list of EventAverage with torch.profiler's table()."""

    def __init__(self, rows, trace):
        super().__init__(rows)
        self.trace = trace

    def table(self, sort_by=None, row_limit=100, max_name_column_width=55):
        """The rows as text, largest `sort_by` first (None: in order of first call); at most
        row_limit rows (a negative limit: all)."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in SORT_KEYS:
                raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}, not "
                                 f"{sort_by!r}")
            attribute = SORT_KEYS[sort_by]
            rows.sort(key=lambda r: -getattr(r, attribute))
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        self_cpu = sum(r.self_cpu_time_total for r in self)
        self_device = sum(r.self_device_time_total for r in self if r.is_device_work)
        headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg",
                   "Self Device", "Self Device %", "Device total", "Device time avg",
                   "# of Calls"]
        body = []
        for r in rows:
            name = r.key if len(r.key) <= max_name_column_width else \
                r.key[:max_name_column_width - 3] + "..."
            body.append([name, _percent(r.self_cpu_time_total, self_cpu),
                         _us(r.self_cpu_time_total), _percent(r.cpu_time_total, self_cpu),
                         _us(r.cpu_time_total), _us(r.cpu_time), _us(r.self_device_time_total),
                         _percent(r.self_device_time_total, self_device),
                         _us(r.device_time_total), _us(r.device_time), str(r.count)])
        widths = [max(len(line[i]) for line in [headers] + body) for i in range(len(headers))]

        def line(cells):
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths)))

        rule = "-" * len(line(headers))
        devices = len(self.trace["devices"])
        return "\n".join(
            [rule, line(headers), rule] + [line(cells) for cells in body] + [rule,
             f"Self CPU time total: {_us(self_cpu)} (the host's simulated clock)",
             f"Self Device time total: {_us(self_device)} (simulated, {devices} device"
             f"{'s' * (devices != 1)})"]) + "\n"


__all__ = ["EventAverage", "EventAverages", "key_averages"]
