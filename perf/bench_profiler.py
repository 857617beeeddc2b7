"""The wall-time cost of tracing: the benchmark transformer training step (and the MLP) on
mimic, alternately with torch_mimic.profiler.profile() on and off, median of several steps each,
in one run. Target: tracing costs 10% or less. Also checks that tracing does not change the
simulated step time.

Then the cost of exporting: steps of the benchmark transformer (and of the tests' small one)
profiled in one session, and the wall time of writing their Chrome trace and HTML timeline
against the profiled run's wall time (target: 10% or less), with the files' sizes. The exporter
costs a few microseconds per recorded event (host op, kernel, copy, counter sample): a model
whose ops each take tens of microseconds of host time, like the tests' small transformer, pays
a larger share.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_profiler.py
"""
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests", "python"))
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import model_zoo  # noqa: E402
import torch_mimic  # noqa: E402

ROUNDS = 5


def step(name, model, optimizer, x, target):
    _, loss = model_zoo.train_step(name, model, optimizer, x, target)
    loss.item()


def measure(name):
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    model, x, target = model_zoo.make(name)
    model = model.to(device)
    x, target = x.to(device), target.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step(name, model, optimizer, x, target)  # warm-up: kernels get built
    walls = {"off": [], "on": []}
    sims = {"off": [], "on": []}
    records = 0
    for _ in range(ROUNDS):
        for mode in ("off", "on"):
            torch_mimic.synchronize()
            sim_before = torch_mimic.sim_time()
            start = time.perf_counter()
            if mode == "on":
                with torch_mimic.profiler.profile() as prof:
                    step(name, model, optimizer, x, target)
                records = len(prof.trace["activities"])
            else:
                step(name, model, optimizer, x, target)
            walls[mode].append(time.perf_counter() - start)
            sims[mode].append(torch_mimic.sim_time() - sim_before)
    off, on = statistics.median(walls["off"]), statistics.median(walls["on"])
    sim_off, sim_on = statistics.median(sims["off"]), statistics.median(sims["on"])
    print(f"{name:<22} {off * 1e3:>10.2f} {on * 1e3:>10.2f} {on / off - 1:>+9.1%} "
          f"{records:>8} {sim_off / 1e6:>10.3f} {sim_on / 1e6:>10.3f}")


def export_cost(name, steps):
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    model, x, target = model_zoo.make(name)
    model = model.to(device)
    x, target = x.to(device), target.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    step(name, model, optimizer, x, target)
    torch_mimic.synchronize()
    start = time.perf_counter()
    with torch_mimic.profiler.profile() as prof:
        for _ in range(steps):
            step(name, model, optimizer, x, target)
    run = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as folder:
        for label, export, file in (("chrome trace", prof.export_chrome_trace, "trace.json"),
                                    ("timeline", prof.export_timeline, "timeline.html")):
            path = os.path.join(folder, file)
            start = time.perf_counter()
            export(path)
            seconds = time.perf_counter() - start
            share = seconds / run
            print(f"export {label:<13} {steps} {name} steps: {seconds:.2f} s against a "
                  f"{run:.2f} s profiled run ({share:.1%}, {os.path.getsize(path) / 1e6:.1f} MB; "
                  f"target <= 10%): {'met' if share <= 0.10 else 'MISSED'}")


def main():
    print(f"median of {ROUNDS} steps each, tracing off and on alternately (target: +10% or less)")
    print(f"{'model':<22} {'off ms':>10} {'on ms':>10} {'cost':>9} {'records':>8} "
          f"{'sim off ms':>10} {'sim on ms':>10}")
    for name in ("benchmark_transformer", "benchmark_mlp"):
        measure(name)
    export_cost("benchmark_transformer", 10)
    export_cost("transformer", 30)


if __name__ == "__main__":
    main()
