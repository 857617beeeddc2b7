"""The wall-time cost of the sanitizer (MIMIC_SANITIZE=all: memcheck, racecheck, initcheck and
leakcheck): training steps of the test models on mimic, in processes with the sanitizer off and
on, alternately, median step time of each. Target: 3x or less. Also checks that the sanitizer
finds nothing in them and leaves the simulated step time as it was.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_sanitizer.py
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ("mlp", "cnn", "transformer", "benchmark_mlp", "benchmark_transformer")
STEPS = 5
ROUNDS = 2

# One process: a warm-up step, then STEPS timed ones; prints median wall and simulated ms.
WORKER = """
import os, statistics, sys, time
sys.path.insert(0, {tests!r})
import torch, torch_mimic, model_zoo
name = {name!r}
device = torch.device(torch_mimic.DEVICE_TYPE, 0)
model, x, target = model_zoo.make(name)
model, x, target = model.to(device), x.to(device), target.to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
walls, sims = [], []
for i in range({steps} + 1):
    torch_mimic.synchronize()
    sim0, wall0 = torch_mimic.sim_time(), time.perf_counter()
    _, loss = model_zoo.train_step(name, model, optimizer, x, target)
    loss.item()
    if i:
        walls.append(time.perf_counter() - wall0)
        sims.append(torch_mimic.sim_time() - sim0)
print(statistics.median(walls) * 1e3, statistics.median(sims) / 1e6)
"""


def run(name, sanitize):
    env = dict(os.environ, MIMIC_FALLBACK="silent", SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    env.pop("MIMIC_SANITIZE", None)
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "report.json")
        if sanitize:
            env.update(MIMIC_SANITIZE="all", MIMIC_SANITIZE_REPORT=report)
        code = WORKER.format(tests=os.path.join(HERE, "..", "tests", "python"), name=name,
                             steps=STEPS)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, check=True)
        wall, sim = (float(v) for v in done.stdout.split())
        findings = json.load(open(report))["total"] if sanitize else 0
    return wall, sim, findings


def main():
    print(f"median of {STEPS} steps per process, {ROUNDS} processes each way, alternately "
          "(target: 3x or less)")
    print(f"{'model':<22} {'off ms':>9} {'on ms':>9} {'ratio':>6} {'findings':>8} "
          f"{'sim off ms':>10} {'sim on ms':>10}")
    for name in MODELS:
        off, on = [], []
        findings = 0
        for _ in range(ROUNDS):
            off.append(run(name, False))
            on.append(run(name, True))
            findings += on[-1][2]
        wall_off = statistics.median(r[0] for r in off)
        wall_on = statistics.median(r[0] for r in on)
        print(f"{name:<22} {wall_off:>9.2f} {wall_on:>9.2f} {wall_on / wall_off:>5.2f}x "
              f"{findings:>8} {off[0][1]:>10.3f} {on[0][1]:>10.3f}")


if __name__ == "__main__":
    main()
