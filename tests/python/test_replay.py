"""Record and replay (MIMIC_RECORD and the mimic-replay tool, driver/include/mimic/mimic_debug.h)
of a PyTorch program: the replay makes the same driver calls with the same outcomes, and every
simulated time the program read (torch_mimic.sim_time) reads the same in the replay."""
import os
import pathlib
import re
import subprocess
import sys

import pytest

import torch_mimic

PROGRAM = """
import torch, torch_mimic
dev = torch.device("privateuseone", 0)
torch.manual_seed(0)
x = torch.randn(64, 64).to(dev)
w = torch.randn(64, 64).to(dev)
for _ in range(3):
    x = torch.relu(x @ w) * 0.5
print(x.sum().item())
torch_mimic.synchronize()
print(torch_mimic.sim_time())
"""

# The build tree puts the package in build/python/torch_mimic and the tool in build/tools.
TOOL = pathlib.Path(torch_mimic.__file__).resolve().parents[2] / "tools" / "mimic-replay"


@pytest.mark.skipif(not TOOL.exists(), reason="mimic-replay is not built")
def test_replay_of_a_torch_program_reaches_the_same_simulated_time(tmp_path):
    log = tmp_path / "run.log"
    env = dict(os.environ, MIMIC_RECORD=str(log), MIMIC_FALLBACK="silent")
    run = subprocess.run([sys.executable, "-c", PROGRAM], capture_output=True, text=True,
                         timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    sim_time = int(run.stdout.split()[-1])

    replay = subprocess.run([str(TOOL), str(log)], capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stderr
    match = re.search(r"replayed (\d+) of (\d+) calls; simulated time (\d+) ns", replay.stdout)
    assert match, replay.stdout
    assert match.group(1) == match.group(2)
    # The replay checked the program's sim_time() reading; calls at exit may come after it.
    assert int(match.group(3)) >= sim_time > 0


@pytest.mark.skipif(not TOOL.exists(), reason="mimic-replay is not built")
def test_replay_of_a_missing_log_names_it(tmp_path):
    replay = subprocess.run([str(TOOL), str(tmp_path / "none.log")], capture_output=True,
                            text=True, timeout=60)
    assert replay.returncode == 1
    assert "MIMIC_ERROR_CALL_LOG_UNREADABLE" in replay.stderr and "none.log" in replay.stderr


@pytest.mark.skipif(not TOOL.exists(), reason="mimic-replay is not built")
def test_replay_help_and_usage_errors():
    done = subprocess.run([str(TOOL), "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("usage: mimic-replay")
    assert "--list" in done.stdout and "--trace" in done.stdout
    for args, problem in ((["--bogus", "x.log"], "unknown option '--bogus'"),
                          ([], "no LOG given"),
                          (["--list", "--trace", "x.log"], "give one of them")):
        done = subprocess.run([str(TOOL), *args], capture_output=True, text=True, timeout=60)
        assert done.returncode == 2, done.stderr
        first, hint = done.stderr.strip().splitlines()
        assert first == f"mimic-replay: {problem}" or problem in first, first
        assert hint.startswith("hint: ")


FAILING_PROGRAM = """
import torch, torch_mimic
dev = torch.device("privateuseone", 0)
x = torch.ones(256, device=dev)
try:
    (x * 2).sum().item()
except RuntimeError as error:
    print("failed:", error)
"""


@pytest.mark.skipif(not TOOL.exists(), reason="mimic-replay is not built")
def test_replay_lists_calls_names_kinds_and_details_the_failed_call(tmp_path):
    log = tmp_path / "run.log"
    env = dict(os.environ, MIMIC_RECORD=str(log), MIMIC_FALLBACK="silent",
               MIMIC_FAULTS="ecc_at_kernel=2")
    run = subprocess.run([sys.executable, "-c", FAILING_PROGRAM], capture_output=True,
                         text=True, timeout=300, env=env)
    assert "failed:" in run.stdout, run.stdout + run.stderr

    listed = subprocess.run([str(TOOL), "--list", str(log)], capture_output=True, text=True,
                            timeout=60)
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].split() == ["call", "function", "recorded", "result", "correlation"]
    assert re.fullmatch(r"\s*1\s+mimic\w+\s+MIMIC_\w+\s+\d+", lines[1]), lines[1]
    assert any("mimicLaunchKernel" in line for line in lines)
    assert any("MIMIC_ERROR_ECC_UNCORRECTABLE" in line for line in lines)
    assert lines[-1] == f"{len(lines) - 2} calls"

    replay = subprocess.run([str(TOOL), "--trace", str(log)], capture_output=True, text=True,
                            timeout=300)
    assert replay.returncode == 0, replay.stderr
    assert re.search(r"^kind=kernel device=0 ", replay.stdout, re.M), replay.stdout[:500]
    failed = re.search(r"^call \d+ failed with MIMIC_ERROR_ECC_UNCORRECTABLE, as recorded: (.+)$",
                       replay.stdout, re.M)
    assert failed and "injected fault" in failed.group(1), replay.stdout[-500:]
