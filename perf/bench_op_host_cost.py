"""Per-op host cost: wall time of small eager ops (100 elements) on mimic against PyTorch's CPU
device, measured side by side in one run (rounds interleaved, median of rounds), so a loaded
machine moves both sides alike. Target (issue 16): a small pointwise op costs <= 3x the CPU's
host time for the same op.

Each timed loop queues work without synchronising, as an eager training step does; the device's
queue is drained between rounds, outside the timing.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_op_host_cost.py
"""
import os
import statistics
import time

os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import torch_mimic  # noqa: E402

ROUNDS = 7
CALLS = 2000
TARGET = 3.0


def _cases(device):
    x = torch.randn(100, device=device)
    y = torch.randn(100, device=device)
    i = torch.arange(100, device=device)
    params = [torch.randn(100, device=device) for _ in range(8)]
    grads = [torch.randn(100, device=device) for _ in range(8)]
    return {
        "x + y": lambda: x + y,
        "x.add_(y, alpha=0.5)": lambda: x.add_(y, alpha=0.5),
        "x * 2.0": lambda: x * 2.0,
        "torch.relu(x)": lambda: torch.relu(x),
        "torch.exp(x)": lambda: torch.exp(x),
        "x > y": lambda: x > y,
        "torch.where(x > 0, x, y)": lambda: torch.where(x > 0, x, y),
        "x.clamp(-1, 1)": lambda: x.clamp(-1, 1),
        "torch.addcmul(x, x, y)": lambda: torch.addcmul(x, x, y, value=0.1),
        "i + 1 (int64)": lambda: i + 1,
        "_foreach_add_ (8 tensors)": lambda: torch._foreach_add_(params, grads, alpha=0.1),
    }


def _time(fn, sync):
    fn()
    sync()
    start = time.perf_counter()
    for _ in range(CALLS):
        fn()
    elapsed = time.perf_counter() - start
    sync()
    return elapsed / CALLS


def main():
    torch.set_num_threads(torch.get_num_threads())
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    cpu, mimic = _cases(torch.device("cpu")), _cases(device)
    samples = {name: ([], []) for name in cpu}
    for _ in range(ROUNDS):
        for name in cpu:
            samples[name][0].append(_time(cpu[name], lambda: None))
            samples[name][1].append(_time(mimic[name], torch_mimic.synchronize))
    print(f"preset {torch_mimic.get_device_properties(0).preset}; median of {ROUNDS} rounds of "
          f"{CALLS} calls; target <= {TARGET:.0f}x the CPU")
    print(f"{'op':<28} {'cpu us':>8} {'mimic us':>9} {'ratio':>6}")
    ratios = []
    for name, (cpu_times, mimic_times) in samples.items():
        cpu_us = statistics.median(cpu_times) * 1e6
        mimic_us = statistics.median(mimic_times) * 1e6
        ratios.append(mimic_us / cpu_us)
        print(f"{name:<28} {cpu_us:>8.2f} {mimic_us:>9.2f} {mimic_us / cpu_us:>6.2f}")
    pointwise = ratios[:-1]
    worst = max(pointwise)
    print(f"pointwise ops: median ratio {statistics.median(pointwise):.2f}, worst {worst:.2f}: "
          f"target {'met' if worst <= TARGET else 'MISSED'}")


if __name__ == "__main__":
    main()
