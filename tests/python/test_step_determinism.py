"""The same training step gives the same simulated times in every process, on a preset with a
last-level cache, where which device addresses the tensors get decides which lines hit.

Two causes of run-to-run variation were found on such steps and fixed: the cache placed lines
by absolute device address, which moves with where mmap maps the device's memory, and the
caching allocator chose among cached blocks of one size by the host address of its own
bookkeeping. Both varied with the process's address layout, so each run here is a fresh
process; the step (a decoder layer's forward, backward and AdamW step, as in the scale study)
frees and reuses many blocks of equal size. Before the fixes, 4 runs gave 2 to 4 distinct
simulated ends."""
import json
import os
import subprocess
import sys

import pytest

RUNS = 4
HERE = os.path.dirname(os.path.abspath(__file__))
SCALE = os.path.join(HERE, "..", "..", "examples", "scale")


def _step():
    """The child: prints every activity of one training step (kind, name, start, end, cache
    hit bytes)."""
    import torch

    import torch_mimic
    from decoder import Decoder, DecoderSize, next_token_loss

    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    torch.manual_seed(0)
    size = DecoderSize(layers=1, d_model=128, heads=8, seq_len=64)
    model = Decoder(size, device, torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    ids = torch.randint(0, size.vocab, (1, size.seq_len)).to(device)
    with torch_mimic.profiler.profile() as profile:
        optimizer.zero_grad(set_to_none=True)
        next_token_loss(model(ids), ids).backward()
        optimizer.step()
        torch_mimic.synchronize()
    print(json.dumps([(a["kind"], a["name"], a["start_ns"], a["end_ns"],
                       (a["counters"] or {}).get("cache_hit_bytes"))
                      for a in profile.trace["activities"]]))


@pytest.mark.parametrize("mode", ["full", "timing"])
def test_a_step_takes_the_same_simulated_time_in_every_process(mode):
    env = dict(os.environ, MIMIC_PRESET="h100", MIMIC_MODE=mode, MIMIC_FALLBACK="silent",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1",
               PYTHONPATH=SCALE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = []
    for _ in range(RUNS):
        child = subprocess.run([sys.executable, os.path.abspath(__file__), "--step"], env=env,
                               capture_output=True, text=True, timeout=300)
        assert child.returncode == 0, child.stderr[-3000:]
        runs.append(json.loads(child.stdout.strip().splitlines()[-1]))
    assert any(hits for *_, hits in runs[0]), "the step must use the cache to test it"
    for run in runs[1:]:
        assert run == runs[0]


if __name__ == "__main__" and sys.argv[1:] == ["--step"]:
    _step()
