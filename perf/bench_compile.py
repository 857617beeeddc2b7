"""torch_mimic.compile against eager on the same models, in one run, with issue 17's targets.

A step is zero_grad, forward, loss, backward and an SGD step (momentum 0.9). Three ways:
  eager      the model, the loss and torch.optim.SGD as PyTorch 1.13 runs them by default
             (zero_grad fills the gradients with zeros; one kernel per parameter and op);
  eager-pt2  eager with PyTorch 2's defaults (foreach=True, zero_grad(set_to_none=True)), to
             show what the compiled optimiser owes to those defaults alone;
  compiled   torch_mimic.compile of a module computing the model and its loss (forward and
             backward graphs) and torch_mimic.compile(optimizer) (a fused multi-tensor step,
             zero_grad(set_to_none=True)).
Figures per step: kernel launches (the op kernel cache's hits plus misses), simulated time,
HBM bytes (the kernels' DMA traffic past the device cache, from the profiler), the GEMM floor
(simulated time of the step's GEMM kernels, convolutions' included, with the epilogues
they took: the work no fusion removes), host wall time, the first
step's time (compiled: AOT tracing, about three executions on real tensors, lowering and kernel
builds) and peak device memory. Ratios are compiled / eager.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_compile.py [models...]
"""
import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import model_zoo  # noqa: E402
from kernel_launches import launches  # noqa: E402
import torch_mimic  # noqa: E402
from torch_mimic.profiler import _table  # noqa: E402

STEPS = 5
MODELS = ("mlp", "transformer", "cnn", "benchmark_mlp", "benchmark_transformer", "resnet18")
TEST_SIZE = ("mlp", "transformer", "cnn")
# issue 17's targets, compiled / eager.
TARGETS = {
    "launches": {"mlp": 0.45, "transformer": 0.45, "benchmark_mlp": 0.45,
                 "benchmark_transformer": 0.45, "cnn": 0.6, "resnet18": 0.6},
    "hbm": {"transformer": 0.6, "benchmark_transformer": 0.6},
    "sim": {"transformer": 0.6, "benchmark_transformer": 0.75, "benchmark_mlp": 0.92},
    "wall": {name: 0.6 for name in TEST_SIZE},
    "peak": {name: 1.0 for name in MODELS},
}
FIRST_STEP_TARGET_S = {"benchmark_transformer": 20.0}


class WithLoss(torch.nn.Module):
    """The model and its loss as one module, so that one capture holds both."""

    def __init__(self, name, model):
        super().__init__()
        self.name = name
        self.model = model

    def forward(self, x, target):
        return model_zoo.loss_of(self.name, self.model(x), target)


def _setup(name, way, device):
    model, x, target = model_zoo.make(name)
    model, x, target = model.to(device), x.to(device), target.to(device)
    foreach = way == "eager-pt2"
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9, foreach=foreach)
    with_loss = WithLoss(name, model)
    if way == "compiled":
        with_loss = torch_mimic.compile(with_loss)
        optimizer = torch_mimic.compile(optimizer)
    set_to_none = way == "eager-pt2"

    def step():
        if way == "compiled":
            optimizer.zero_grad()
        else:
            optimizer.zero_grad(set_to_none=set_to_none)
        loss = with_loss(x, target)
        loss.backward()
        optimizer.step()
        loss.item()  # the step is complete

    return step


def _profiled(step):
    """HBM bytes and the GEMM kernels' simulated time of one step."""
    with torch_mimic.profiler.profile() as prof:
        step()
    kernels = [a for a in prof.trace["activities"] if a["kind"] == "kernel"]
    hbm = sum(_table.kernel_hbm_bytes(a["counters"]) for a in kernels)
    # A compiled kernel is named by its FX ops; the op layer's name (gemm...) is op_kernel.
    gemm = sum(a["end_ns"] - a["start_ns"] for a in kernels
               if a.get("op_kernel", a["name"]).startswith("gemm"))
    return hbm, gemm


def measure(name, way, device):
    gc.collect()  # the previous way's model and state: cycles keep them alive until collected
    step = _setup(name, way, device)
    torch_mimic.synchronize()
    start = time.perf_counter()
    step()
    first = time.perf_counter() - start
    # Steady state: tracing's executions on real tensors are the first step's cost.
    torch_mimic.reset_peak_memory_stats()
    counts, sims, walls = [], [], []
    for _ in range(STEPS):
        torch_mimic.synchronize()
        before, sim_before = launches(), torch_mimic.sim_time()
        start = time.perf_counter()
        step()
        walls.append(time.perf_counter() - start)
        sims.append(torch_mimic.sim_time() - sim_before)
        counts.append(launches() - before)
    assert len(set(counts)) == 1, f"{name}: launches differ between steps: {counts}"
    peak = torch_mimic.max_memory_allocated()
    hbm, gemm = _profiled(step)
    return {"launches": counts[0], "sim": statistics.median(sims), "hbm": hbm, "gemm": gemm,
            "wall": statistics.median(walls), "first": first, "peak": peak}


def _verdict(name, metric, ratio):
    target = TARGETS.get(metric, {}).get(name)
    if target is None:
        return ""
    return f"(target <= {target}: {'met' if ratio <= target else 'not met'})"


def main():
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    names = sys.argv[1:] or MODELS
    print(f"preset {torch_mimic.get_device_properties(0).preset}; median of {STEPS} steps after "
          f"the first; SGD momentum 0.9")
    for name in names:
        figures = {way: measure(name, way, device) for way in ("eager", "eager-pt2", "compiled")}
        report = [r for r in torch_mimic.compile_report() if r.get("kind") != "optimizer"][-1]
        graphs = report["captures"][0]["graphs"]
        kernels = sum(len(g["kernels"]) for g in graphs.values())
        fused = sum(g["fused_nodes"] for g in graphs.values())
        eager_nodes = sum(sum(g["eager_nodes"].values()) for g in graphs.values())
        reason = report["captures"][0]["eager_reason"]
        print(f"\n{name}: {kernels} fused kernels holding {fused} FX nodes, {eager_nodes} nodes "
              f"run eager (partitioner {report['partitioner']})"
              + (f"; the capture runs EAGER: {reason}" if reason else ""))
        print(f"  {'':<20} {'eager':>10} {'eager-pt2':>10} {'compiled':>10}  compiled/eager")
        rows = (("launches per step", "launches", "{:.0f}", 1),
                ("sim step ms", "sim", "{:.4f}", 1e-6),
                ("  GEMM floor ms", "gemm", "{:.4f}", 1e-6),
                ("HBM MB per step", "hbm", "{:.2f}", 1e-6),
                ("host wall ms/step", "wall", "{:.2f}", 1e3),
                ("first step s", "first", "{:.2f}", 1),
                ("peak memory MiB", "peak", "{:.2f}", 1 / 2**20))
        for label, metric, form, scale in rows:
            values = [form.format(figures[way][metric] * scale)
                      for way in ("eager", "eager-pt2", "compiled")]
            ratio = figures["compiled"][metric] / max(figures["eager"][metric], 1e-30)
            print(f"  {label:<20} {values[0]:>10} {values[1]:>10} {values[2]:>10}  "
                  f"{ratio:.3f} {_verdict(name, metric, ratio)}")
        if name in FIRST_STEP_TARGET_S:
            limit = FIRST_STEP_TARGET_S[name]
            first = figures["compiled"]["first"]
            print(f"  first compiled step {first:.2f} s (target <= {limit} s: "
                  f"{'met' if first <= limit else 'not met'})")


if __name__ == "__main__":
    main()
