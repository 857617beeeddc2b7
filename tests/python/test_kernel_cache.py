"""The op kernel cache: bounded (MIMIC_KERNEL_CACHE_SIZE), least recently used out first, its
counters visible from Python, and results unchanged when kernels are evicted and rebuilt."""
import os
import subprocess
import sys
import textwrap

import torch
import torch_mimic

DEV = torch_mimic.DEVICE_TYPE

# Six ops, each a kernel of its own, cycled three times.
CHILD = textwrap.dedent("""
    import json, torch, torch_mimic
    x = torch.arange(64, dtype=torch.float32)
    y = torch.full((64,), 3.0)
    dx, dy = x.to("privateuseone"), y.to("privateuseone")
    ok = True
    for step in range(3):
        for op in (torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum):
            ok = ok and torch.equal(op(dx, dy).cpu(), op(x, y))
    print(json.dumps({"ok": ok, "stats": torch_mimic.kernel_cache_stats()}))
""")


def run_child(size):
    env = dict(os.environ, MIMIC_KERNEL_CACHE_SIZE=str(size))
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    import json

    return json.loads(done.stdout.strip().splitlines()[-1]), done


def test_stats_count_hits_and_misses():
    before = torch_mimic.kernel_cache_stats()
    x = torch.ones(16, device=DEV)
    (x * 3).cpu()
    after_first = torch_mimic.kernel_cache_stats()
    (x * 3).cpu()
    after_second = torch_mimic.kernel_cache_stats()
    assert after_second["hits"] > after_first["hits"] >= before["hits"]
    assert after_second["misses"] == after_first["misses"]
    assert after_second["entries"] <= after_second["capacity"] == 2048


def test_a_new_alpha_builds_no_kernel():
    """alpha (an LR scheduler's changing learning rate) is a kernel argument."""
    x = torch.arange(32, dtype=torch.float32, device=DEV)
    y = torch.ones(32, device=DEV)

    def step(lr):
        got = torch.add(x, y, alpha=-lr).cpu()
        assert torch.equal(got, torch.arange(32, dtype=torch.float32) - torch.tensor(lr))
        z = x.clone()
        z.add_(y, alpha=-lr)
        assert torch.equal(z.cpu(), got)

    step(0.25)  # builds the kernels of these ops once
    before = torch_mimic.kernel_cache_stats()["misses"]
    for i in range(5):
        step(0.1 / (i + 1))
    assert torch_mimic.kernel_cache_stats()["misses"] == before


def test_a_small_cache_evicts_and_results_stay_right():
    result, _ = run_child(4)
    assert result["ok"]
    stats = result["stats"]
    assert stats["capacity"] == 4
    assert stats["entries"] <= 4
    assert stats["evictions"] > 0
    # Six kernels cycled through four entries: every kernel is rebuilt on every round.
    big, _ = run_child(64)
    assert big["ok"] and big["stats"]["evictions"] == 0
    assert stats["misses"] > big["stats"]["misses"]


def test_a_bad_size_is_named():
    env = dict(os.environ, MIMIC_KERNEL_CACHE_SIZE="lots")
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    assert done.returncode != 0
    message = "MIMIC_KERNEL_CACHE_SIZE must be a whole number of kernels above 0, not 'lots'"
    assert message in done.stderr, done.stderr
