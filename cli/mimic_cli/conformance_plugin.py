"""pytest plugin of `mimic test-torch` (`pytest -p mimic_cli.conformance_plugin`): records each
test's outcome and the ops that went through the CPU fallback during it, as JSON lines in the
file named by $MIMIC_TEST_TORCH_RESULTS. pytest's own output says nothing about the fallback."""
import json
import os
import sys

RESULTS_ENV = "MIMIC_TEST_TORCH_RESULTS"


def _mimic():
    """torch_mimic once the tests have imported it (the device file does); never imported here
    first, so the plugin changes nothing about how the tests start."""
    return sys.modules.get("torch_mimic")


def pytest_runtest_setup(item):
    mimic = _mimic()
    if mimic is not None:
        mimic.reset_fallback_report()


def pytest_runtest_logreport(report):
    # One record per test: its call, or the setup that skipped or failed it (and a teardown
    # that failed).
    if report.when != "call" and report.passed:
        return
    mimic = _mimic()
    fallback = dict(mimic.fallback_report()) if mimic is not None and report.when == "call" else {}
    record = {"test": report.nodeid, "outcome": report.outcome, "when": report.when,
              "fallback": fallback}
    with open(os.environ[RESULTS_ENV], "a") as out:
        out.write(json.dumps(record) + "\n")
