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
