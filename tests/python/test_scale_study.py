"""The scale study (examples/scale/study.py) at its test size: two ranks under torchrun, DDP and
ZeRO, in full and timing-only mode. The embedding and the loss read their token ids inside
their kernels, which timing-only mode reads as zeros; with ids that are zeros in both modes the
measured step's simulated time, its breakdown and the device memory peak must be identical,
and plausible: the collectives are DDP's gradient all-reduce, and the memory peak holds at
least the weights and their gradients. With random ids the data-dependent kernels are named."""
import json
import os
import subprocess
import sys

import pytest

STUDY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "scale",
                     "study.py")
RANKS = 2


def _study(tmp_path, mode, parallel, *extra, overrides=""):
    out = tmp_path / f"{parallel}-{mode}"
    run = subprocess.run([sys.executable, STUDY, "--size", "test", "--ranks", str(RANKS),
                          "--micro-batch", "2", "--link-scales", "1", "--mode", mode,
                          "--parallel", parallel, "--out", str(out), *extra],
                         env=dict(os.environ, MIMIC_OVERRIDES=overrides),
                         capture_output=True, text=True, timeout=600)
    return run, out


def _ranks(out):
    results = []
    for rank in range(RANKS):
        with open(out / "link-x1" / f"rank{rank}.json") as source:
            results.append(json.load(source))
    return results


def _timing_figures(result):
    b = result["breakdown"]
    return {"step_ns": result["step_ns"], "end_ns": result["end_ns"],
            "compute_ns": b["compute_ns"], "collective_ns": b["collective_ns"],
            "exposed_collective_ns": b["exposed_collective_ns"],
            "device_peak_allocated": result["device_peak_allocated"]}


@pytest.mark.parametrize("parallel", ["ddp", "zero"])
def test_timing_mode_gives_full_modes_step(tmp_path, parallel):
    runs = {mode: _study(tmp_path, mode, parallel, "--token-ids", "zeros")
            for mode in ("full", "timing")}
    for mode, (run, _) in runs.items():
        assert run.returncode == 0, f"{mode}: {run.stdout[-2000:]}\n{run.stderr[-3000:]}"
        assert "simulated step (rank 0)" in run.stdout and "exposed communication" in run.stdout
        assert "kernels reading device data" in run.stdout
    full, timing = (_ranks(runs[mode][1]) for mode in ("full", "timing"))
    assert [r["mode"] for r in full + timing] == ["full"] * RANKS + ["timing"] * RANKS
    assert [_timing_figures(r) for r in timing] == [_timing_figures(r) for r in full]
    first = full[0]
    b = first["breakdown"]
    assert b["compute_ns"] > 0 and b["collective_ns"] > 0
    assert 0 <= b["exposed_collective_ns"] <= b["collective_ns"]
    assert b["data_dependent_kernels"] > 0  # the embedding, its gradient, the loss
    weights_and_grads = 2 * 2 * first["parameters"]  # bfloat16
    assert first["device_peak_allocated"] >= weights_and_grads


def test_an_unknown_preset_is_named(tmp_path):
    run, _ = _study(tmp_path, "timing", "ddp", "--preset", "no-such-preset")
    assert run.returncode == 2
    assert "unknown preset 'no-such-preset'" in run.stderr


def test_out_of_device_memory_at_the_devices_capacity_is_reported(tmp_path):
    """1024 sequences' logits (1024 x 64 x 512 bfloat16, 64 MiB) do not fit a device of 16 MiB,
    in timing mode too, where nothing is committed. The rank's error reaches the output."""
    run, _ = _study(tmp_path, "timing", "ddp", "--micro-batch", "1024",
                    overrides="hbm.capacity=16MiB")
    assert run.returncode != 0
    assert "out of memory" in run.stderr.lower()
