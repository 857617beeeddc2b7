"""Training-step benchmark: wall time of one MLP and one transformer-layer step on mimic
against PyTorch's CPU device, measured in the same run, with the simulated step time and the
fallback count. Target: mimic wall time <= 3x CPU for the benchmark-sized models (tens of ms per
step on the CPU). The small models of the tests are printed too: there the fixed cost per op
dominates.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_torch_step.py
"""
import copy
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import model_zoo  # noqa: E402
import torch_mimic  # noqa: E402

STEPS = 5


def timed_steps(name, model, x, target, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    x, target = x.to(device), target.to(device)
    model_zoo.train_step(name, model, optimizer, x, target)  # warm-up: kernels get built
    if device.type != "cpu":
        torch_mimic.synchronize()
    walls, sims = [], []
    for _ in range(STEPS):
        sim_before = torch_mimic.sim_time()
        start = time.perf_counter()
        _, loss = model_zoo.train_step(name, model, optimizer, x, target)
        loss.item()  # the step is complete on either device
        walls.append(time.perf_counter() - start)
        sims.append(torch_mimic.sim_time() - sim_before)
    return statistics.median(walls), statistics.median(sims)


def main():
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    print(f"threads: torch CPU {torch.get_num_threads()}; preset "
          f"{torch_mimic.get_device_properties(0).preset}; median of {STEPS} steps")
    print(f"{'model':<22} {'cpu wall ms':>12} {'mimic wall ms':>14} {'ratio':>7} "
          f"{'sim step ms':>12} {'fallbacks':>10}")
    for name in ("benchmark_mlp", "benchmark_transformer", "mlp", "transformer"):
        model, x, target = model_zoo.make(name)
        cpu_wall, _ = timed_steps(name, copy.deepcopy(model), x, target, torch.device("cpu"))
        torch_mimic.reset_fallback_report()
        mimic_wall, sim_ns = timed_steps(name, copy.deepcopy(model).to(device), x, target, device)
        fallbacks = sum(torch_mimic.fallback_report().values())
        target = "  (target <= 3x)" if name.startswith("benchmark") else ""
        print(f"{name:<22} {cpu_wall * 1e3:>12.2f} {mimic_wall * 1e3:>14.2f} "
              f"{mimic_wall / cpu_wall:>7.2f} {sim_ns / 1e6:>12.3f} {fallbacks:>10}{target}")


if __name__ == "__main__":
    main()
