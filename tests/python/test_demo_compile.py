"""`mimic demo --compile` (cli/mimic_cli/demo.py, demo_worker.py): the demo's GPT trains through
torch_mimic.compile under DDP on two ranks, as a user runs it (ctest gives the CLI's path as
MIMIC_CLI; otherwise `python3 -m mimic_cli` from the PYTHONPATH), at its tiny size."""
import json
import os
import re
import subprocess
import sys

import pytest

STEPS = 3
FLOAT32_EPS = 2.0 ** -23
# The fused programs compute the eager ops' float32 steps in eager's order; a lowering may only
# reorder a sum, which moves it by at most n*eps relative for n terms. The widest sum at the
# tiny size has n = 4 * d_model = 128 terms (the MLP); twice that covers the loss, a mean over
# the 64 tokens of such sums, of the first step (before any update). Today's lowerings change
# no order, and the losses of every step are in fact equal.
FIRST_LOSS_RTOL = 2 * 128 * FLOAT32_EPS


def mimic(*args, timeout=600):
    cli = os.environ.get("MIMIC_CLI")
    command = [cli] if cli else [sys.executable, "-m", "mimic_cli"]
    return subprocess.run(command + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout)


def run_demo(out_dir, *extra, steps=STEPS):
    done = mimic("demo", "--size", "tiny", "--steps", steps, "--out", out_dir, *extra)
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out_dir / "demo-result.json") as f:
        return done.stdout, json.load(f)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    return run_demo(tmp_path_factory.mktemp("demo") / "compiled", "--compile")


def test_compiled_demo_trains_and_reports_its_fused_kernels(compiled):
    out, result = compiled
    assert "compiled with torch_mimic.compile" in out.splitlines()[0]
    assert len(re.findall(r"^step +\d+/3  loss", out, re.MULTILINE)) == STEPS
    losses = [step["loss"] for step in result["steps"]]
    assert losses[-1] < losses[0]
    summary = result["compile"]
    (model,) = summary["callables"]
    # One capture for every step (same shapes), forward and backward graphs with fused kernels.
    assert model["name"] == "TinyLM" and model["guards"] == 1 and model["recompiles"] == 0
    assert model["forward"]["kernels"] >= 1 and model["backward"]["kernels"] >= 1
    assert summary["fused"]["launches"] >= model["forward"]["kernels"]
    section = out[out.index("torch_mimic.compile (--compile"):]
    assert "TinyLM: 1 capture, 0 recompiles" in section
    assert re.search(r"steps 2-3: median sim \d+\.\d+ ms", section), section
    # The kernel table names fused kernels by their ops.
    assert re.search(r"^mimic_\w+_\d+ \[aten\.", out, re.MULTILINE), out


def test_compiled_first_step_loss_matches_eager(compiled, tmp_path):
    _, result = compiled
    _, eager = run_demo(tmp_path / "eager", steps=1)
    first, reference = result["steps"][0]["loss"], eager["steps"][0]["loss"]
    assert abs(first - reference) <= FIRST_LOSS_RTOL * abs(reference)
