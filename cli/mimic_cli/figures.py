"""Published-figures files (sim/presets/figures/PRESET.json): loading, checking, and what each
row's workload measures.

A file names its preset and holds rows; each row is a published measurement of the real part
(real, unit, source) and the workload that reproduces it. The checks here make a bad file a
user error that names the file, the row and the field, before anything runs.
"""
import json
import math
import os
import re

from .common import UsageError

GROUPS = ("memory", "compute", "copy", "launch", "collective")
DEVICE_GROUPS = ("memory", "compute", "copy", "launch")
SETS = ("calibration", "check")
DTYPES = ("float32", "float16", "bfloat16")

# unit -> work per simulated ns in that unit: bytes/ns is GB/s, flop/ns is GFLOP/s.
THROUGHPUT_UNITS = {"TB/s": ("bytes", 1e3), "GB/s": ("bytes", 1.0), "TF": ("flops", 1e3)}
TIME_UNITS = {"us": 1e3, "ms": 1e6}  # lower is better
UNITS = tuple(THROUGHPUT_UNITS) + tuple(TIME_UNITS)

ID_PATTERN = re.compile(r"^[a-z0-9_-]+(\.[a-z0-9_-]+)*$")
FORMAT_HINT = "`mimic validate --help` describes the figures file format"


class Field:
    """One workload field: a whole number >= minimum, a boolean, or one of choices."""

    def __init__(self, kind, choices=None, minimum=1, required=True):
        self.kind, self.choices, self.minimum, self.required = kind, choices, minimum, required

    def check(self, value):
        """The reason value is not acceptable, or None."""
        if self.kind == "int":
            if isinstance(value, bool) or not isinstance(value, int) or value < self.minimum:
                return f"must be a whole number >= {self.minimum}"
        elif self.kind == "bool":
            if not isinstance(value, bool):
                return "must be true or false"
        elif value not in self.choices:
            return f"must be one of {', '.join(self.choices)}"
        return None


COLLECTIVE_ALGORITHMS = ("ring", "tree", "direct", "two_shot", "nvls", "hierarchical")
COLLECTIVE_PROTOCOLS = ("simple", "ll128", "ll")


def _collective_fields():
    """algo / proto: the row was measured with NCCL_ALGO / NCCL_PROTO forcing that choice."""
    return {"bytes": Field("int"), "devices": Field("int", minimum=2),
            "nodes": Field("int", required=False),
            "iterations": Field("int", required=False),
            "algo": Field("choice", COLLECTIVE_ALGORITHMS, required=False),
            "proto": Field("choice", COLLECTIVE_PROTOCOLS, required=False)}


# kind -> (runner, the work its throughput counts, its fields). Runner "torch" runs in a Python
# child through torch_mimic, "probe" in mimic-probe, None: reserved, not run.
KINDS = {
    "stream": ("torch", "bytes", {"op": Field("choice", ("copy", "mul", "add", "triad", "dot")),
                                  "elements": Field("int"), "dtype": Field("choice", DTYPES)}),
    "gemm": ("torch", "flops", {"m": Field("int"), "n": Field("int"), "k": Field("int"),
                                "dtype": Field("choice", DTYPES)}),
    "reduce": ("torch", "bytes", {"op": Field("choice", ("sum", "dot", "norm")),
                                  "elements": Field("int"), "dtype": Field("choice", DTYPES)}),
    "h2d": ("probe", "bytes", {"bytes": Field("int"), "pinned": Field("bool"),
                               "iterations": Field("int", required=False)}),
    "d2h": ("probe", "bytes", {"bytes": Field("int"), "pinned": Field("bool"),
                               "iterations": Field("int", required=False)}),
    "peer": ("probe", "bytes", {"bytes": Field("int"), "iterations": Field("int", required=False)}),
    "launch": ("probe", None, {"measure": Field("choice", ("launch_sync", "launch_event")),
                               "iterations": Field("int", required=False)}),
    "allreduce": ("probe", "bytes", _collective_fields()),
    "allgather": ("probe", "bytes", _collective_fields()),
    "reducescatter": ("probe", "bytes", _collective_fields()),
    "train_step": (None, None, None),
}


def runner_of(row):
    return KINDS[row["workload"]["kind"]][0]


def devices_needed(workload):
    """How many devices the workload's system must have."""
    if workload["kind"] == "peer":
        return 2
    return workload.get("devices", 1)


def metric(unit, sim_ns, work):
    """The row's figure from a simulated time and the work done in it (bytes, flops, or bus
    bytes for a collective's busbw)."""
    if unit in TIME_UNITS:
        return sim_ns / TIME_UNITS[unit]
    return work / sim_ns / THROUGHPUT_UNITS[unit][1]


def _row_error(path, row_name, message):
    return UsageError(f"figures file '{path}': {row_name}: {message}", FORMAT_HINT)


def _check_workload(path, name, workload, unit):
    if not isinstance(workload, dict):
        raise _row_error(path, name, "field 'workload' must be an object with a 'kind'")
    kind = workload.get("kind")
    if kind not in KINDS:
        raise _row_error(path, name, f"workload kind {kind!r} is unknown "
                                     f"(known: {', '.join(KINDS)})")
    runner, work, fields = KINDS[kind]
    if runner is None:
        return
    for key in workload:
        if key != "kind" and key not in fields:
            raise _row_error(path, name, f"{kind} workload field '{key}' is unknown "
                                         f"(known: {', '.join(fields)})")
    for key, field in fields.items():
        if key not in workload:
            if field.required:
                raise _row_error(path, name, f"{kind} workload field '{key}' is missing")
            continue
        reason = field.check(workload[key])
        if reason:
            raise _row_error(path, name, f"{kind} workload field '{key}' {reason}, "
                                         f"got {workload[key]!r}")
    if "devices" in fields:
        # f32 elements; AllGather and ReduceScatter split them evenly over the ranks.
        unit_bytes = 4 if kind == "allreduce" else 4 * workload["devices"]
        if workload["bytes"] % unit_bytes:
            raise _row_error(path, name, f"{kind} workload field 'bytes' must be a multiple of "
                                         f"{unit_bytes} (whole f32 elements"
                                         f"{'' if kind == 'allreduce' else ' per rank'}), got "
                                         f"{workload['bytes']}")
    if unit in THROUGHPUT_UNITS and THROUGHPUT_UNITS[unit][0] != work:
        allowed = [u for u, (w, _) in THROUGHPUT_UNITS.items() if w == work] + list(TIME_UNITS)
        raise _row_error(path, name, f"unit '{unit}' does not fit a {kind} workload "
                                     f"(it takes {', '.join(allowed)})")


def _check_row(path, index, row, seen):
    if not isinstance(row, dict):
        raise _row_error(path, f"row {index + 1}", "must be an object")
    row_id = row.get("id")
    if not isinstance(row_id, str) or not ID_PATTERN.match(row_id):
        raise _row_error(path, f"row {index + 1}",
                         "field 'id' is missing or not dotted lower-case (hbm.triad)")
    name = f"row '{row_id}'"
    if row_id in seen:
        raise _row_error(path, name, "the id is used twice")
    seen.add(row_id)
    for key in ("group", "figure", "workload", "real", "unit", "source", "set"):
        if key not in row:
            raise _row_error(path, name, f"field '{key}' is missing")
    choices = {"group": GROUPS, "unit": UNITS, "set": SETS}
    for key, allowed in choices.items():
        if row[key] not in allowed:
            raise _row_error(path, name, f"field '{key}' must be one of {', '.join(allowed)}, "
                                         f"got {row[key]!r}")
    for key in ("figure", "source"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise _row_error(path, name, f"field '{key}' must be a non-empty string")
    real = row["real"]
    if isinstance(real, bool) or not isinstance(real, (int, float)) or not (
            real > 0 and math.isfinite(real)):
        raise _row_error(path, name, f"field 'real' must be a positive number, got {real!r}")
    _check_workload(path, name, row["workload"], row["unit"])


def load(path):
    """The checked contents of one figures file; raises UsageError naming what is wrong."""
    try:
        with open(path) as src:
            data = json.load(src)
    except OSError as error:
        raise UsageError(f"figures file '{path}' cannot be read: {error.strerror}",
                         "give the path of a figures .json file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise UsageError(f"figures file '{path}' is not JSON: {error}", FORMAT_HINT) from None
    if not isinstance(data, dict):
        raise UsageError(f"figures file '{path}' must hold a JSON object", FORMAT_HINT)
    for key, kind in (("preset", str), ("rows", list)):
        if not isinstance(data.get(key), kind):
            raise UsageError(f"figures file '{path}': field '{key}' is missing or not a "
                             f"{'string' if kind is str else 'list'}", FORMAT_HINT)
    seen = set()
    for index, row in enumerate(data["rows"]):
        _check_row(path, index, row, seen)
    data["path"] = path
    return data


def figures_dir():
    from . import _build

    return _build.FIGURES_DIR


def builtin_files():
    """preset -> path of every figures file in sim/presets/figures/."""
    directory = figures_dir()
    if not os.path.isdir(directory):
        return {}
    return {name[:-5]: os.path.join(directory, name) for name in sorted(os.listdir(directory))
            if name.endswith(".json")}
