"""mimic validate: each published-figures row's workload run on its preset, in simulated time,
against the real part's measurement.

Each preset runs in children of its own (one simulated system per process): one Python child
runs the PyTorch rows through torch_mimic (validate_torch.py), and mimic-probe runs each driver
and collective row through the public C API. The maths is in validate_summary.py, the file
format and its checks in figures.py.
"""
import argparse
import difflib
import json
import os
import subprocess
import sys
import tempfile
import time

from . import figures, presets_api
from .common import PYTHON, UsageError, base_overrides, box_table, child_env
from .figures import GROUPS
from .validate_summary import (TARGET_GEOMEAN, TARGET_WORST, error, percent, ratio,
                               summarize)
from .validate_torch import RESULT_MARK

USAGE = "mimic validate [--preset NAME ...] [--json] [--rows ID,...] [--group G] [--figures FILE]"
DESCRIPTION = """\
Runs the workload of every row of a preset's published-figures file on the preset (through
torch_mimic, the driver API and the communicator, in simulated time) and compares it with the
real part's published measurement. By default every preset that has a figures file in
sim/presets/figures/ is validated.

ratio  a speed ratio, above 1 when mimic is too fast: mimic / real for throughputs (TB/s, GB/s,
       TF), real / mimic for times (us, ms).
error  of a row: exp(|ln ratio|) - 1, so a ratio of 1.25 and one of 0.8 are both 25 %.
Summaries, per group (memory, compute, copy, launch, collective), per set (calibration, check),
over the device rows (memory, compute, copy, launch), the collective rows and all rows:
  geomean error = exp(mean over the rows of |ln ratio|) - 1, target <= 10 %;
  worst row     = the row with the largest error, target <= 25 %.
Exit code 0 when every workload ran (whether or not the targets are met), 1 when one failed,
2 for a usage mistake."""
EPILOG = """\
figures file format (JSON):
  {"preset": "a100", "part": "NVIDIA A100 SXM4 80 GB", "rows": [
    {"id": "hbm.triad", "group": "memory", "figure": "HBM stream, BabelStream Triad",
     "workload": {"kind": "stream", "op": "triad", "elements": 33554432, "dtype": "float32"},
     "real": 1.70, "unit": "TB/s", "source": "where the figure is published",
     "set": "calibration", "note": "optional conditions"}]}
workload kinds and their fields:
  stream {op: copy|mul|add|triad|dot, elements, dtype}   BabelStream, host time of one call
  gemm {m, n, k, dtype}                                  torch.mm, TF = 2mnk / time
  reduce {op: sum|dot|norm, elements, dtype}             GB/s of input read
  h2d, d2h {bytes, pinned}   peer {bytes}                one copy, GB/s
  launch {measure: launch_sync|launch_event}             us per empty kernel
  allreduce, allgather, reducescatter {bytes, devices}   nccl-tests busbw (GB/s) or time
  train_step                                             reserved: listed, not run
  dtype: float32|float16|bfloat16; copies and collectives also take iterations.

examples:
  mimic validate
  mimic validate --preset a100 --group memory
  mimic validate --figures my_part.json --preset my_part.preset --json"""


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "validate", usage=USAGE, help="compare simulated times with real parts' published figures",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--preset", action="append", metavar="NAME",
                        help="a preset to validate (repeatable; default: every preset with a "
                             "figures file); with --figures, the presets to run its rows on")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--rows", metavar="ID,...", help="only these rows")
    parser.add_argument("--group", choices=GROUPS, help="only the rows of this group")
    parser.add_argument("--figures", metavar="FILE",
                        help="a figures file to run instead of the built-in ones; its 'preset' "
                             "field names the preset unless --preset is given")
    return parser


def _plan(args):
    """[(preset, figures data, selected rows)], every input checked before anything runs."""
    if args.figures:
        data = figures.load(args.figures)
        pairs = [(preset, data) for preset in (args.preset or [data["preset"]])]
    else:
        files = figures.builtin_files()
        for preset in args.preset or []:
            presets_api.check(preset)  # an unknown preset is named as such first
            if preset not in files:
                raise UsageError(f"preset '{preset}' has no figures file "
                                 f"({os.path.join(figures.figures_dir(), preset + '.json')})",
                                 f"presets with one: {', '.join(files) or 'none'}; "
                                 "--figures FILE runs another file")
        if not files:
            raise UsageError(f"no figures files in {figures.figures_dir()}",
                             "--figures FILE runs one")
        pairs = [(preset, figures.load(files[preset])) for preset in (args.preset or files)]
    for preset, _ in pairs:
        presets_api.check(preset, base_overrides(None))
    wanted = [i.strip() for i in (args.rows or "").split(",") if i.strip()]
    known = {row["id"] for _, data in pairs for row in data["rows"]}
    for row_id in wanted:
        if row_id not in known:
            close = difflib.get_close_matches(row_id, sorted(known), n=3)
            raise UsageError(f"--rows: no row '{row_id}' in the figures file"
                             f"{'s' if len(pairs) > 1 else ''}"
                             + (f" (did you mean {' or '.join(close)}?)" if close else ""),
                             f"the rows are: {', '.join(sorted(known))}")
    plan = []
    for preset, data in pairs:
        rows = [r for r in data["rows"] if (not wanted or r["id"] in wanted)
                and (not args.group or r["group"] == args.group)]
        if rows:
            plan.append((preset, data, rows))
    if not plan:
        raise UsageError("no row matches --rows and --group", "leave one of them out")
    return plan


def _progress(text):
    print(f"mimic validate: {text}", file=sys.stderr, flush=True)


def _run_torch(preset, rows):
    """id -> the child's result for each torch row; a row the child never finished fails with
    the end of the child's output."""
    results, log = {}, []
    with tempfile.TemporaryDirectory(prefix="mimic-validate-") as scratch:
        path = os.path.join(scratch, "rows.json")
        with open(path, "w") as out:
            json.dump([{"id": r["id"], "workload": r["workload"]} for r in rows], out)
        env = child_env(preset, overrides=base_overrides(None))
        env.setdefault("MIMIC_FALLBACK", "silent")
        child = subprocess.Popen([PYTHON, "-m", "mimic_cli.validate_torch", path], env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for line in child.stdout:
            if line.startswith(RESULT_MARK):
                result = json.loads(line[len(RESULT_MARK):])
                results[result["id"]] = result
                _progress(f"{preset} {result['id']}: "
                          + ("done" if "error" not in result else "failed"))
            else:
                log.append(line.rstrip("\n"))
        code = child.wait()
    for row in rows:
        if row["id"] not in results:
            tail = "; ".join(line for line in log[-3:] if line.strip())
            results[row["id"]] = {"error": f"the PyTorch child exited with code {code} before "
                                           f"this row finished" + (f": {tail}" if tail else "")}
    return results


def probe_command(workload):
    """mimic-probe's command line for a driver or collective workload."""
    from . import _build

    args = [_build.PROBE, workload["kind"]]
    for key, value in workload.items():
        if key != "kind":
            args.append(f"{key}={str(value).lower() if isinstance(value, bool) else value}")
    return args


def _run_probe(preset, row, preset_devices):
    command = probe_command(row["workload"])
    if not os.path.exists(command[0]):
        return {"error": f"{command[0]} was not built (build the target mimic-probe)"}
    needed = figures.devices_needed(row["workload"])
    env = child_env(preset, devices=needed if needed > preset_devices else None,
                    overrides=base_overrides(None))
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    _progress(f"{preset} {row['id']}: " + ("done" if done.returncode == 0 else "failed"))
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        reason = lines[0].removeprefix("mimic-probe: ") if lines else "no message"
        return {"error": f"mimic-probe exited with code {done.returncode}: {reason}"}
    result = json.loads(done.stdout.strip().splitlines()[-1])
    return {"sim_ns": result["sim_ns"], "work": result["bus_bytes"]}


def run_preset(preset, data, rows):
    """The rows of one preset with their mimic figures, ratios and errors, and its summary."""
    started = time.monotonic()
    params = {p["field"]: p["value"] for p in presets_api.describe(preset, base_overrides(None))}
    preset_devices = int(params["system.num_devices"])
    results = {}
    torch_rows = [r for r in rows if figures.runner_of(r) == "torch"]
    if torch_rows:
        results.update(_run_torch(preset, torch_rows))
    for row in rows:
        if figures.runner_of(row) == "probe":
            results[row["id"]] = _run_probe(preset, row, preset_devices)
    out = []
    for row in rows:
        entry = {key: row.get(key) for key in ("id", "group", "set", "figure", "real", "unit",
                                                "source", "note", "workload")}
        entry.update(mimic=None, ratio=None, error=None, sim_ns=None)
        result = results.get(row["id"])
        if result is None:
            entry["status"] = "not run"
        elif "error" in result:
            entry.update(status="failed", failure=result["error"])
        else:
            mimic = figures.metric(row["unit"], result["sim_ns"], result["work"])
            r = ratio(row["real"], mimic, row["unit"])
            entry.update(status="ok", mimic=mimic, ratio=r, error=error(r),
                         sim_ns=result["sim_ns"])
        out.append(entry)
    return {"preset": preset, "part": data.get("part", ""), "figures": data["path"],
            "rows": out, "summary": summarize(out), "wall_seconds": time.monotonic() - started}


def _number(x):
    return f"{x:.0f}" if abs(x) >= 1000 else f"{x:.4g}"


def _row_cells(row):
    if row["status"] == "ok":
        measured = [_number(row["mimic"]), row["unit"], f"{row['ratio']:.3f}",
                    percent(row["error"])]
    else:
        measured = [row["status"], row["unit"], "-", "-"]
    figure = row["figure"]
    if len(figure) > FIGURE_WIDTH:  # the whole text is in --json
        figure = figure[:FIGURE_WIDTH - 3] + "..."
    return [row["id"], figure, _number(row["real"])] + measured + [row["set"]]


FIGURE_WIDTH = 44
SUMMARY_LABELS = [("device", "device rows"), ("collective", "collective rows"), ("all", "all")]


def _met(flag):
    return "met" if flag else "MISSED"


def format_preset(result):
    lines = [f"preset {result['preset']}"
             + (f": {result['part']}" if result["part"] else "")
             + f" ({result['figures']})"]
    lines.append(box_table(["id", "figure", "real", "mimic", "unit", "ratio", "error", "set"],
                           [_row_cells(r) for r in result["rows"]],
                           ["<", "<", ">", ">", "<", ">", ">", "<"]))
    summary = result["summary"]
    entries = [(g, s) for g, s in summary["groups"].items()]
    entries += [(name, s) for name, s in summary["sets"].items()]
    entries += [(label, summary[key]) for key, label in SUMMARY_LABELS if summary[key]]
    if entries:
        table = [[name, s["rows"], percent(s["geomean_error"]), _met(s["geomean_met"]),
                  f"{s['worst']['id']} ({s['worst']['ratio']:.3f})",
                  percent(s["worst"]["error"]), _met(s["worst_met"])] for name, s in entries]
        lines.append(box_table(["rows", "n", "geomean error", "<= 10 %", "worst row",
                                "its error", "<= 25 %"], table,
                               ["<", ">", ">", "<", "<", ">", "<"]))
    failed = [r for r in result["rows"] if r["status"] == "failed"]
    for row in failed:
        lines.append(f"FAILED {result['preset']} {row['id']}: {row['failure']}")
    return "\n".join(lines)


def run(args):
    plan = _plan(args)
    results = []
    for preset, data, rows in plan:
        _progress(f"{preset}: {len(rows)} row{'s' * (len(rows) != 1)}")
        results.append(run_preset(preset, data, rows))
    failures = [{"preset": r["preset"], "id": row["id"], "failure": row["failure"]}
                for r in results for row in r["rows"] if row["status"] == "failed"]
    if args.json:
        print(json.dumps({"targets": {"geomean_error": TARGET_GEOMEAN,
                                      "worst_error": TARGET_WORST},
                          "presets": results, "failures": failures}, indent=1))
    else:
        print("\n\n".join(format_preset(r) for r in results))
        print(f"\nratio: speed ratio, > 1 when mimic is too fast (mimic/real for throughputs, "
              f"real/mimic for times).\nerror: exp(|ln ratio|) - 1; geomean error: "
              f"exp(mean |ln ratio|) - 1. Targets: geomean error <= {percent(TARGET_GEOMEAN)}, "
              f"worst row <= {percent(TARGET_WORST)}.")
    return 1 if failures else 0
