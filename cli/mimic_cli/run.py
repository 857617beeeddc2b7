"""mimic run SCRIPT.py: runs a PyTorch script on the simulated devices with the profiler on, then
reports where simulated time went, the top kernels, the saved trace and timeline, and the
sanitizer's findings."""
import os
import tempfile

from . import compile_summary, presets_api
from .common import (add_device_options, base_overrides, child_env, parse_sanitize, positive_int,
                     require_output_dir, require_script, run_script)
from .report import format_run_report


TAKES_SCRIPT_ARGS = True
USAGE = ("mimic run SCRIPT.py [--preset P] [--devices N] [--timing-only] [--trace FILE] "
         "[--sanitize TOOLS] [--top N] [--compile [--compile-mode MODE]] [-- ARGS...]")
TIMING_ONLY_HELP = (
    "simulate without computing values (MIMIC_MODE=timing for the script): the same simulated "
    "times as a full run, for far less host time and memory; reads of device data on the host "
    "(.item(), .cpu(), printing, the CPU fallback, nonzero's size) get placeholder zeros, and "
    "the report lists them per op and Python line, as a branch on them does not follow the "
    "real program")
COMPILE_HELP = (
    "torch_mimic.compile in the report: every torch_mimic.compile call of the script runs in "
    "--compile-mode, whatever mode it asks for, and the report adds, per compiled model or "
    "function, its captures, recompiles and fused kernels, and the share of kernel time the "
    "fused kernels took (in the kernel table they are named by the ops they contain, e.g. "
    "'mimic_pointwise_3 [aten.add+aten.relu]'); compile_report() is saved beside the trace "
    "(SCRIPT.trace.compile.json by default). --compile compiles nothing by itself: a script "
    "that never calls torch_mimic.compile runs eager, and the report says so")


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "run", usage=USAGE,
        help="run a PyTorch script on the simulated devices and report on it",
        description="Runs SCRIPT as __main__ in a child process on the simulated devices "
                    "(torch.device('privateuseone', i)), profiled from start to end, then prints "
                    "the simulated time breakdown and the top kernels and saves the trace. "
                    "Arguments after -- go to the script. Scripts may call mimic_cli.step() "
                    "after each training step to get step times.")
    parser.add_argument("script", help="the Python script to run")
    add_device_options(parser)
    parser.add_argument("--trace", metavar="FILE",
                        help="Chrome trace JSON to write (default: SCRIPT's name + .trace.json "
                             "in the current directory); the HTML timeline goes beside it")
    parser.add_argument("--sanitize", metavar="TOOLS",
                        help="memcheck,racecheck,initcheck,leakcheck or all: check the run "
                             "(default: $MIMIC_SANITIZE)")
    parser.add_argument("--top", type=positive_int, default=10, metavar="N",
                        help="kernels in the table (default 10)")
    parser.add_argument("--timing-only", action="store_true", help=TIMING_ONLY_HELP)
    parser.add_argument("--compile", action="store_true", help=COMPILE_HELP)
    parser.add_argument("--compile-mode", choices=compile_summary.MODES, metavar="MODE",
                        help="with --compile (implies it): default (fuse), no-fusion (capture, "
                             "then run every node as its eager op), debug (also print each "
                             "kernel's program) or eager (torch_mimic.compile returns its "
                             "argument unchanged: the baseline to compare with); default: "
                             "default")
    return parser


def format_timing_mode(report, top=10, warnings_in="above"):
    """torch_mimic.timing_mode_report() as text: the totals, then the `top` most frequent
    (kind, op, Python line) places that read placeholder zeros; warnings_in: where the
    process's warnings went."""
    lines = [f"timing only: {report['total_reads']} host reads of device data got placeholder "
             f"zeros ({report['total_bytes']} bytes, {len(report['reads'])} places)"]
    for read in report["reads"][:top]:
        where = read["where"] or "(autograd's thread)"
        lines.append(f"  {read['count']:>8}  {read['kind']:<8}  {read['op']:<32}  {where}")
    if len(report["reads"]) > top:
        lines.append(f"  ... and {len(report['reads']) - top} more places")
    if report["reads"]:
        lines.append("  A Python branch or an output size that depends on these values does not "
                     f"follow the real program (see the warnings {warnings_in}, one per "
                     "place).")
    return "\n".join(lines)


def _sanitizer_report_path(scratch):
    """The environment's MIMIC_SANITIZE_REPORT when the report can read it back (no %p in it),
    else a file in the scratch folder."""
    wanted = os.environ.get("MIMIC_SANITIZE_REPORT")
    if wanted and "%p" not in wanted:
        return os.path.abspath(wanted)
    return os.path.join(scratch, "sanitizer.json")


def run(args):
    require_script(args.script)
    presets_api.check(args.preset, base_overrides(args.devices))
    # The environment's MIMIC_SANITIZE is honoured as --sanitize (which wins over it).
    sanitize_text = args.sanitize if args.sanitize is not None else os.environ.get("MIMIC_SANITIZE")
    sanitize = parse_sanitize(sanitize_text) if sanitize_text else None
    stem = os.path.splitext(os.path.basename(args.script))[0]
    # Absolute, so that a script that changes directory still writes where the user asked.
    trace = os.path.abspath(args.trace or f"{stem}.trace.json")
    timeline = os.path.splitext(trace)[0] + ".html"
    require_output_dir(trace, "--trace")
    with tempfile.TemporaryDirectory(prefix="mimic-run-") as scratch:
        report_path = _sanitizer_report_path(scratch) if sanitize else None
        env = child_env(args.preset, args.devices, sanitize=sanitize, sanitize_report=report_path)
        compile_mode = args.compile_mode or ("default" if args.compile else None)
        if args.timing_only:
            env["MIMIC_MODE"] = "timing"
        env.pop(compile_summary.ENV, None)
        if compile_mode:
            env[compile_summary.ENV] = compile_mode
        print(f"mimic: running {args.script} on preset {args.preset}"
              + (f", {args.devices} devices" if args.devices else "")
              + (", timing only" if args.timing_only else "") + " ...", flush=True)
        code, seconds, result = run_script(args.script, args.script_args, env,
                                           os.path.join(scratch, "result.json"), trace, timeline,
                                           args.top)
        print(f"\n==== mimic report: {args.script} ({seconds:.1f} s wall) ====")
        if result is None:
            print(f"mimic: {args.script} stopped before the report could be made (exit {code})")
            return code or 1
        print(format_run_report(result, report_path))
        if result.get("timing_mode", {}).get("mode") == "timing":
            print("\n" + format_timing_mode(result["timing_mode"]))
        if "compile" in result:
            print("\n" + compile_summary.format_compile(result["compile"],
                                                        result["compile"]["report"]))
    if code:
        print(f"\nmimic: {args.script} exited with code {code}")
    return code
