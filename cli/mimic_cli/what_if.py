"""mimic what-if SCRIPT.py --vary FIELD=V1,V2,... [--preset P1,P2,...]: the script's simulated time
on variants of a preset (a grid when --vary is given more than once; several presets are one more
axis of it), as a table and an SVG bar chart."""
import itertools
import os
import tempfile

from . import chart, presets_api
from .common import (UsageError, add_device_options, base_overrides, box_table, child_env,
                     format_ns, require_output_dir, require_script, run_script)
from .presets import parse_number
from .report import median, step_times_ns


TAKES_SCRIPT_ARGS = True
USAGE = ("mimic what-if SCRIPT.py [--vary FIELD=V1,V2,... ...] [--preset P1,P2,...] "
         "[--devices N] [--chart FILE.svg] [-- ARGS...]")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "what-if", usage=USAGE, help="simulated time of a script on variants of a preset",
        description="Runs SCRIPT once per variant (MIMIC_OVERRIDES) and compares simulated "
                    "times. A value ending in x multiplies the preset's value (2x); others are "
                    "absolute (2000, 32GiB, ring). FIELD is a preset field or an alias "
                    "(hbm_bandwidth, clock, compute_units, link_bandwidth, ...; `mimic presets "
                    "show default` lists them). --preset a100,h100 makes the presets an axis of "
                    "the grid (a multiplier then scales each preset's own value). The measure "
                    "is the script's total simulated time, or its median step if it calls "
                    "mimic_cli.step().")
    parser.add_argument("script", help="the Python script to run")
    parser.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2,...",
                        help="values of one field; repeat for a grid")
    add_device_options(parser)
    parser.add_argument("--chart", metavar="FILE.svg",
                        help="bar chart to write (default: SCRIPT's name + .what-if.svg)")
    return parser


def _format_value(number):
    return str(int(number)) if float(number).is_integer() else f"{number:g}"


def parse_vary(text, base_values):
    """(alias or field as typed, field, [(label, value)]) of one --vary; raises UsageError."""
    name, sep, values = text.partition("=")
    if not sep or not name.strip() or not values.strip():
        raise UsageError(f"--vary '{text}' is not of the form FIELD=V1,V2,...",
                         "e.g. --vary hbm_bandwidth=1x,2x,4x")
    field = presets_api.resolve_field(name.strip())
    choices = []
    for item in filter(None, (v.strip() for v in values.split(","))):
        if item.endswith("x") and parse_number(item[:-1]) is not None:
            base = parse_number(base_values[field])
            if base is None:
                raise UsageError(f"--vary {name}: '{item}' multiplies the preset's value, but "
                                 f"{field} = {base_values[field]} is not a number",
                                 "give absolute values for this field")
            choices.append((item, _format_value(base * parse_number(item[:-1]))))
        else:
            choices.append((item, item))
    if not choices:
        raise UsageError(f"--vary '{text}' has no values", "e.g. --vary hbm_bandwidth=1x,2x,4x")
    return name.strip(), field, choices


def parse_presets(text):
    """The presets of --preset P1,P2,... in order, each given once; raises UsageError."""
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise UsageError(f"--preset '{text}' has an empty name", "e.g. --preset a100,h100")
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise UsageError(f"--preset '{text}' names {repeated[0]} twice",
                         "give each preset once")
    return names


def variants(presets, base_overrides, varies):
    """Every combination of the presets and the --vary values: (preset, label, overrides),
    checked with the driver. The preset is the outer axis; with one preset it is not in the
    label."""
    grid = []
    for preset in presets:
        base_values = {p["field"]: p["value"]
                       for p in presets_api.describe(preset, base_overrides)}
        axes = [parse_vary(text, base_values) for text in varies]
        for combo in itertools.product(*[[(name, field, c) for c in choices]
                                         for name, field, choices in axes]):
            names = [f"preset={preset}"] * (len(presets) > 1)
            label = ", ".join(names + [f"{name}={label}" for name, _, (label, _) in combo])
            parts = [base_overrides] if base_overrides else []
            overrides = ",".join(parts + [f"{field}={value}" for _, field, (_, value) in combo])
            presets_api.check(preset, overrides)  # a bad value fails before anything runs
            grid.append((preset, label or preset, overrides))
    return grid


def run(args):
    require_script(args.script)
    presets = parse_presets(args.preset)
    if not args.vary and len(presets) < 2:
        raise UsageError("nothing to compare: give --vary FIELD=V1,V2,... or several presets",
                         "e.g. --vary hbm_bandwidth=1x,2x or --preset a100,h100")
    base = base_overrides(args.devices)
    for preset in presets:
        presets_api.check(preset, base)
    grid = variants(presets, base, args.vary)
    stem = os.path.splitext(os.path.basename(args.script))[0]
    chart_path = require_output_dir(args.chart or f"{stem}.what-if.svg", "--chart")
    print(f"mimic: {len(grid)} variant{'s' * (len(grid) != 1)} of preset"
          f"{'s' * (len(presets) > 1)} {', '.join(presets)}, running {args.script} once each",
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="mimic-what-if-") as scratch:
        for index, (preset, label, overrides) in enumerate(grid, 1):
            print(f"[{index}/{len(grid)}] {label} ({overrides or 'no overrides'}): ", end="",
                  flush=True)
            env = child_env(preset, overrides=overrides)
            code, seconds, result = run_script(args.script, args.script_args, env,
                                               os.path.join(scratch, "result.json"), quiet=True)
            if code or result is None:
                print(f"mimic: {args.script} failed on variant {label} (exit {code})")
                return code or 1
            rows.append((label, overrides, result))
            steps = step_times_ns(result)
            measured = (f"median step {format_ns(median(steps))}" if steps
                        else f"{format_ns(result['sim_ns'])} simulated")
            print(f"{measured}, {seconds:.1f} s wall", flush=True)
    stepped = all(step_times_ns(r) for _, _, r in rows)
    times = [median(step_times_ns(r)) if stepped else r["sim_ns"] for _, _, r in rows]
    measure_name = "median step" if stepped else "total simulated time"
    table = []
    for (label, _, result), ns in zip(rows, times):
        speedup = f"{times[0] / ns:.2f}x" if ns else "-"
        table.append([label, format_ns(result["sim_ns"])] + [format_ns(ns)] * stepped + [speedup])
    print()
    print(box_table(["Variant", "Total"] + ["Median step"] * stepped + ["Speed-up"], table,
                    ["<", ">"] + [">"] * stepped + [">"]))
    print(f"Speed-up: of the {measure_name}, against the first variant.")
    chart.save_bar_chart(chart_path, f"{stem} on {', '.join(presets)}: {measure_name}",
                         [(label, ns) for (label, _, _), ns in zip(rows, times)])
    print(f"Chart: {chart_path}")
    return 0
