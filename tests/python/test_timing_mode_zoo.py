"""Timing-only mode gives the same simulated times as full mode on the model zoo (issue 20): two
training steps of every zoo model run in one child process per mode, under the profiler, and
every device activity (each kernel, copy, fill, allocation: its queue, start and end, counters)
and every step time must be identical. Neither mode may fall back to the CPU, and the steps read
no device data on the host, so timing mode counts no placeholder reads."""
import json
import os
import subprocess
import sys

import pytest

MODELS = ("mlp", "cnn", "transformer", "gpt", "resnet18", "benchmark_mlp",
          "benchmark_transformer")
STEPS = 2  # the second step runs on the optimiser's state (momentum, Adam's moments)


def _worker():
    """The child: prints one JSON line per model with its activities and step times."""
    import torch

    import model_zoo
    import torch_mimic

    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    for name in MODELS:
        model, x, target = model_zoo.make(name)
        model = model.to(device).train()
        optimizer = model_zoo.optimizer(name, model.parameters())
        x, target = x.to(device), target.to(device)
        torch_mimic.reset_fallback_report()
        torch_mimic.reset_timing_mode_report()
        steps = []
        with torch_mimic.profiler.profile() as profile:
            for _ in range(STEPS):
                torch_mimic.synchronize()
                before = torch_mimic.sim_time()
                model_zoo.train_step(name, model, optimizer, x, target)
                torch_mimic.synchronize()
                steps.append(torch_mimic.sim_time() - before)
        activities = [{key: value for key, value in activity.items() if key != "correlation"}
                      for activity in profile.trace["activities"]]
        print(json.dumps({"model": name, "steps": steps, "activities": activities,
                          "mode": torch_mimic.simulation_mode(),
                          "fallback": torch_mimic.fallback_report(),
                          "placeholder_reads": torch_mimic.timing_mode_report()["reads"]}),
              flush=True)


def _start(mode):
    env = dict(os.environ, MIMIC_MODE=mode, MIMIC_FALLBACK="silent",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _records(mode, child):
    out, err = child.communicate(timeout=600)
    assert child.returncode == 0, f"the {mode}-mode child failed:\n{err[-4000:]}"
    records = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return {record["model"]: record for record in records}


@pytest.fixture(scope="module")
def runs():
    # Both children at once: the results do not depend on it, the test's wall time halves.
    children = {mode: _start(mode) for mode in ("full", "timing")}
    return tuple(_records(mode, child) for mode, child in children.items())


@pytest.mark.parametrize("name", MODELS)
def test_timing_mode_times_the_zoo_exactly(runs, name):
    full, timing = runs[0][name], runs[1][name]
    assert (full["mode"], timing["mode"]) == ("full", "timing")
    assert full["fallback"] == {} and timing["fallback"] == {}
    kernels = sum(a["kind"] == "kernel" for a in full["activities"])
    assert kernels > 0
    assert len(timing["activities"]) == len(full["activities"])
    for index, (f, t) in enumerate(zip(full["activities"], timing["activities"])):
        assert t == f, f"{name}: activity {index} differs between full and timing mode"
    assert timing["steps"] == full["steps"]
    # The zoo's steps read no device data on the host; full mode counts nothing.
    assert full["placeholder_reads"] == [] and timing["placeholder_reads"] == []


if __name__ == "__main__" and sys.argv[1:] == ["--worker"]:
    _worker()
