"""Shared pieces of the subcommands: user errors with a hint, argument checks, the environment
of a simulated child process and the runner that starts one, and number formatting."""
import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time

PROG = "mimic"
PYTHON = "/usr/bin/python3"  # the interpreter that has torch (PLATFORM.md)
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "leakcheck")


def free_port():
    """A TCP port free on this machine now, for a rendezvous of ranks started next."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class UsageError(Exception):
    """A mistake of the user's: printed as one line and a hint, exit code 2, no traceback."""

    def __init__(self, message, hint=None):
        super().__init__(message)
        self.message = message
        self.hint = hint


def print_usage_error(error):
    print(f"{PROG}: {error.message}", file=sys.stderr)
    if error.hint:
        print(f"hint: {error.hint}", file=sys.stderr)


class Parser(argparse.ArgumentParser):
    """argparse with mimic's error format: one line, a hint naming --help, exit code 2."""

    def error(self, message):
        print_usage_error(UsageError(message, f"{self.prog} --help shows the usage"))
        self.exit(2)


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive whole number, got {text!r}")
    return value


def add_device_options(parser):
    """--preset and --devices, as every subcommand that simulates takes them."""
    parser.add_argument("--preset", metavar="P", default=os.environ.get("MIMIC_PRESET", "default"),
                        help="preset name or .preset file (default: $MIMIC_PRESET or 'default'; "
                             "`mimic presets` lists them)")
    parser.add_argument("--devices", metavar="N", type=positive_int,
                        default=os.environ.get("MIMIC_NUM_DEVICES") or None,
                        help="number of simulated devices (default: the preset's)")


def require_script(path):
    if not os.path.isfile(path):
        what = "is a directory" if os.path.isdir(path) else "not found"
        raise UsageError(f"script '{path}' {what}", "give the path of a Python file")
    return path


def require_output_dir(path, option):
    """Fails before a long run, not after it, when an output file cannot be written."""
    if not os.path.isdir(os.path.dirname(os.path.abspath(path))):
        raise UsageError(f"cannot write '{path}': its directory does not exist",
                         f"give {option} a path in an existing directory")
    return path


def base_overrides(devices):
    """The overrides mimicInit will apply: MIMIC_OVERRIDES from the environment and --devices."""
    parts = [os.environ.get("MIMIC_OVERRIDES", "")]
    if devices:
        parts.append(f"system.num_devices={devices}")
    return ",".join(p for p in parts if p)


def parse_sanitize(text):
    """'memcheck,racecheck' or 'all' as MIMIC_SANITIZE wants it; raises UsageError otherwise."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in SANITIZER_TOOLS + ("all",)]
    if unknown or not names:
        raise UsageError(f"unknown sanitizer tool '{unknown[0] if unknown else text}' "
                         f"(known: {', '.join(SANITIZER_TOOLS)}, all)",
                         "--sanitize all turns every tool on")
    return ",".join(names)


def package_root():
    """The directory that holds mimic_cli and torch_mimic (build/python)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def child_env(preset, devices=None, overrides=None, sanitize=None, sanitize_report=None):
    """The environment of a child that simulates: ours, plus the device choice for mimicInit.
    overrides replaces MIMIC_OVERRIDES (give it base_overrides() and more)."""
    env = dict(os.environ)
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = package_root() + (os.pathsep + path if path else "")
    env["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
    env["MIMIC_PRESET"] = preset
    env.pop("MIMIC_NUM_DEVICES", None)
    if devices:
        env["MIMIC_NUM_DEVICES"] = str(devices)
    if overrides is not None:  # else the environment's MIMIC_OVERRIDES stays in force
        env["MIMIC_OVERRIDES"] = overrides
    for name in ("MIMIC_SANITIZE", "MIMIC_SANITIZE_REPORT"):
        env.pop(name, None)
    if sanitize:
        env["MIMIC_SANITIZE"] = sanitize
        env["MIMIC_SANITIZE_REPORT"] = sanitize_report
    return env


def run_python(args, env, quiet=False):
    """Runs `python3 ARGS` with env; returns (exit code, wall seconds). With quiet, the child's
    output is captured and shown only if it fails, so progress lines stay readable.

    SIGTERM and SIGINT sent to this process go to the child, and this process waits for the
    child to end, so that a stopped `mimic run` leaves no child behind and still cleans up. A
    child ended by a signal gives 128 + its number, as shells report it."""
    start = time.monotonic()
    sys.stdout.flush()
    pipe = subprocess.PIPE if quiet else None
    child = subprocess.Popen([PYTHON] + list(args), env=env, stdout=pipe,
                             stderr=subprocess.STDOUT if quiet else None, text=True)

    def forward(signum, _frame):
        if child.poll() is None:
            child.send_signal(signum)

    previous = {s: signal.signal(s, forward) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        output, _ = child.communicate()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if quiet and child.returncode != 0:  # below the caller's unfinished progress line
        sys.stdout.write("\n" + output)
    code = child.returncode
    return (128 - code if code < 0 else code), time.monotonic() - start


def format_ns(ns):
    """Simulated time with a unit that keeps three or four significant digits."""
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.3f} {unit}"
    return f"{ns:.0f} ns"


def format_bytes(count):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}".replace(".0 ", " ")
    return f"{count} B"


def box_table(headers, rows, align=None):
    """A table in boxes, as nvidia-smi draws them; align: one of '<' or '>' per column."""
    align = align or ["<"] * len(headers)
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in [headers] + cells) for i in range(len(headers))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    heavy = rule.replace("-", "=")

    def line(row):
        return "|" + "|".join(f" {c:{a}{w}} " for c, a, w in zip(row, align, widths)) + "|"

    return "\n".join([rule, line(headers), heavy] + [line(r) for r in cells] + [rule])


def run_script(script, script_args, env, result_path, trace=None, timeline=None, top=10,
               quiet=False):
    """Runs a user's script in a child on the simulated devices (mimic_cli.runner).

    Returns (exit code, wall seconds, result): result is the runner's JSON as a dict (simulated
    time, step marks, fallback counts; with trace: the trace and timeline paths and the report
    summary), or None if the child died before writing it."""
    args = ["-m", "mimic_cli.runner", "--result", result_path, "--top", str(top)]
    if trace:
        args += ["--trace", trace, "--timeline", timeline]
    if os.path.exists(result_path):
        os.remove(result_path)
    code, seconds = run_python(args + ["--", script] + list(script_args), env, quiet)
    result = None
    if os.path.exists(result_path):
        with open(result_path) as src:
            result = json.load(src)
    return code, seconds, result
