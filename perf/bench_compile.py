"""torch_mimic.compile against eager on the same models, in one run: kernel launches per
training step, simulated step time, host wall time per step, peak device memory after the first
step and the first step's time (for compiled: AOT tracing, about three executions on real
tensors, lowering and kernel builds). Ratios are printed against issue 17's targets.

Launches are the op kernel cache's hits plus misses (one per kernel launch). A step is
model_zoo.train_step with SGD (momentum 0.9): the compiled callable covers the model's forward
and backward; the loss, the gradients' accumulation and the optimiser run eager in both.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_compile.py [models...]
"""
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
MODELS = ("mlp", "transformer", "benchmark_mlp", "benchmark_transformer")
# issue 17's targets, compiled / eager: launches, simulated step time, host wall time.
TARGETS = {
    "mlp": {"launches": 0.45, "wall": 0.6},
    "transformer": {"launches": 0.45, "sim": 0.6, "wall": 0.6},
    "benchmark_mlp": {"launches": 0.45, "sim": 0.92},
    "benchmark_transformer": {"launches": 0.45, "sim": 0.75},
}
FIRST_STEP_TARGET_S = {"benchmark_transformer": 20.0}


def _launches():
    stats = torch_mimic.kernel_cache_stats()
    return stats["hits"] + stats["misses"]


def _step(name, runner, optimizer, x, target):
    _, loss = model_zoo.train_step(name, runner, optimizer, x, target)
    loss.item()  # the step is complete


def measure(name, compiled, device):
    model, x, target = model_zoo.make(name)
    model, x, target = model.to(device), x.to(device), target.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    runner = torch_mimic.compile(model) if compiled else model
    torch_mimic.synchronize()
    start = time.perf_counter()
    _step(name, runner, optimizer, x, target)
    first = time.perf_counter() - start
    # Steady state: tracing's executions on real tensors are the first step's cost.
    torch_mimic.reset_peak_memory_stats()
    launches, sims, walls = [], [], []
    for _ in range(STEPS):
        torch_mimic.synchronize()
        before, sim_before = _launches(), torch_mimic.sim_time()
        start = time.perf_counter()
        _step(name, runner, optimizer, x, target)
        walls.append(time.perf_counter() - start)
        sims.append(torch_mimic.sim_time() - sim_before)
        launches.append(_launches() - before)
    assert len(set(launches)) == 1, f"{name}: launches differ between steps: {launches}"
    return {"launches": launches[0], "sim": statistics.median(sims),
            "wall": statistics.median(walls), "first": first,
            "peak": torch_mimic.max_memory_allocated()}


def _ratio(name, metric, eager, compiled):
    ratio = compiled[metric] / eager[metric]
    target = TARGETS.get(name, {}).get(metric)
    if target is None:
        return f"{ratio:.3f}"
    return f"{ratio:.3f} (target <= {target}: {'met' if ratio <= target else 'not met'})"


def main():
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    names = sys.argv[1:] or MODELS
    print(f"preset {torch_mimic.get_device_properties(0).preset}; median of {STEPS} steps after "
          f"the first")
    for name in names:
        eager = measure(name, False, device)
        compiled = measure(name, True, device)
        report = torch_mimic.compile_report()[-1]
        graphs = report["captures"][0]["graphs"]
        kernels = sum(len(g["kernels"]) for g in graphs.values())
        fused = sum(g["fused_nodes"] for g in graphs.values())
        eager_nodes = sum(sum(g["eager_nodes"].values()) for g in graphs.values())
        print(f"\n{name}: {kernels} fused kernels holding {fused} FX nodes, {eager_nodes} nodes "
              f"run eager (partitioner {report['partitioner']})")
        print(f"  {'':<22} {'eager':>12} {'compiled':>12}  ratio")
        rows = (("launches per step", "launches", "{:.0f}"),
                ("sim step ms", "sim", "{:.4f}", 1e-6),
                ("host wall ms/step", "wall", "{:.2f}", 1e3),
                ("first step s", "first", "{:.2f}"),
                ("peak memory MiB", "peak", "{:.2f}", 1 / 2**20))
        for label, metric, form, *scale in rows:
            factor = scale[0] if scale else 1
            print(f"  {label:<22} {form.format(eager[metric] * factor):>12} "
                  f"{form.format(compiled[metric] * factor):>12}  "
                  f"{_ratio(name, metric, eager, compiled)}")
        if name in FIRST_STEP_TARGET_S:
            limit = FIRST_STEP_TARGET_S[name]
            print(f"  first compiled step {compiled['first']:.2f} s (target <= {limit} s: "
                  f"{'met' if compiled['first'] <= limit else 'not met'})")
        print(f"  peak memory compiled/eager {compiled['peak'] / eager['peak']:.3f} "
              f"(target <= 1: {'met' if compiled['peak'] <= eager['peak'] else 'not met'})")


if __name__ == "__main__":
    main()
