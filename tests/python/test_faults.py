"""Injected faults (MIMIC_FAULTS, driver/include/mimic/mimic_debug.h) as PyTorch sees them: a
clear error naming the fault, never a hang. Each case runs in a fresh process: device faults
are sticky for the life of the process's simulation."""
import os
import subprocess
import sys

import pytest

import dist_workers
from dist_harness import run_ranks, values

PROGRAM = """
import torch, torch_mimic
x = torch.ones(1024, device="privateuseone")
for _ in range(4):
    x = x * 2 + 1
print(x.sum().item())
"""


def run_with_faults(faults, program=PROGRAM):
    env = dict(os.environ, MIMIC_FAULTS=faults, MIMIC_FALLBACK="silent")
    return subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)


@pytest.mark.parametrize("faults, code", [
    ("ecc_at_kernel=3", "MIMIC_ERROR_ECC_UNCORRECTABLE"),
    ("hang_at_kernel=2", "MIMIC_ERROR_LAUNCH_TIMEOUT"),
    ("lost_at_kernel=1", "MIMIC_ERROR_DEVICE_LOST"),
    ("lost_at_ns=1", "MIMIC_ERROR_DEVICE_LOST"),
])
def test_device_faults_are_runtime_errors(faults, code):
    done = run_with_faults(faults)
    assert done.returncode != 0
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("RuntimeError"), done.stderr
    assert code in done.stderr and "injected fault" in done.stderr, done.stderr


RECOVERY = """
import torch, torch_mimic
dev = torch.device("privateuseone", 0)
kept = torch.arange(1000, dtype=torch.float32, device=dev)
x = torch.ones(1024, device=dev)
try:
    for _ in range(4):
        x = x * 2 + 1
    torch_mimic.synchronize()
    raise SystemExit("no fault")
except RuntimeError as error:
    assert "{code}" in str(error), error
try:
    torch.ones(4, device=dev).sum().item()
    raise SystemExit("the failed device kept working")
except RuntimeError as error:
    assert "mimicDeviceReset" in str(error), error
torch_mimic.reset_device()
del kept, x  # made before the reset: their memory is gone, freeing them is harmless
y = torch.arange(1000, dtype=torch.float32, device=dev)
assert (y * 2).sum().item() == 999000.0
assert torch_mimic.memory_allocated() == 4096, torch_mimic.memory_allocated()
print("recovered")
"""


@pytest.mark.parametrize("faults, code", [
    ("ecc_at_kernel=3", "MIMIC_ERROR_ECC_UNCORRECTABLE"),
    ("hang_at_kernel=2", "MIMIC_ERROR_LAUNCH_TIMEOUT"),
])
def test_reset_device_recovers_from_a_sticky_error(faults, code):
    done = run_with_faults(faults, RECOVERY.replace("{code}", code))
    assert done.returncode == 0 and "recovered" in done.stdout, done.stderr


STALE = """
import torch, torch_mimic
dev = torch.device("privateuseone", 0)
x = torch.ones(8, device=dev)
torch_mimic.reset_device()
for name, use in (("kernel", lambda: x + 1), ("download", lambda: x.cpu()),
                  ("upload", lambda: x.copy_(torch.zeros(8)))):
    try:
        use()
        print(name, "ran")
    except RuntimeError as error:
        print(name, "->", str(error).splitlines()[0])
print("after:", (torch.ones(8, device=dev) + 1).tolist())
"""


def test_a_tensor_made_before_reset_device_raises_naming_the_reset():
    # Its memory is gone: before, `x + 1` silently read whatever the reset left (zeros).
    done = run_with_faults("", STALE)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    message = ("mimic: this tensor's memory on device 0 was lost when torch_mimic.reset_device(0)"
               " reset the device (reset 1 of this process came after the tensor was made); "
               "make the tensor again after the reset")
    for name, line in zip(("kernel", "download", "upload"), lines):
        assert line.startswith(f"{name} -> {message}"), line
    assert lines[3] == "after: " + str([2.0] * 8)  # tensors made after the reset work


def test_more_than_the_device_holds_is_out_of_memory():
    program = """
import torch, torch_mimic
try:
    torch.empty(2 * torch_mimic.get_device_properties(0).total_memory, dtype=torch.uint8,
                device="privateuseone")
except torch.cuda.OutOfMemoryError as e:
    print("OOM:", e)
"""
    env = dict(os.environ, MIMIC_PRESET="tiny", MIMIC_FALLBACK="silent")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OOM: mimic out of memory. Tried to allocate 128.00 MiB on "
                                  "device 0 (total capacity 64.00 MiB"), done.stdout


def test_more_devices_than_the_limit_is_one_clear_error():
    # The backend holds per-device state for MIMIC_MAX_DEVICES (64) devices; 65 used to fail
    # deep inside it (IndexError: array::at). Now mimicInit refuses the count.
    program = """
import torch, torch_mimic
print(torch_mimic.device_count())
try:
    torch.ones(2, device="privateuseone")
except RuntimeError as error:
    print(str(error).splitlines()[0])
"""
    env = dict(os.environ, MIMIC_PRESET="tiny", MIMIC_NUM_DEVICES="65", MIMIC_FALLBACK="silent")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    count, message = done.stdout.splitlines()
    assert count == "0"
    assert message == ("mimic: the simulated system could not start: "
                       "MIMIC_ERROR_INVALID_CONFIG_VALUE: mimicInit: field 'system.num_devices' "
                       "is 65, above the limit of 64 devices (MIMIC_MAX_DEVICES)"), message


def test_injected_oom_is_an_out_of_memory_error():
    program = """
import torch, torch_mimic
try:
    torch.empty(1 << 20, device="privateuseone")
except torch.cuda.OutOfMemoryError as e:
    print("OOM:", e)
"""
    done = run_with_faults("oom_above_bytes=1MiB", program)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("OOM:") and "injected fault" in done.stdout, done.stdout


def test_without_faults_the_program_runs():
    done = run_with_faults("")
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) == 1024 * 31.0


def test_bad_fault_plan_is_named():
    done = run_with_faults("ecc_at=5")
    assert done.returncode != 0
    assert "MIMIC_FAULTS: unknown fault 'ecc_at'" in done.stderr, done.stderr


def test_injected_dead_peer(tmp_path):
    results = run_ranks(dist_workers.injected_death, 2, tmp_path)
    survivor = values(results[:1])[0]
    assert "Ranks that never reached this collective: 1" in survivor["error"]
    assert survivor["seconds"] < 10
    assert not results[1]["ok"]  # the dying rank left no result


def test_slow_link_slows_the_collective_time_model(tmp_path):
    """MIMIC_FAULTS=slow_link=4: the c10d time model moves every byte over the links 4 times
    slower, so an all_reduce takes 3 more times its link part (the alpha-beta model's
    2(n-1) * (b/n) / B for a ring of n ranks); the rest of its time is unchanged. A collective
    is as slow as the slowest rank's links, so a fault on one rank slows both."""
    nbytes, ranks, factor = 16 << 20, 2, 4

    def run(faults_by_rank, name):
        results = values(run_ranks(dist_workers.slow_link_allreduce, ranks, tmp_path / name,
                                   faults_by_rank))
        assert [r["x0"] for r in results] == [float(ranks)] * ranks
        return results

    fast = run(["", ""], "fast")
    props = fast[0]["props"]
    link_ns = 2 * (ranks - 1) * (nbytes / ranks) / props["device_link_bandwidth_gbps"]
    for faults_by_rank in ([f"slow_link={factor}"] * 2, ["", f"slow_link={factor}"]):
        slow = run(faults_by_rank, "slow" + str(faults_by_rank.count("")))
        for rank in range(ranks):
            added = slow[rank]["ns"] - fast[rank]["ns"]
            assert abs(added - (factor - 1) * link_ns) <= 4, (faults_by_rank, rank, added, link_ns)
            # The link part is most of a 16 MiB all_reduce's time: about 4 times as long in all.
            assert slow[rank]["ns"] / fast[rank]["ns"] > 0.8 * factor


def test_bad_slow_link_is_named():
    done = run_with_faults("slow_link=0.5")
    assert done.returncode != 0
    assert "MIMIC_FAULTS: fault 'slow_link' needs a number above 1" in done.stderr, done.stderr
