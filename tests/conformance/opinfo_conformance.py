#!/usr/bin/python3
"""OpInfo conformance of the mimic device: PyTorch's own op database, run on the CPU and on the
device, with outputs and input gradients compared.

For every op of ``torch.testing._internal.common_methods_invocations.op_db`` and every requested
dtype the op supports on the CPU, each sample input runs on the CPU (the reference) and on the
device. Outputs are compared with ``torch.testing.assert_close`` (the OpInfo's tolerance
overrides for the dtype where it has any, else the dtype's defaults, and at least the defaults of
each result's own dtype); where they differ, the device passes if it is at least as accurate as
the CPU against a float64 reference (opinfo_checks.py states the rule). Where the op supports
autograd for the dtype, the gradients of the inputs are compared too: both sides back-propagate
the same random cotangent (fixed seed) through the floating outputs. Each (op, dtype) is recorded
as:

- ``pass``: every sample that ran matched;
- ``fail``: a sample raised on the device or did not match (the first error, on one line);
- ``skip``: not comparable: dtype not supported on CPU, no samples, the CPU reference itself
  fails, ``random`` (the outputs depend on the RNG, which differs between CPU and device), or
  the OpInfo says the output is not comparable (uninitialised memory: empty & co.);
- ``crash`` / ``timeout``: the worker process died, or exceeded ``--timeout`` on that op.

Every sample that ran on the device also counts as ``native`` or ``fallback``: whether any op of
it went through the CPU fallback (``torch_mimic.fallback_report()``), and which ones did.

Ops run in worker processes (``--jobs``), so a crash or a hang costs one op and a fresh worker,
never the run. The pass rate is pass / (pass + fail + crash + timeout): skips do not count.

Usage (PYTHONPATH must hold the build's python directory and tests/conformance)::

    export PYTHONPATH=/work/main/build/python:/work/main/tests/conformance
    # a few ops
    /usr/bin/python3 tests/conformance/opinfo_conformance.py --ops '^(add|mm|softmax)$'
    # the full run over op_db in float32: 621 ops, about 50 s with --jobs 2 on 2 cores
    /usr/bin/python3 tests/conformance/opinfo_conformance.py --jobs 2 \\
        --report conformance_float32.json --markdown conformance_float32.md

``--ops`` is a regular expression searched in the op's full name (``name`` or
``name.variant``, e.g. ``div.floor_rounding``).
"""
import argparse
import collections
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import tempfile
import time

# Fallbacks to the CPU are what this runner measures, not something to warn about.
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

from opinfo_checks import (  # noqa: E402
    check_op, describe_error, empty_result, full_name, load_op_db, one_line,
)

STATUSES = ("pass", "fail", "skip", "crash", "timeout")
RUN_STATUSES = ("pass", "fail", "crash", "timeout")  # the denominator of the pass rate
PROBLEM_STATUSES = ("fail", "crash", "timeout")

WORKER_START_TIMEOUT = 300.0  # importing torch, torch_mimic and op_db


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Runs PyTorch's OpInfo samples on the CPU and the mimic device and compares.")
    parser.add_argument("--ops", default=None,
                        help="regular expression searched in the op's full name (name.variant)")
    parser.add_argument("--dtypes", default="float32",
                        help="comma-separated dtypes, e.g. float32,float16,int64 (default float32)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--report", default=None, help="where to write the JSON report")
    parser.add_argument("--markdown", default=None, help="where to write a markdown report")
    parser.add_argument("--limit-samples", type=int, default=None,
                        help="run at most this many samples per op and dtype")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one op may take for one dtype, all samples (default 60)")
    parser.add_argument("--verbose", action="store_true",
                        help="print every result, not only the problems")
    options = parser.parse_args(argv)
    if options.jobs < 1:
        parser.error("--jobs must be at least 1")
    options.dtype_names = [name.strip() for name in options.dtypes.split(",") if name.strip()]
    for name in options.dtype_names:
        if not isinstance(getattr(torch, name, None), torch.dtype):
            parser.error(f"unknown dtype {name!r}")
    return options


def worker_main(connection, log_path, limit_samples):
    """A worker process: checks the (op index, dtype name) tasks it receives until None.

    Its stdout and stderr go to ``log_path``, emptied before each task, so that after a crash
    the log holds the crashing op's last words.
    """
    # O_APPEND: after the log is emptied, writes start again at its beginning.
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)

    import warnings
    warnings.simplefilter("ignore")
    import torch_mimic

    # The workers share the cores with the simulator's threads: no intra-op CPU parallelism.
    torch.set_num_threads(1)
    op_db = load_op_db()
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    connection.send(("ready", device.type))

    while True:
        task = connection.recv()
        if task is None:
            return
        index, dtype_name = task
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(log_fd, 0)
        started = time.monotonic()
        try:
            result = check_op(op_db[index], getattr(torch, dtype_name), device, limit_samples)
        except Exception as error:  # a bug of the runner's own must not lose the op
            result = empty_result("fail", f"runner error: {describe_error(error)}")
        result["seconds"] = round(time.monotonic() - started, 3)
        connection.send(("result", result))


# ------------------------------------------------------------------------------------------
# Main side: the worker pool.
# ------------------------------------------------------------------------------------------

class Worker:
    """One worker process, its pipe, its log and the task it runs."""

    def __init__(self, context, log_path, limit_samples):
        self.log_path = log_path
        self.connection, child_connection = context.Pipe()
        self.process = context.Process(target=worker_main, daemon=True,
                                       args=(child_connection, log_path, limit_samples))
        self.process.start()
        child_connection.close()
        self.device_type = None  # set by the worker's "ready" message
        self.task = None
        self.timeout = None
        # Until then, the start-up deadline; then the running task's; None while idle.
        self.deadline = time.monotonic() + WORKER_START_TIMEOUT

    @property
    def ready(self):
        return self.device_type is not None

    def assign(self, task, timeout):
        self.task = task
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.connection.send(task)

    def collect(self, on_result):
        """Takes the worker's messages. Returns None while the worker is fine, else why it is
        lost: "crash" or "timeout" and a reason."""
        try:
            while self.connection.poll():
                kind, payload = self.connection.recv()
                if kind == "ready":
                    self.device_type = payload
                else:
                    on_result(self.task, payload)
                    self.task = None
                self.deadline = None
        except (EOFError, OSError):
            pass  # the worker died, maybe in the middle of a message: handled below
        if not self.process.is_alive():
            self.process.join()
            if not self.ready:
                raise SystemExit(f"a worker died while starting (exit code "
                                 f"{self.process.exitcode}): {self.last_words()}")
            return "crash", self._with_last_words(f"worker died (exit code "
                                                  f"{self.process.exitcode})")
        if self.deadline is not None and time.monotonic() > self.deadline:
            if not self.ready:
                raise SystemExit(f"a worker did not start in {WORKER_START_TIMEOUT:g} s: "
                                 f"{self.last_words()}")
            return "timeout", self._with_last_words(f"no result in {self.timeout:g} s")
        return None

    def _with_last_words(self, reason):
        """The reason, and the sample the worker was at (the last line of its log)."""
        last_words = self.last_words()
        return f"{reason}: {last_words}" if last_words else reason

    def last_words(self):
        """The last non-empty line of the worker's log."""
        try:
            with open(self.log_path, errors="replace") as log:
                lines = [line.strip() for line in log if line.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def stop(self):
        if self.process.is_alive():
            try:
                self.connection.send(None)
                self.process.join(10)
            except OSError:
                pass
        self.kill()

    def kill(self):
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def run_tasks(tasks, options, on_result):
    """Runs (op index, dtype name) tasks on ``options.jobs`` workers and calls
    on_result(task, result) as they finish. A worker that dies or overruns its deadline costs
    its task (recorded as crash or timeout) and is replaced. Returns the device type."""
    with tempfile.TemporaryDirectory(prefix="opinfo_conformance_") as log_dir:
        return _run_tasks_logging_to(log_dir, tasks, options, on_result)


def _run_tasks_logging_to(log_dir, tasks, options, on_result):
    context = multiprocessing.get_context("spawn")
    spawned = itertools.count()

    def new_worker():
        return Worker(context, os.path.join(log_dir, f"worker{next(spawned)}.log"),
                      options.limit_samples)

    pending = collections.deque(tasks)
    workers = [new_worker() for _ in range(min(options.jobs, len(tasks)))]
    device_type = None
    try:
        while pending or any(worker.task for worker in workers):
            for worker in workers:
                if worker.ready and worker.task is None and pending:
                    worker.assign(pending.popleft(), options.timeout)
            deadlines = [worker.deadline for worker in workers if worker.deadline is not None]
            wait_for = max(0.0, min(deadlines) - time.monotonic()) + 0.1 if deadlines else None
            multiprocessing.connection.wait(
                [worker.connection for worker in workers]
                + [worker.process.sentinel for worker in workers], timeout=wait_for)

            survivors = []
            for worker in workers:
                lost = worker.collect(on_result)
                device_type = device_type or worker.device_type
                if lost is None:
                    survivors.append(worker)
                    continue
                status, reason = lost
                if worker.task is not None:
                    on_result(worker.task, empty_result(status, one_line(reason)))
                worker.kill()
                if pending:
                    survivors.append(new_worker())
            workers = survivors
    finally:
        for worker in workers:
            worker.stop()
    return device_type


# ------------------------------------------------------------------------------------------
# Reports.
# ------------------------------------------------------------------------------------------

def tally(results):
    counts = {status: 0 for status in STATUSES}
    samples = {"pass": 0, "fail": 0, "skip": 0, "native": 0, "fallback": 0}
    for result in results:
        counts[result["status"]] += 1
        for key in ("pass", "fail", "skip"):
            samples[key] += result["samples"][key]
        samples["native"] += result["native"]
        samples["fallback"] += result["fallback"]
    run = sum(counts[status] for status in RUN_STATUSES)
    counts["pass_rate"] = counts["pass"] / run if run else None
    counts["samples"] = samples
    return counts


def failure_category(result):
    """A short label that groups failures with the same cause."""
    if result["status"] in ("crash", "timeout"):
        return result["status"]
    match = re.match(r"sample \d+, ([^:]+): (.*)", result["reason"])
    if not match:
        return result["reason"][:70]
    stage, detail = match.groups()
    if "not close" in detail or "are not equal" in detail:
        return f"{stage}: values differ"
    # Numbers (sizes, counts, indices) vary between ops that fail for the same reason.
    return f"{stage}: {re.sub(r'[0-9]+', 'N', detail)[:70]}"


def categories(results):
    return collections.Counter(failure_category(result) for result in results
                               if result["status"] in PROBLEM_STATUSES).most_common()


def format_rate(rate):
    return "-" if rate is None else f"{100.0 * rate:.1f}%"


def summary_table(report):
    header = ["dtype", "ops", "pass", "fail", "skip", "crash", "timeout", "pass rate",
              "samples pass/run", "samples native/fallback"]
    rows = []
    for label, counts in list(report["per_dtype"].items()) + [("total", report["totals"])]:
        samples = counts["samples"]
        rows.append([label, sum(counts[status] for status in STATUSES)]
                    + [counts[status] for status in STATUSES]
                    + [format_rate(counts["pass_rate"]),
                       f"{samples['pass']}/{samples['pass'] + samples['fail']}",
                       f"{samples['native']}/{samples['fallback']}"])
    return header, rows


def skip_reasons(results):
    """Skip reasons without their details (the CPU's error messages), with counts."""
    return collections.Counter(result["reason"].split(":")[0].split(",")[-1].strip()
                               for result in results
                               if result["status"] == "skip").most_common()


def print_summary(report):
    results = report["results"]
    header, rows = summary_table(report)
    widths = [max(len(str(row[column])) for row in [header] + rows)
              for column in range(len(header))]
    print(f"\nOpInfo conformance on {report['device']}: {len(results)} (op, dtype) in "
          f"{report['seconds']:.0f} s with --jobs {report['options']['jobs']}")
    for row in [header] + rows:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)))
    problems = [result for result in results if result["status"] in PROBLEM_STATUSES]
    if problems:
        print("\nFailure categories:")
        for label, count in categories(results):
            print(f"  {count:4d}  {label}")
        print("\nFailing ops:")
        for result in problems:
            print(f"  {result['op']} [{result['dtype']}] {result['status']}: {result['reason']}")
    reasons = skip_reasons(results)
    if reasons:
        print("\nSkip reasons: " + ", ".join(f"{reason} ({count})" for reason, count in reasons))


def markdown_report(report):
    def table(header, rows):
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |"
                  for row in rows]
        return lines

    results = report["results"]
    lines = [f"# OpInfo conformance on {report['device']}", "",
             f"PyTorch {report['torch_version']}, dtypes {', '.join(report['dtypes'])}: "
             f"{len(results)} (op, dtype) in {report['seconds']:.0f} s with "
             f"--jobs {report['options']['jobs']}. "
             "Pass rate = pass / (pass + fail + crash + timeout).", ""]
    lines += table(*summary_table(report))
    problems = [result for result in results if result["status"] in PROBLEM_STATUSES]
    if problems:
        lines += ["", "## Failure categories", ""]
        lines += table(["ops", "category"], [[count, label]
                                             for label, count in categories(results)])
        lines += ["", "## Failing ops", ""]
        lines += table(["op", "dtype", "status", "reason"],
                       [[r["op"], r["dtype"], r["status"], r["reason"]] for r in problems])
    fallback_ops = collections.Counter()
    for result in results:
        fallback_ops.update(result["fallback_ops"])
    if fallback_ops:
        lines += ["", "## Ops that fell back to the CPU in passing samples", ""]
        lines += table(["op", "calls"], fallback_ops.most_common())
    skips = [result for result in results if result["status"] == "skip"]
    if skips:
        lines += ["", "## Skipped", ""]
        lines += table(["op", "dtype", "reason"],
                       [[r["op"], r["dtype"], r["reason"]] for r in skips])
    return "\n".join(lines) + "\n"


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    op_db = load_op_db()
    pattern = re.compile(options.ops) if options.ops else None
    names = {index: full_name(op) for index, op in enumerate(op_db)
             if pattern is None or pattern.search(full_name(op))}
    if not names:
        raise SystemExit(f"no op of op_db matches {options.ops!r}")
    tasks = [(index, dtype_name) for index in names for dtype_name in options.dtype_names]

    results = {}
    started = time.monotonic()

    def on_result(task, result):
        index, dtype_name = task
        results[task] = result = {"op": names[index], "dtype": dtype_name, **result}
        if options.verbose or result["status"] in PROBLEM_STATUSES:
            reason = f": {result['reason']}" if result["reason"] else ""
            print(f"[{len(results)}/{len(tasks)}] {result['op']} [{dtype_name}] "
                  f"{result['status']}{reason}", flush=True)
        elif len(results) % 50 == 0:
            print(f"[{len(results)}/{len(tasks)}] ...", flush=True)

    device_type = run_tasks(tasks, options, on_result)
    ordered = [results[task] for task in tasks]
    report = {
        "torch_version": torch.__version__,
        "device": device_type,
        "dtypes": options.dtype_names,
        "options": {"ops": options.ops, "jobs": options.jobs, "timeout": options.timeout,
                    "limit_samples": options.limit_samples},
        "seconds": round(time.monotonic() - started, 1),
        "totals": tally(ordered),
        "per_dtype": {name: tally([r for r in ordered if r["dtype"] == name])
                      for name in options.dtype_names},
        "results": ordered,
    }
    print_summary(report)
    if options.report:
        with open(options.report, "w") as file:
            json.dump(report, file, indent=1)
    if options.markdown:
        with open(options.markdown, "w") as file:
            file.write(markdown_report(report))
    return report


if __name__ == "__main__":
    main()
