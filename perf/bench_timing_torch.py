"""Timing-only mode against full mode on a GPT-2-small-sized training step (issue 20's targets:
host wall time <= 0.2x and host memory <= 0.1x of full mode), measured in one run:

  - the decoder of perf/bench_presets.py (12 layers, d_model 768, 12 heads, sequence 128,
    batch 2, vocabulary 50257, untied LM head: 162M parameters; AdamW), built on the device so
    that no host copy of the weights exists in either mode;
  - one child process per mode (MIMIC_MODE is fixed when the driver starts); each runs a
    warm-up step (kernels get built, the allocator fills), then STEPS timed steps;
  - per mode: the median host wall time of a step, the peak RSS of the process (VmHWM) and its
    RSS after `import torch, torch_mimic` and the driver's start (the floor of any process),
    the simulated step time, which must be identical in both modes, and the placeholder reads.

In timing mode the floor is most of the peak (measured: 243 of 306 MiB, of which `import torch`
is 229). Above it: the model's modules and parameters' host objects (15 MiB), and per step what
its queued kernel launches keep for the timing model until the simulation reaches them
(sim/launch_work.h), the autograd graph, and the free memory malloc keeps from both (48 MiB).

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_timing_torch.py
                    [--preset P] [--steps N]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

WALL_TARGET, MEMORY_TARGET = 0.2, 0.1


def _status_kib(field):
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def gpt2_small(device):
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def __init__(self, vocab=50257, d_model=768, layers=12, heads=12, sequence=128):
            super().__init__()
            on = {"device": device}
            self.tokens = nn.Embedding(vocab, d_model, **on)
            self.positions = nn.Embedding(sequence, d_model, **on)
            layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1,
                                               activation="gelu", batch_first=True,
                                               norm_first=True, **on)
            self.blocks = nn.TransformerEncoder(layer, layers)
            self.norm = nn.LayerNorm(d_model, **on)
            self.head = nn.Linear(d_model, vocab, bias=False, **on)
            self.register_buffer("causal", torch.triu(
                torch.full((sequence, sequence), float("-inf"), device=device), diagonal=1))

        def forward(self, ids):
            positions = torch.arange(ids.shape[1], device=ids.device)
            x = self.tokens(ids) + self.positions(positions)
            return self.head(self.norm(self.blocks(x, mask=self.causal)))

    torch.manual_seed(0)
    model = Decoder()
    ids = torch.randint(0, 50257, (2, 128))
    return model, ids.to(device), torch.roll(ids, -1, dims=1).to(device)


def worker(steps):
    """The child: one JSON line with its mode's figures."""
    import torch
    import torch_mimic

    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    mode = torch_mimic.simulation_mode()  # starts the driver
    floor_kib = _status_kib("VmRSS")
    model, ids, target = gpt2_small(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        optimizer.zero_grad()
        out = model(ids)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]),
                                                 target.reshape(-1))
        loss.backward()
        optimizer.step()
        torch_mimic.synchronize()

    step()
    walls, sims = [], []
    for _ in range(steps):
        sim_before, wall_before = torch_mimic.sim_time(), time.perf_counter()
        step()
        walls.append(time.perf_counter() - wall_before)
        sims.append(torch_mimic.sim_time() - sim_before)
    print(json.dumps({"mode": mode, "wall_s": statistics.median(walls), "sim_ns": sims,
                      "peak_rss_kib": _status_kib("VmHWM"), "floor_rss_kib": floor_kib,
                      "parameters": sum(p.numel() for p in model.parameters()),
                      "placeholder_reads": torch_mimic.timing_mode_report()["total_reads"]}))


def run(mode, preset, steps):
    env = dict(os.environ, MIMIC_MODE=mode, MIMIC_PRESET=preset, MIMIC_FALLBACK="silent",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    out = subprocess.run([sys.executable, __file__, "--worker", "--steps", str(steps)], env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"the {mode}-mode step failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--preset", default="default")
    parser.add_argument("--steps", type=int, default=2, help="timed steps after the warm-up")
    args = parser.parse_args()
    if args.worker:
        worker(args.steps)
        return 0
    full = run("full", args.preset, args.steps)
    timing = run("timing", args.preset, args.steps)
    print(f"GPT-2-small-sized step ({full['parameters'] / 1e6:.0f}M parameters, AdamW) on "
          f"preset {args.preset}; median of {args.steps} steps after a warm-up")
    print(f"{'mode':<8} {'wall s':>8} {'peak RSS MiB':>13} {'RSS after start MiB':>20} "
          f"{'sim step ms':>12} {'placeholder reads':>18}")
    for r in (full, timing):
        print(f"{r['mode']:<8} {r['wall_s']:>8.2f} {r['peak_rss_kib'] / 1024:>13.0f} "
              f"{r['floor_rss_kib'] / 1024:>20.0f} {r['sim_ns'][0] / 1e6:>12.3f} "
              f"{r['placeholder_reads']:>18}")
    wall = timing["wall_s"] / full["wall_s"]
    memory = timing["peak_rss_kib"] / full["peak_rss_kib"]
    above_floor = ((timing["peak_rss_kib"] - timing["floor_rss_kib"])
                   / (full["peak_rss_kib"] - full["floor_rss_kib"]))
    same = timing["sim_ns"] == full["sim_ns"]
    print(f"wall time, timing / full:  {wall:.3f}x (target <= {WALL_TARGET}x) "
          f"{'met' if wall <= WALL_TARGET else 'MISSED'}")
    print(f"peak RSS, timing / full:   {memory:.3f}x (target <= {MEMORY_TARGET}x) "
          f"{'met' if memory <= MEMORY_TARGET else 'MISSED'}; above the RSS after start: "
          f"{above_floor:.3f}x")
    print(f"simulated step times identical in both modes: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
