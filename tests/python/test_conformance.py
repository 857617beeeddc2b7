"""PyTorch's own tests on the mimic device (tests/conformance/).

(a) The TORCH_TEST_DEVICES mechanism: a small device-generic test module runs with the mimic
    test base, and its generated PRIVATEUSEONE tests pass.
(b) The OpInfo conformance runner on core ops that must all pass, with no crash.
(c) The runner over all of op_db (float32, about a minute) reports every op: crashes and hangs
    of the backend are results, never a lost run. Its pass rate is for the report, not a gate.

All run in subprocesses: they import torch.testing._internal (which parses sys.argv) and start
simulations of their own.
"""
import json
import os
import re
import subprocess
import sys

import pytest

TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFORMANCE_DIR = os.path.join(TESTS_DIR, "conformance")

# Core ops (full names: name or name.variant) the device must match the CPU on, forward and
# backward, in float32.
CORE_OPS = [
    "add", "mul", "sub", "div.no_rounding_mode", "div.trunc_rounding", "div.floor_rounding",
    "exp", "tanh", "sigmoid", "sum", "mean", "amax", "mm", "bmm", "addmm", "softmax",
    "log_softmax", "clamp", "where", "cat", "index_select", "gather",
]


def conformance_env():
    """The environment of the subprocesses: tests/conformance (expecttest stand-in, runner,
    device file) ahead of the PYTHONPATH ctest sets (the build's python directory)."""
    env = dict(os.environ)
    paths = [CONFORMANCE_DIR] + [path for path in env.get("PYTHONPATH", "").split(os.pathsep)
                                 if path]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    env["TORCH_TEST_DEVICES"] = os.path.join(CONFORMANCE_DIR, "torch_test_devices.py")
    env.setdefault("MIMIC_FALLBACK", "silent")
    env.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    return env


def test_device_generic_tests_run_on_the_device():
    module = os.path.join(CONFORMANCE_DIR, "device_generic_checks.py")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", module],
        cwd=CONFORMANCE_DIR, env=conformance_env(), capture_output=True, text=True, timeout=600)
    output = completed.stdout + completed.stderr

    outcomes = dict((test, outcome) for outcome, test in re.findall(
        r"^(PASSED|FAILED|ERROR|SKIPPED)\S* \S*::(TestMimicDeviceGeneric\w+::\w+)", output,
        re.MULTILINE))
    device_tests = {test: outcome for test, outcome in outcomes.items()
                    if test.startswith("TestMimicDeviceGenericPRIVATEUSEONE::")}
    assert completed.returncode == 0, output[-4000:]
    # Every kind of test was generated for the device: plain, @dtypes, multi-device, @ops.
    expected = [
        "test_tensor_lands_on_device_privateuseone",
        "test_add_matches_cpu_privateuseone_float32",
        "test_add_matches_cpu_privateuseone_int64",
        "test_primary_device_comes_first_privateuseone",
        "test_expect_inline_privateuseone",
        "test_samples_match_cpu_add_privateuseone_float32",
        "test_samples_match_cpu_mm_privateuseone_float32",
    ]
    for name in expected:
        assert device_tests.get(f"TestMimicDeviceGenericPRIVATEUSEONE::{name}") == "PASSED", \
            f"{name}: {device_tests}"
    assert all(outcome == "PASSED" for outcome in device_tests.values()), device_tests


def run_conformance(report_path, *options):
    """Runs the conformance runner in float32; returns its JSON report."""
    completed = subprocess.run(
        [sys.executable, os.path.join(CONFORMANCE_DIR, "opinfo_conformance.py"),
         "--dtypes", "float32", "--jobs", "2", "--report", str(report_path), *options],
        cwd=CONFORMANCE_DIR, env=conformance_env(), capture_output=True, text=True, timeout=900)
    assert completed.returncode == 0, (completed.stdout + completed.stderr)[-4000:]
    return json.loads(report_path.read_text())


def test_core_ops_conform(tmp_path):
    pattern = "^(" + "|".join(re.escape(name) for name in CORE_OPS) + ")$"
    report = run_conformance(tmp_path / "core_ops.json", "--ops", pattern, "--timeout", "120")
    results = {result["op"]: result for result in report["results"]}
    assert sorted(results) == sorted(CORE_OPS)
    problems = {name: f"{result['status']}: {result['reason']}"
                for name, result in results.items() if result["status"] != "pass"}
    assert not problems, "\n".join(f"{name}: {problem}" for name, problem in problems.items())
    assert report["totals"]["crash"] == 0 and report["totals"]["timeout"] == 0
    assert report["totals"]["pass_rate"] == pytest.approx(1.0)


def op_db_names():
    listing = subprocess.run(
        [sys.executable, "-c", "import opinfo_conformance as runner\n"
         "print('\\n'.join(runner.full_name(op) for op in runner.load_op_db()))"],
        cwd=CONFORMANCE_DIR, env=conformance_env(), capture_output=True, text=True, timeout=300,
        check=True)
    return sorted(listing.stdout.split())


def test_whole_op_db_is_reported(tmp_path):
    report = run_conformance(tmp_path / "op_db.json")
    assert sorted(result["op"] for result in report["results"]) == op_db_names()
    runner_errors = [f"{result['op']}: {result['reason']}" for result in report["results"]
                     if result["reason"].startswith("runner error")]
    assert not runner_errors, "\n".join(runner_errors)
    totals = report["totals"]
    print(f"op_db float32: {totals['pass']} pass, {totals['fail']} fail, {totals['skip']} skip, "
          f"{totals['crash']} crash, {totals['timeout']} timeout in {report['seconds']} s")
