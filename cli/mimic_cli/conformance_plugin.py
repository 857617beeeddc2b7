"""pytest plugin of `mimic test-torch` (`pytest -p mimic_cli.conformance_plugin`): records each
test as JSON lines in the file named by $MIMIC_TEST_TORCH_RESULTS: a "start" record before it
runs (so that the parent knows which test a crash or hang hit), then its outcome, the first
line of its failure or skip reason, the ops that went through the CPU fallback and whether it
did any work on the device. pytest's own output says none of this.

$MIMIC_TEST_TORCH_DESELECT names a file of test ids (one a line) not to run again, the tests a
crashed child had already finished; $MIMIC_TEST_TORCH_DEVICE_CLASSES=1 keeps only the classes
instantiate_device_type_tests generated (they have a device_type)."""
import json
import os
import sys

RESULTS_ENV = "MIMIC_TEST_TORCH_RESULTS"
DESELECT_ENV = "MIMIC_TEST_TORCH_DESELECT"
DEVICE_CLASSES_ENV = "MIMIC_TEST_TORCH_DEVICE_CLASSES"
MESSAGE_LIMIT = 300  # characters of a failure's first line kept

_device_type = {}  # test id -> device_type of its generated class (None: not per device)
_work_before = {}  # test id -> the device's allocation counters when its setup began


def _mimic():
    """torch_mimic once the tests have imported it (the device file does); never imported here
    first, so the plugin changes nothing about how the tests start."""
    return sys.modules.get("torch_mimic")


def _write(record):
    path = os.environ.get(RESULTS_ENV)
    if path:
        with open(path, "a") as out:
            out.write(json.dumps(record) + "\n")


def _device_allocations(mimic):
    """Allocations and cache hits of every mimic device: any device tensor a test creates
    moves one of them."""
    total = 0
    for index in range(mimic.device_count()):
        stats = mimic.memory_stats(index)
        total += stats["allocations"] + stats["cache_hits"]
    return total


def pytest_collection_modifyitems(config, items):
    deselect = set()
    path = os.environ.get(DESELECT_ENV)
    if path and os.path.exists(path):
        with open(path) as lines:
            deselect = {line.strip() for line in lines if line.strip()}
    device_only = os.environ.get(DEVICE_CLASSES_ENV) == "1"
    kept, dropped = [], []
    for item in items:
        device_type = getattr(getattr(item, "cls", None), "device_type", None)
        _device_type[item.nodeid] = device_type
        if item.nodeid in deselect or (device_only and device_type is None):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


def pytest_runtest_logstart(nodeid, location):
    if os.environ.get(RESULTS_ENV):
        _write({"test": nodeid, "event": "start"})


def pytest_runtest_setup(item):
    mimic = _mimic()
    if mimic is not None:
        mimic.reset_fallback_report()
        _work_before[item.nodeid] = _device_allocations(mimic)


def _first_line(report):
    """The exception type and message of a failure, or a skip's reason, on one line."""
    longrepr = report.longrepr
    if isinstance(longrepr, tuple):  # a skip: (file, line, "Skipped: reason")
        text = str(longrepr[2])
        text = text[len("Skipped: "):] if text.startswith("Skipped: ") else text
    else:
        crash = getattr(longrepr, "reprcrash", None)
        text = crash.message if crash is not None else str(longrepr or "")
    text = text.strip().splitlines()[0] if text.strip() else ""
    return text[:MESSAGE_LIMIT]


def pytest_runtest_logreport(report):
    # One record per test: its call, or the setup that skipped or failed it (and a teardown
    # that failed).
    if report.when != "call" and report.passed:
        return
    mimic = _mimic()
    fallback = dict(mimic.fallback_report()) if mimic is not None and report.when == "call" else {}
    device_work = None
    if mimic is not None and report.nodeid in _work_before:
        device_work = bool(fallback) or (
            _device_allocations(mimic) != _work_before[report.nodeid])
    record = {"test": report.nodeid, "outcome": report.outcome, "when": report.when,
              "fallback": fallback, "device_type": _device_type.get(report.nodeid),
              "device_work": device_work, "seconds": round(report.duration, 3),
              "message": "" if report.passed else _first_line(report)}
    _write(record)
