"""mimic test-torch: PyTorch's own tests on the simulated device, with a conformance summary.

Runs what tests/conformance/ holds, each in a child process: the OpInfo runner, which checks
every sample of PyTorch's op database on the device against the CPU, forward and backward, then
the device-generic test module (PyTorch's instantiate_device_type_tests through
TORCH_TEST_DEVICES) under pytest. The summary counts passed / failed / skipped tests per test class
and per op, and how many ran entirely on the device or went through the CPU fallback.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import time

from . import pytorch_files
from .common import PYTHON, UsageError, box_table, package_root, positive_int
from .conformance_plugin import RESULTS_ENV

DEVICE_GENERIC_MODULE = "device_generic_checks.py"
OPINFO_RUNNER = "opinfo_conformance.py"
DEVICE_TESTS = "PRIVATEUSEONE"  # the generated classes of the device (the CPU's are skipped)
# The ops every backend change must keep passing (tests/python/test_conformance.py CORE_OPS).
QUICK_OPS = ["add", "mul", "sub", "div", "exp", "tanh", "sigmoid", "sum", "mean", "amax", "mm",
             "bmm", "addmm", "softmax", "log_softmax", "clamp", "where", "cat", "index_select",
             "gather"]
QUICK_SAMPLES = 8  # samples per op with --quick
ALL_ROWS_UP_TO = 40  # per-op tables longer than this show only the ops that failed
PROGRESS_STEPS = 10  # progress lines of a long run
# torch's dtype names the OpInfo runner takes (complex ones compute through the fallback).
DTYPES = ("float32", "float16", "bfloat16", "float64", "int64", "int32", "int16", "int8", "uint8",
          "bool", "complex64", "complex128")
TASK_LINE = re.compile(r"^\[(\d+)/(\d+)\] (\S+) \[(\w+)\] (\w+)")


class ChildFailed(Exception):
    """A test child that did not get to report (its output is already shown)."""


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "test-torch", help="run PyTorch's device-generic and OpInfo tests on the device",
        description="Runs PyTorch's own tests on the simulated device (tests/conformance/): "
                    "every op of PyTorch's OpInfo database, compared with the CPU forward and "
                    "backward, then the device-generic test module under pytest. Prints passed / "
                    "failed / skipped and CPU-fallback counts per test class and per op, and "
                    "totals. Exit code 1 if any test or op failed. With --pytorch-files, "
                    "runs PyTorch 1.13.1's own test files instead (see below).")
    selection = parser.add_mutually_exclusive_group()
    selection.add_argument("--ops", metavar="NAMES",
                           help="comma-separated op names (add,mul); a name selects its variants "
                                "too (div: div.trunc_rounding, ...). Default: all of op_db")
    selection.add_argument("--quick", action="store_true",
                           help=f"{len(QUICK_OPS)} core ops, at most {QUICK_SAMPLES} samples each "
                                "(under a minute)")
    parser.add_argument("--dtypes", default="float32", metavar="LIST",
                        help="comma-separated dtypes, e.g. float32,float16 (default float32)")
    parser.add_argument("--jobs", metavar="N", type=positive_int, default=2,
                        help="worker processes of the OpInfo runner (default 2)")
    parser.add_argument("--all-ops", action="store_true",
                        help="a row for every op, also in long runs (which list only failures)")
    parser.add_argument("--report", metavar="FILE",
                        help="also save the OpInfo runner's JSON report here")
    files = parser.add_argument_group(
        "PyTorch's test files", "Run PyTorch 1.13.1's own device-generic test files (fetched by "
        "scripts/fetch_pytorch_tests.sh into $MIMIC_PYTORCH_TESTS, default "
        "~/.cache/mimic/pytorch-1.13.1) on mimic and on the CPU, test by test, instead of the "
        "OpInfo runner")
    files.add_argument("--pytorch-files", metavar="all|quick|FILES",
                       help="all 13 files, the ctest's quick selection, or comma-separated "
                            "names (test_view_ops,test_foreach)")
    files.add_argument("--hw-classification", metavar="LIST", default="agnostic,specific",
                       help="which tests to report, by class: agnostic (instantiated per device "
                            "and running on mimic), specific (kept for other devices by "
                            "decorators), unrelated (never touch a device; runs the plain "
                            "classes on the CPU). Default agnostic,specific")
    files.add_argument("--known-failures", metavar="FILE",
                       help="'file::Class::test  # reason' per line: exit code 1 only for a "
                            "failure not listed; listed tests that pass are printed as stale")
    files.add_argument("-k", metavar="EXPR", help="pytest's -k, passed to every run")
    files.add_argument("--watchdog", metavar="SECONDS", type=positive_int, default=120,
                       help="a test running longer is killed and recorded as a hang "
                            "(default 120)")
    parser.add_argument("--conformance-dir", metavar="DIR",
                        help="tests/conformance of the mimic sources (default: those the "
                             "tool was built from)")
    return parser


# -- where the tests are, and how their children run ----------------------------------------


def find_conformance_dir(given):
    """tests/conformance of the source tree: the one the build recorded (the build folder may be
    outside the sources), else found by walking up from the package (run from cli/)."""
    if given:
        if not os.path.isfile(os.path.join(given, OPINFO_RUNNER)):
            raise UsageError(f"'{given}' has no {OPINFO_RUNNER}",
                             "give the tests/conformance directory of the mimic sources")
        return os.path.abspath(given)
    try:
        from . import _build
        if os.path.isfile(os.path.join(_build.CONFORMANCE_DIR, OPINFO_RUNNER)):
            return _build.CONFORMANCE_DIR
    except ImportError:  # the package run from the sources has no _build module
        pass
    directory = os.path.dirname(os.path.abspath(__file__))
    while os.path.dirname(directory) != directory:
        candidate = os.path.join(directory, "tests", "conformance")
        if os.path.isfile(os.path.join(candidate, OPINFO_RUNNER)):
            return candidate
        directory = os.path.dirname(directory)
    raise UsageError("tests/conformance of the mimic sources was not found",
                     "give it with --conformance-dir DIR")


def conformance_env(conformance_dir):
    """As tests/python/test_conformance.py runs them: the conformance directory (runner,
    expecttest stand-in, device file) and the packages on the path, the device for
    instantiate_device_type_tests, the fallback counted but silent."""
    env = dict(os.environ)
    paths = [conformance_dir, package_root()] + [p for p in env.get("PYTHONPATH", "").split(
        os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TORCH_TEST_DEVICES"] = os.path.join(conformance_dir, "torch_test_devices.py")
    env["MIMIC_FALLBACK"] = "silent"
    env["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
    return env


def check_dtypes(text):
    unknown = [name for name in text.split(",") if name.strip() not in DTYPES]
    if unknown or not text.strip():
        raise UsageError(f"unknown dtype '{unknown[0] if unknown else text}'",
                         f"dtypes are {', '.join(DTYPES)}")
    return text


def op_pattern(names):
    """--ops add,div as the runner's regular expression: each name and its variants."""
    ops = [name.strip() for name in names.split(",") if name.strip()]
    if not ops:
        raise UsageError(f"--ops '{names}' names no op", "e.g. --ops add,mul,softmax")
    return ops, "^(" + "|".join(re.escape(op) for op in ops) + r")(\.|$)"


# -- device-generic tests under pytest ------------------------------------------------------


def run_device_generic(conformance_dir, env, work_dir):
    results_path = os.path.join(work_dir, "device_generic.jsonl")
    command = [PYTHON, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "-p", "mimic_cli.conformance_plugin", "-k", DEVICE_TESTS, DEVICE_GENERIC_MODULE]
    print(f"[2/2] device-generic tests: pytest {DEVICE_GENERIC_MODULE} -k {DEVICE_TESTS}",
          flush=True)
    started = time.monotonic()
    done = subprocess.run(command, cwd=conformance_dir, env={**env, RESULTS_ENV: results_path},
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    records = []
    if os.path.exists(results_path):
        with open(results_path) as lines:
            # The plugin's "start" records carry no outcome.
            records = [r for r in map(json.loads, lines) if "outcome" in r]
    # pytest exits 1 when tests failed (they are in the records); anything else is its error.
    if done.returncode not in (0, 1) or not records:
        print(done.stdout[-3000:], file=sys.stderr)
        raise ChildFailed(f"pytest could not run {DEVICE_GENERIC_MODULE} "
                           f"(exit code {done.returncode})")
    print(f"      {len(records)} tests in {time.monotonic() - started:.0f} s", flush=True)
    return records


def class_rows(records):
    """Per test class: passed, failed, skipped, and the tests that used the CPU fallback."""
    classes = {}
    for record in records:
        name = record["test"].split("::")[1]
        counts = classes.setdefault(name, {"passed": 0, "failed": 0, "skipped": 0,
                                           "fallback_tests": 0, "fallback_ops": set()})
        counts[record["outcome"]] += 1
        if record["fallback"]:
            counts["fallback_tests"] += 1
            counts["fallback_ops"].update(record["fallback"])
    return [[name, c["passed"], c["failed"], c["skipped"],
             f"{c['fallback_tests']}" + (f" ({', '.join(sorted(c['fallback_ops']))})"
                                         if c["fallback_ops"] else "")]
            for name, c in sorted(classes.items())]


def print_device_generic(records):
    print("\nDevice-generic tests (PyTorch's instantiate_device_type_tests, on the device):")
    print(box_table(["test class", "passed", "failed", "skipped", "tests with CPU fallback"],
                    class_rows(records), align=["<", ">", ">", ">", "<"]))
    for record in records:
        if record["outcome"] == "failed":
            print(f"  FAILED {record['test']} ({record['when']})")


# -- the OpInfo runner ----------------------------------------------------------------------


class Progress:
    """Turns the runner's per-op lines into a few progress lines, and every problem."""

    def __init__(self):
        self.shown = 0

    def __call__(self, line):
        match = TASK_LINE.match(line)
        if not match:
            return
        done, total, op, dtype, status = match.groups()
        done, total = int(done), int(total)
        if total <= ALL_ROWS_UP_TO or status not in ("pass", "skip"):
            print(f"      [{done}/{total}] {op} [{dtype}] {status}", flush=True)
        elif done == total or done - self.shown >= total // PROGRESS_STEPS:
            print(f"      [{done}/{total}] ...", flush=True)
        else:
            return
        self.shown = done


def run_opinfo(conformance_dir, env, options, report_path):
    command = [PYTHON, os.path.join(conformance_dir, OPINFO_RUNNER), "--verbose",
               "--dtypes", options["dtypes"], "--jobs", str(options["jobs"]),
               "--report", report_path]
    if options["pattern"]:
        command += ["--ops", options["pattern"]]
    if options["limit_samples"]:
        command += ["--limit-samples", str(options["limit_samples"])]
    print(f"[1/2] OpInfo conformance ({options['what']}, {options['dtypes']}, "
          f"--jobs {options['jobs']})", flush=True)
    child = subprocess.Popen(command, cwd=conformance_dir, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
    progress, tail = Progress(), []
    for line in child.stdout:
        progress(line)
        tail = (tail + [line])[-20:]
    child.wait()
    if child.returncode != 0:
        last = tail[-1].strip() if tail else ""
        if "no op of op_db matches" in last:
            raise UsageError(f"no op of PyTorch's op_db is named {options['what']}",
                             "names are op_db's, e.g. add, mul, div, nn.functional.relu")
        sys.stderr.write("".join(tail))
        raise ChildFailed(f"the OpInfo runner failed (exit code {child.returncode})")
    with open(report_path) as f:
        return json.load(f)


def shorten(text, width=48):
    return text if len(text) <= width else text[:width - 3] + "..."


def op_rows(results, all_ops):
    rows = []
    for r in results:
        if r["status"] in ("pass", "skip") and not all_ops:
            continue
        samples = r["samples"]
        fallback = f"{r['fallback']}" + (f" ({shorten(', '.join(sorted(r['fallback_ops'])))})"
                                         if r["fallback_ops"] else "")
        rows.append([r["op"], r["dtype"], r["status"], samples["pass"], samples["fail"],
                     samples["skip"], r["native"], fallback, shorten(r["reason"])])
    return rows


def print_opinfo(report, all_ops):
    results = report["results"]
    all_ops = all_ops or len(results) <= ALL_ROWS_UP_TO
    rows = op_rows(results, all_ops)
    which = "every op" if all_ops else "ops that failed, crashed or timed out"
    print(f"\nOpInfo conformance per op ({which}; samples: passed / failed / skipped, then "
          "how many ran natively or through the CPU fallback):")
    if rows:
        print(box_table(["op", "dtype", "status", "pass", "fail", "skip", "native",
                         "CPU fallback", "first problem"], rows,
                        align=["<", "<", "<", ">", ">", ">", ">", "<", "<"]))
    else:
        print("  (none: every op passed or was skipped)")
    print(fallback_summary(results))


def fallback_summary(results, top=8):
    """Which aten ops the CPU fallback ran, by how many OpInfo ops needed them."""
    needed_by = {}
    for r in results:
        for aten_op in r["fallback_ops"]:
            needed_by[aten_op] = needed_by.get(aten_op, 0) + 1
    using = sum(1 for r in results if r["fallback"])
    if not using:
        return "CPU fallback: none (every sample ran natively on the device)"
    common = sorted(needed_by.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
    return (f"CPU fallback: {using} of {len(results)} ops ran some samples through it; most "
            "needed: " + ", ".join(f"{name} ({count} op{'s' * (count != 1)})"
                                   for name, count in common))


def print_totals(records, report):
    t = report["totals"]
    s = t["samples"]
    rate = "-" if t["pass_rate"] is None else f"{100.0 * t['pass_rate']:.1f}%"
    generic = {outcome: sum(r["outcome"] == outcome for r in records)
               for outcome in ("passed", "failed", "skipped")}
    rows = [["device-generic tests", len(records), generic["passed"], generic["failed"],
             generic["skipped"], "-", "-",
             sum(bool(r["fallback"]) for r in records)],
            ["OpInfo (op, dtype)", len(report["results"]), t["pass"], t["fail"], t["skip"],
             t["crash"] + t["timeout"], rate, "-"],
            ["OpInfo samples", s["pass"] + s["fail"] + s["skip"], s["pass"], s["fail"],
             s["skip"], "-", "-", f"{s['fallback']} of {s['native'] + s['fallback']}"]]
    print(f"\nTotals ({report['options']['jobs']} jobs, OpInfo {report['seconds']:.0f} s; pass "
          "rate = passed / (passed + failed + crashed + timed out)):")
    print(box_table(["", "total", "passed", "failed", "skipped", "crash/timeout", "pass rate",
                     "CPU fallback"], rows, align=["<"] + [">"] * 7))


def run(args):
    conformance_dir = find_conformance_dir(args.conformance_dir)
    env = conformance_env(conformance_dir)
    if args.pytorch_files:
        if args.ops or args.quick:
            raise UsageError("--pytorch-files runs PyTorch's test files, not the OpInfo runner",
                             "leave out --ops and --quick")
        return pytorch_files.run(args, conformance_dir, env)
    if args.quick:
        options = {"what": "--quick: core ops", "pattern": op_pattern(",".join(QUICK_OPS))[1],
                   "limit_samples": QUICK_SAMPLES}
    elif args.ops:
        ops, pattern = op_pattern(args.ops)
        options = {"what": ", ".join(ops), "pattern": pattern, "limit_samples": None}
    else:
        options = {"what": "all of op_db", "pattern": None, "limit_samples": None}
    options.update(dtypes=check_dtypes(args.dtypes), jobs=args.jobs)

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mimic-test-torch-") as work_dir:
        try:
            # The OpInfo runner first: it finds an unknown op name.
            report = run_opinfo(conformance_dir, env, options,
                                args.report or os.path.join(work_dir, "opinfo.json"))
            records = run_device_generic(conformance_dir, env, work_dir)
        except ChildFailed as error:
            print(f"mimic test-torch: {error}", file=sys.stderr)
            return 1
    print_device_generic(records)
    print_opinfo(report, args.all_ops)
    print_totals(records, report)
    if args.report:
        print(f"OpInfo report: {os.path.abspath(args.report)}")
    print(f"Wall time: {time.monotonic() - started:.0f} s")
    failed = any(r["outcome"] == "failed" for r in records) or any(
        r["status"] in ("fail", "crash", "timeout") for r in report["results"])
    return 1 if failed else 0
