"""Training steps on every preset, one process per preset, measured in one run:

  - simulated step time of resnet18, ResNet-50 and a GPT-2-small-sized decoder (12 layers,
    d_model 768, 12 heads, sequence 128, batch 2, untied LM head, AdamW) on each preset;
  - the presets must rank as the real parts do: h100 faster than a100 on resnet18 and on the
    GPT-2 step; for ResNet-50, MLPerf Training v3.0 has 16 x A100 at 14.4 min against
    16 x H100 at 7.8 min (a100/h100 = 1.85);
  - host wall time of the GPT-2 step on each preset against `default`: the cost of simulating
    must not grow with the preset (target <= 1.3x);
  - host wall time of the GPT-2 step on each preset against the same step on PyTorch's CPU
    device with the same thread count (issue 16's target: <= 1.5x).

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_presets.py [--quick]
(--quick: resnet18 only, one step; --models and --presets pick subsets).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

PRESETS = ("default", "a100", "h100", "mi300x")
MLPERF_RESNET50_A100_OVER_H100 = 14.4 / 7.8  # MLPerf Training v3.0, 16 GPUs each


def gpt2_small():
    import torch
    from torch import nn

    class Decoder(nn.Module):
        def __init__(self, vocab=50257, d_model=768, layers=12, heads=12, sequence=128):
            super().__init__()
            self.tokens = nn.Embedding(vocab, d_model)
            self.positions = nn.Embedding(sequence, d_model)
            layer = nn.TransformerEncoderLayer(d_model, heads, 4 * d_model, dropout=0.1,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.blocks = nn.TransformerEncoder(layer, layers)
            self.norm = nn.LayerNorm(d_model)
            self.head = nn.Linear(d_model, vocab, bias=False)
            self.register_buffer("causal", torch.triu(
                torch.full((sequence, sequence), float("-inf")), diagonal=1))

        def forward(self, ids):
            positions = torch.arange(ids.shape[1], device=ids.device)
            x = self.tokens(ids) + self.positions(positions)
            return self.head(self.norm(self.blocks(x, mask=self.causal)))

    torch.manual_seed(0)
    model = Decoder()
    ids = torch.randint(0, 50257, (2, 128))
    return model, ids, torch.roll(ids, -1, dims=1)


def vision(name, batch, size):
    import torch
    import torchvision

    torch.manual_seed(0)
    model = getattr(torchvision.models, name)(num_classes=1000)
    return model, torch.randn(batch, 3, size, size), torch.randint(0, 1000, (batch,))


def worker(model_name, steps, on_cpu):
    """Runs in the child: prints one JSON line with the median simulated and wall step time
    (on the CPU device when `on_cpu`, whose simulated time is 0)."""
    import torch
    import torch_mimic

    device = torch.device("cpu") if on_cpu else torch.device(torch_mimic.DEVICE_TYPE, 0)
    if model_name == "gpt2_small":
        model, x, target = gpt2_small()
    elif model_name == "resnet18":
        model, x, target = vision("resnet18", 32, 224)
    else:
        model, x, target = vision("resnet50", 32, 224)
    model = model.to(device)
    x, target = x.to(device), target.to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step():
        optimizer.zero_grad()
        out = model(x)
        loss = torch.nn.functional.cross_entropy(out.reshape(-1, out.shape[-1]),
                                                 target.reshape(-1))
        loss.backward()
        optimizer.step()
        loss.item()

    def sim_time():
        return 0 if on_cpu else torch_mimic.sim_time()

    step()  # warm-up: kernels get built, the allocator fills
    sims, walls = [], []
    for _ in range(steps):
        sim_before, wall_before = sim_time(), time.perf_counter()
        step()
        sims.append(sim_time() - sim_before)
        walls.append(time.perf_counter() - wall_before)
    print(json.dumps({"sim_ms": statistics.median(sims) / 1e6,
                      "wall_s": statistics.median(walls)}))


def run(preset, model_name, steps):
    env = dict(os.environ, MIMIC_PRESET=preset, MIMIC_FALLBACK="silent",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    command = [sys.executable, __file__, "--worker", model_name, "--steps", str(steps)]
    out = subprocess.run(command + (["--cpu"] if preset == "cpu" else []), env=env,
                         capture_output=True, text=True, check=False)
    if out.returncode != 0:
        sys.exit(f"{model_name} on {preset} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--worker")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--models", help="comma-separated subset of resnet18,resnet50,gpt2_small")
    parser.add_argument("--cpu", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.steps, args.cpu)
        return
    presets = args.presets.split(",")
    models = ("resnet18",) if args.quick else ("resnet18", "resnet50", "gpt2_small")
    if args.models:
        models = tuple(args.models.split(","))
    steps = 1 if args.quick else args.steps
    results = {}
    print(f"{'model':<11} {'preset':<8} {'sim step ms':>12} {'wall s':>8} {'wall / default':>15}")
    for model_name in models:
        for preset in presets:
            r = results[(model_name, preset)] = run(preset, model_name, steps)
            base = results.get((model_name, "default"))
            ratio = f"{r['wall_s'] / base['wall_s']:>15.2f}" if base else f"{'':>15}"
            print(f"{model_name:<11} {preset:<8} {r['sim_ms']:>12.3f} {r['wall_s']:>8.2f} {ratio}",
                  flush=True)
    print()

    def sim(model_name, preset):
        return results[(model_name, preset)]["sim_ms"]

    if {"a100", "h100"} <= set(presets):
        for model_name in models:
            speedup = sim(model_name, "a100") / sim(model_name, "h100")
            verdict = "met" if speedup > 1 else "MISSED"
            print(f"ranking   {model_name}: h100 is {speedup:.2f}x faster than a100: {verdict}")
        if "resnet50" in models:
            speedup = sim("resnet50", "a100") / sim("resnet50", "h100")
            print(f"ranking   resnet50 a100/h100 {speedup:.2f} against MLPerf Training v3.0 "
                  f"{MLPERF_RESNET50_A100_OVER_H100:.2f} (ratio {speedup / MLPERF_RESNET50_A100_OVER_H100:.2f})")
    if "gpt2_small" in models and "default" in presets:
        base = results[("gpt2_small", "default")]["wall_s"]
        for preset in presets:
            ratio = results[("gpt2_small", preset)]["wall_s"] / base
            print(f"host cost gpt2_small on {preset}: {ratio:.2f}x default "
                  f"(target <= 1.3x): {'met' if ratio <= 1.3 else 'MISSED'}")
    if "gpt2_small" in models:
        cpu = run("cpu", "gpt2_small", steps)["wall_s"]
        for preset in presets:
            ratio = results[("gpt2_small", preset)]["wall_s"] / cpu
            print(f"host cost gpt2_small on {preset}: {ratio:.2f}x the CPU device ({cpu:.2f} s) "
                  f"(target <= 1.5x): {'met' if ratio <= 1.5 else 'MISSED'}")


if __name__ == "__main__":
    main()
