"""PyTorch 1.13.1's own device-generic test files on mimic, each compared with the same tests
on the CPU (the library behind `mimic test-torch --pytorch-files` and its ctest).

The files come from Debian's source package `pytorch` (scripts/fetch_pytorch_tests.sh puts
its test/ folder in $MIMIC_PYTORCH_TESTS, default ~/.cache/mimic/pytorch-1.13.1). Each file
runs twice under pytest with mimic_cli.conformance_plugin: mimic only
(PYTORCH_TESTING_DEVICE_ONLY_FOR=privateuseone, TORCH_TEST_DEVICES) and CPU only. A child that
dies on a signal has its running test recorded as a crash and is restarted without the tests
it had finished; a test that runs past the watchdog is killed and recorded as a hang. Tests
are matched across the two runs by their id with the device taken out
(TestFooPRIVATEUSEONE::test_x_privateuseone_float32 and TestFooCPU::test_x_cpu_float32 are
both TestFoo::test_x_float32).

Classification (issue 18, item 7):
- unrelated: not instantiated per device (a plain TestCase class), or instantiated but did no
  device work on mimic (no allocation, no fallback) and passed;
- specific: skipped on mimic by a device decorator (onlyNativeDeviceTypes, onlyCPU,
  onlyCUDA, skipMeta, ...: see DEVICE_SKIP) or instantiated for the CPU only;
- agnostic: the rest, the tests any out-of-tree device should pass. The pass rate that counts
  is over them: of the agnostic tests that pass on the CPU, how many pass on mimic.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

# The selection: PyTorch's device-generic files, those instantiate_device_type_tests turns into
# per-device classes, with why each is in.
FILES = {
    "test_torch": "tensor basics: creation, copy, storage, serialization, in-place semantics",
    "test_nn": "modules and functional ops, forward and backward, their error checks",
    "test_ops": "every OpInfo: outputs against references, out=, variants, dtypes, grads",
    "test_autograd": "backward and forward-mode AD, hooks, views and in-place under autograd",
    "test_foreach": "the _foreach_* ops optimizers use, fast and slow paths",
    "test_reductions": "sum/mean/min/max/argmax/var and friends over dims and dtypes",
    "test_unary_ufuncs": "pointwise unary ops against NumPy references, extremal values",
    "test_binary_ufuncs": "pointwise binary ops, broadcasting, type promotion, scalars",
    "test_indexing": "advanced indexing, index_put, masked fill, setitem",
    "test_shape_ops": "flip, roll, nonzero, diagonal, clamp and other shape ops",
    "test_view_ops": "views: aliasing, strides, contiguity, view/reshape/unfold",
    "test_type_promotion": "result dtypes of mixed-dtype ops, out= casting rules",
    "test_tensor_creation_ops": "arange/linspace/empty/full/cat/*_like, random factories",
}
# The ctest's quick selection (file: -k expression or None for the whole file), about a minute
# on this project's 2-core machine (each file is two pytest runs, mimic and CPU, of some 10 s of
# start-up each): test_shape_ops whole (76 agnostic tests) and test_view_ops' TestViewOps (41).
QUICK = {"test_shape_ops": None, "test_view_ops": "TestViewOps"}
CLASSES = ("agnostic", "specific", "unrelated")
DEFAULT_CLASSES = ("agnostic", "specific")  # "unrelated" runs the plain classes on the CPU too
DEVICES = {"mimic": "privateuseone", "cpu": "cpu"}
WATCHDOG_SECONDS = 120
COLLECT_SECONDS = 600  # importing and collecting the biggest files (test_ops) before a test
POLL_SECONDS = 0.2
FAILED = ("failed", "crash", "hang")
FETCH_SCRIPT = "scripts/fetch_pytorch_tests.sh"
# Skip reasons of device decorators: a test skipped on mimic with one of these is specific.
DEVICE_SKIP = re.compile(
    r"Only runs on|onlyNativeDeviceTypes|doesn't run on|privateuseone|PRIVATEUSEONE|"
    r"\b(CUDA|cuda|cuDNN|ROCm|XLA|xla|MPS|mps|[Mm]eta)\b|fewer than \d+ devices|"
    r"not supported on (this )?device|Insufficient .* memory")
_DEVICE_CLASS = re.compile(r"^(?P<base>.+?)(?P<device>PRIVATEUSEONE|CPU)$")


class Missing(Exception):
    """PyTorch's test files are not where the runner looks."""


def test_dir(given=None):
    """test/ of PyTorch 1.13.1's sources, as scripts/fetch_pytorch_tests.sh leaves it."""
    root = given or os.environ.get("MIMIC_PYTORCH_TESTS") or os.path.join(
        os.path.expanduser("~"), ".cache", "mimic", "pytorch-1.13.1")
    directory = root if os.path.basename(root.rstrip("/")) == "test" and not os.path.isdir(
        os.path.join(root, "test")) else os.path.join(root, "test")
    if not os.path.isfile(os.path.join(directory, "test_torch.py")):
        raise Missing(f"PyTorch 1.13.1's test files are not in {directory}: run {FETCH_SCRIPT} "
                      "(it fetches Debian's source package pytorch), or set MIMIC_PYTORCH_TESTS")
    return directory


# -- test ids -----------------------------------------------------------------------------


def normalise(nodeid):
    """file::Class::test with the device taken out of the class and the test name."""
    parts = nodeid.split("::")
    if len(parts) < 3:
        return nodeid
    file, cls, test = parts[0], parts[-2], parts[-1]
    match = _DEVICE_CLASS.match(cls)
    if match:
        device = match.group("device").lower()
        cls = match.group("base")
        # The device suffix is the last _<device> of the name: dtypes (and only they) follow.
        name = re.match(rf"^(?P<head>.*)_{device}(?P<tail>(_\w+)?)$", test)
        if name:
            test = name.group("head") + name.group("tail")
    return "::".join([file] + parts[1:-2] + [cls, test])


def device_of(nodeid):
    """The device a test id's generated class is for ('privateuseone', 'cpu'), else None."""
    parts = nodeid.split("::")
    match = _DEVICE_CLASS.match(parts[-2]) if len(parts) >= 3 else None
    return match.group("device").lower() if match else None


# -- one file on one device, with crash and hang isolation --------------------------------


def _signal_name(returncode):
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def _merge(old, new):
    """A test's records (call, then a failing teardown): the worst outcome wins."""
    if old is None:
        return new
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    if rank[new["outcome"]] > rank[old["outcome"]]:
        merged = dict(new)
        merged["fallback"] = {**old.get("fallback", {}), **new.get("fallback", {})}
        merged["device_work"] = old.get("device_work") or new.get("device_work")
        return merged
    return old


def _crash_detail(log_path, offset):
    """What faulthandler printed about a crash: the fatal error and the innermost frames."""
    with open(log_path, errors="replace") as log:
        log.seek(offset)
        text = log.read()
    start = text.rfind("Fatal Python error")
    if start < 0:
        return ""
    lines = text[start:].splitlines()
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    return "; ".join([lines[0].strip()] + frames[:4])


def _log_tail(log_path, offset, lines=5):
    with open(log_path, errors="replace") as log:
        log.seek(offset)
        return " | ".join(line.strip() for line in log.read().splitlines()[-lines:])


class Child:
    """One pytest child and what it has written so far."""

    def __init__(self, command, cwd, env, results_path, log):
        self.results_path = results_path
        self.position = 0
        self.process = subprocess.Popen(command, cwd=cwd, env=env, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True)

    def new_records(self):
        if not os.path.exists(self.results_path):
            return []
        with open(self.results_path) as results:
            results.seek(self.position)
            text = results.read()
        complete = text[:text.rfind("\n") + 1]  # a line being written waits for the next poll
        self.position += len(complete)
        return [json.loads(line) for line in complete.splitlines()]

    def kill(self):
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait()


def run_file(path, device, env, work_dir, keyword=None, watchdog=WATCHDOG_SECONDS,
             device_classes_only=True, collect_seconds=COLLECT_SECONDS, progress=None):
    """Runs one test file on one device ('mimic' or 'cpu'). Returns (records by test id,
    notes): a record per test (outcome passed / failed / skipped / crash / hang), notes about
    children that could not run at all."""
    name = os.path.splitext(os.path.basename(path))[0]
    stem = os.path.join(work_dir, f"{name}.{device}")
    deselect_path = stem + ".deselect"
    log_path = stem + ".log"
    open(deselect_path, "w").close()
    open(log_path, "w").close()
    command = [sys.executable, "-m", "pytest", "-q", "--tb=no", "-p", "no:cacheprovider",
               "-p", "mimic_cli.conformance_plugin", os.path.basename(path)]
    if keyword:
        command += ["-k", keyword]
    records, started, notes = {}, [], []
    attempt = 0
    while True:
        attempt += 1
        results_path = f"{stem}.{attempt}.jsonl"
        child_env = dict(env, MIMIC_TEST_TORCH_RESULTS=results_path,
                         MIMIC_TEST_TORCH_DESELECT=deselect_path,
                         MIMIC_TEST_TORCH_DEVICE_CLASSES="1" if device_classes_only else "0")
        with open(log_path, "a") as log:
            offset = log.tell()
            child = Child(command, os.path.dirname(path), child_env, results_path, log)
            current, since, hung = None, time.monotonic(), False
            while True:
                finished = child.process.poll() is not None
                for record in child.new_records():
                    since = time.monotonic()
                    if record.get("event") == "start":
                        current = record["test"]
                        started.append(current)
                        continue
                    records[record["test"]] = _merge(records.get(record["test"]), record)
                    if record["when"] != "teardown":
                        current = None
                        if progress:
                            progress(record)
                if finished:
                    break
                limit = watchdog if started else collect_seconds
                if time.monotonic() - since > limit:
                    child.kill()
                    hung = True
                    break
                time.sleep(POLL_SECONDS)
        returncode = child.process.returncode
        with open(deselect_path, "w") as deselect:
            deselect.write("".join(test + "\n" for test in started))
        if hung and current:
            records[current] = _lost(current, device, "hang",
                                     f"hang: ran past the {watchdog} s watchdog")
        elif current:  # the child ended inside a test: a signal, or a test that exited
            how = _signal_name(returncode) if returncode < 0 else f"exit code {returncode}"
            records[current] = _lost(current, device, "crash", f"crash: {how}",
                                     _crash_detail(log_path, offset))
        else:
            if hung:
                notes.append(f"{name} on {device}: no progress for {limit} s outside a test; "
                             "killed")
            elif returncode not in (0, 1, 5):
                notes.append(f"{name} on {device}: pytest exit code {returncode}: "
                             + _log_tail(log_path, offset))
            return records, notes
        if progress:
            progress(records[current])


def _lost(test, device, outcome, message, detail=""):
    """The record of a test whose child died or was killed while it ran."""
    return {"test": test, "outcome": outcome, "when": "call", "fallback": {},
            "device_type": device_of(test) if device_of(test) == DEVICES[device] else None,
            "device_work": None, "message": message, "detail": detail}


def child_env(base_env, device, devices_file):
    """The environment of a child: one device only. The CPU run does not load torch_mimic."""
    env = dict(base_env)
    env["PYTORCH_TESTING_DEVICE_ONLY_FOR"] = DEVICES[device]
    env.pop("TORCH_TEST_DEVICES", None)
    if device == "mimic":
        env["TORCH_TEST_DEVICES"] = devices_file
    return env


# -- comparing, classifying, known failures -----------------------------------------------


def classify(mimic, cpu):
    """unrelated, specific or agnostic (see the module's docstring) from a test's two
    records (either may be None)."""
    record = mimic or cpu
    if record.get("device_type") is None and device_of(record["test"]) is None:
        return "unrelated"
    if mimic is None:
        return "specific"
    if mimic["outcome"] == "skipped" and DEVICE_SKIP.search(mimic.get("message", "")):
        return "specific"
    if mimic["outcome"] == "passed" and mimic.get("device_work") is False:
        return "unrelated"
    return "agnostic"


def compare(mimic_records, cpu_records):
    """One row per normalised test id: its mimic and CPU records and its class."""
    rows = {}
    for key, records in (("mimic", mimic_records), ("cpu", cpu_records)):
        for test, record in records.items():
            rows.setdefault(normalise(test), {"mimic": None, "cpu": None})[key] = record
    for test, row in rows.items():
        row["test"] = test
        row["class"] = classify(row["mimic"], row["cpu"])
        row["mimics"] = is_mimic_failure(row)
    return rows


def outcome(record):
    return record["outcome"] if record else "absent"


def is_mimic_failure(row):
    """Failed, crashed or hung on mimic while not failing on the CPU."""
    return outcome(row["mimic"]) in FAILED and outcome(row["cpu"]) not in FAILED


def read_known_failures(path):
    """`file::Class::test  # reason` per line (normalised ids); blank lines and lines that start
    with # are comments. Returns {test id: reason}."""
    known = {}
    with open(path) as lines:
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            test, _, reason = text.partition("#")
            test, reason = test.strip(), reason.strip()
            if "::" not in test or not reason:
                raise ValueError(f"{path}:{number}: expected 'file::Class::test  # reason', "
                                 f"got '{text}'")
            known[test] = reason
    return known


def check_known(rows, known):
    """(new failures, known failures seen again, stale entries): stale are entries whose test
    ran and is no longer a failure of mimic's."""
    new, again, stale = [], [], []
    for test, row in sorted(rows.items()):
        if row["mimics"]:
            (again if test in known else new).append(test)
        elif test in known:
            stale.append(test)
    return new, again, stale


def cause(record):
    """A failure's cause: exception type and first line, numbers and addresses normalised."""
    text = record.get("message") or record["outcome"]
    text = re.sub(r"0x[0-9a-fA-F]+", "<address>", text)
    text = re.sub(r"\d+(\.\d+)?(e[-+]?\d+)?", "N", text)
    return text[:120]


# -- the whole selection ------------------------------------------------------------------


def counts(records):
    result = {"tests": len(records), "passed": 0, "failed": 0, "skipped": 0, "crash": 0,
              "hang": 0}
    for record in records:
        result[record["outcome"]] += 1
    return result


def summarise(rows, classes):
    """Per-class totals and the agnostic pass rate over the tests that pass on the CPU."""
    chosen = [row for row in rows.values() if row["class"] in classes]
    by_class = {name: sum(row["class"] == name for row in rows.values()) for name in CLASSES}
    agnostic = [row for row in rows.values() if row["class"] == "agnostic"]
    cpu_pass = [row for row in agnostic if outcome(row["cpu"]) == "passed"]
    both = [row for row in cpu_pass if outcome(row["mimic"]) == "passed"]
    return {"tests": len(chosen), "by_class": by_class,
            "mimic": counts([row["mimic"] for row in chosen if row["mimic"]]),
            "cpu": counts([row["cpu"] for row in chosen if row["cpu"]]),
            "agnostic_cpu_pass": len(cpu_pass), "agnostic_both_pass": len(both),
            "agnostic_pass_rate": len(both) / len(cpu_pass) if cpu_pass else None,
            "mimic_failures": sum(row["mimics"] for row in chosen)}


def group_causes(rows):
    """mimic's failures (not failing on the CPU) by cause, most frequent first."""
    groups = {}
    for row in rows.values():
        if row["mimics"]:
            groups.setdefault(cause(row["mimic"]), []).append(row["test"])
    return sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
