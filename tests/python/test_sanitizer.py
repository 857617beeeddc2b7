"""The sanitizer (MIMIC_SANITIZE=all) on the seeded bug corpus (tests/corpus): C++ programs on
the driver and PyTorch programs, each with exactly one known bug, and their fixed versions.
Every bug is found once, with the right classification, in the JSON report; the fixed programs
give none. Each program runs in a process of its own (the sanitizer starts with mimic)."""
import json
import os
import subprocess
import sys

import pytest

CORPUS = os.path.join(os.path.dirname(__file__), "..", "corpus")
BINARIES = os.environ.get("MIMIC_CORPUS_BIN", "")

# program -> the finding its bug must give
CPP = {"oob_write": "out_of_bounds", "use_after_free": "use_after_free",
       "uninit_read": "uninitialized_read", "missing_wait": "race",
       "missing_record_stream": "race", "leak": "leak", "double_free": "double_free"}
PYTHON = {"oob_write": "out_of_bounds", "use_after_free": "use_after_free",
          "uninit_read": "uninitialized_read", "missing_wait_stream": "race",
          "missing_record_stream": "race", "leak": "leak", "double_free": "double_free"}


def sanitize(command, tmp_path, clean):
    report = tmp_path / "report.json"
    env = dict(os.environ, MIMIC_SANITIZE="all", MIMIC_SANITIZE_REPORT=str(report),
               MIMIC_FALLBACK="silent", MIMIC_CORPUS_CLEAN="1" if clean else "0")
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=env,
                          cwd=CORPUS)
    assert done.returncode == 0, done.stderr
    assert report.exists(), done.stderr
    return json.loads(report.read_text()), done.stderr


def check(result, stderr, expected):
    counts = result["counts"]
    assert counts[expected] == 1 and result["total"] == 1, (counts, stderr)
    [finding] = result["findings"]
    assert finding["kind"] == expected
    assert f"mimic {finding['tool']}: {finding['message']}" in stderr  # printed once
    return finding["message"]


def cpp_program(name, clean):
    if not BINARIES:
        pytest.skip("MIMIC_CORPUS_BIN is not set: run through ctest, which builds the corpus")
    return [os.path.join(BINARIES, f"mimic-corpus-{name}" + ("-clean" if clean else ""))]


@pytest.mark.parametrize("name", sorted(CPP))
def test_cpp_bug_is_found(name, tmp_path):
    result, stderr = sanitize(cpp_program(name, False), tmp_path, clean=False)
    message = check(result, stderr, CPP[name])
    assert "mimicMemAlloc #" in message or "region #" in message or "queue" in message


@pytest.mark.parametrize("name", sorted(CPP))
def test_cpp_fixed_program_is_clean(name, tmp_path):
    result, stderr = sanitize(cpp_program(name, True), tmp_path, clean=True)
    assert result["total"] == 0, stderr


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_python_bug_is_found_with_its_python_line(name, tmp_path):
    result, stderr = sanitize([sys.executable, f"{name}.py"], tmp_path, clean=False)
    message = check(result, stderr, PYTHON[name])
    assert f"({name}.py:" in message, message  # the Python line behind the op
    if PYTHON[name] == "race":
        assert message.count("host op aten::") == 2, message  # both commands' ops


@pytest.mark.parametrize("name", sorted(PYTHON))
def test_python_fixed_program_is_clean(name, tmp_path):
    result, stderr = sanitize([sys.executable, f"{name}.py"], tmp_path, clean=True)
    assert result["total"] == 0, stderr


def test_report_counts_every_kind_and_summary_line(tmp_path):
    result, stderr = sanitize(cpp_program("missing_wait", False), tmp_path, clean=False)
    assert result["tools"] == "memcheck,racecheck,initcheck,leakcheck"
    assert sorted(result["counts"]) == sorted(
        ["out_of_bounds", "use_after_free", "double_free", "uninitialized_read", "race", "leak"])
    assert "mimic sanitizer (memcheck,racecheck,initcheck,leakcheck): 1 finding (1 race)" in stderr


def test_an_unknown_tool_is_named(tmp_path):
    env = dict(os.environ, MIMIC_SANITIZE="memcheck,racechek")
    done = subprocess.run([sys.executable, "-c", "import torch, torch_mimic; "
                           "torch.ones(1, device='privateuseone')"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode != 0
    assert "'racechek' is not a sanitizer tool" in done.stderr


def test_python_api_turns_tools_on_and_counts(tmp_path):
    program = """
import torch, torch_mimic
from torch_mimic import sanitizer
assert sanitizer.tools() == []
sanitizer.enable("memcheck,initcheck")
assert sanitizer.tools() == ["memcheck", "initcheck"]
x = torch.empty(64, device="privateuseone")
y = x + 1
f = sanitizer.findings()
assert f["uninitialized_read"] == 1 and f["total"] == 1, f
try:
    sanitizer.enable("bogus")
except ValueError as e:
    assert "bogus" in str(e)
else:
    raise AssertionError("no error")
sanitizer.disable()
assert sanitizer.tools() == []
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, MIMIC_FALLBACK="silent"))
    assert done.returncode == 0 and "ok" in done.stdout, done.stderr
    assert "host op aten::add (<string>:" in done.stderr, done.stderr
