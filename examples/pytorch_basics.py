"""pytorch_basics: PyTorch on the simulated mimic device.

Tensors on the device, a small MLP trained for a few steps (loss must fall, and match the same
training on the CPU), two streams ordered by an event, pinned non_blocking copies, memory
statistics of the caching allocator, and simulated time from events and from the clock.

    PYTHONPATH=build/python /usr/bin/python3 examples/pytorch_basics.py

Runs on the `tiny` preset unless MIMIC_PRESET names another. Exits non-zero if a check fails.
"""
import os
import sys

os.environ.setdefault("MIMIC_PRESET", "tiny")  # before the first device call builds the system
os.environ.setdefault("MIMIC_FALLBACK", "warn")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import torch_mimic  # noqa: E402  (registers the device, its ops, allocator and streams)

failures = []


def check(condition, what):
    print(("ok    " if condition else "FAIL  ") + what)
    if not condition:
        failures.append(what)


dev = torch.device(torch_mimic.DEVICE_TYPE, 0)  # "privateuseone" in PyTorch 1.13

# --- The device -------------------------------------------------------------------------------
props = torch_mimic.get_device_properties(0)
print(f"{torch_mimic.device_count()} device(s); device 0: {props.name} (preset {props.preset}), "
      f"{props.compute_units} CUs, {props.total_memory >> 20} MiB HBM at "
      f"{props.hbm_bandwidth_gbps:g} GB/s")

# --- Tensors ----------------------------------------------------------------------------------
a = torch.arange(12, dtype=torch.float32).reshape(3, 4).to(dev)
b = torch.ones(4, 2, device=dev)
c = a @ b  # mm on the matrix pipe
check(c.device.type == dev.type, "a @ b stays on the device")
check(torch.equal(c.cpu(), torch.arange(12.0).reshape(3, 4) @ torch.ones(4, 2)), "a @ b is right")
view = a.t()  # views alias device memory
view[0, 0] = 100.0
check(a[0, 0].item() == 100.0, "a view writes through to its base")

# --- A small model, trained a few steps --------------------------------------------------------
torch.manual_seed(0)
template = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
inputs = torch.randn(64, 32)
targets = inputs[:, :4].clone() * 2.0 - 1.0


def train(device, steps=8):
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 4))
    model.load_state_dict(template.state_dict())
    model.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    x, y = inputs.to(device), targets.to(device)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())  # .item() waits for the device
    return losses


torch_mimic.reset_fallback_report()
start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
start.record()
losses = train(dev)
end.record()
end.synchronize()
train_ms = start.elapsed_time(end)
cpu_losses = train("cpu")
print("losses on mimic:", " ".join(f"{v:.4f}" for v in losses))
check(losses[-1] < 0.8 * losses[0], "the loss falls over 8 SGD steps")
check(max(abs(m - c) for m, c in zip(losses, cpu_losses)) < 1e-4, "losses match the CPU's")
print(f"8 training steps: {train_ms:.3f} ms simulated")
check(train_ms > 0, "events measure simulated time")
fallbacks = torch_mimic.fallback_report()
print("ops that ran on the CPU fallback:", fallbacks or "none")

# --- Streams and events -----------------------------------------------------------------------
# Work on a side stream must wait for what the current stream produced: an event orders them.
side = torch_mimic.Stream()
x = torch.full((256, 256), 2.0, device=dev)
ready = torch_mimic.Event()
ready.record()  # on the current (default) stream
with torch_mimic.stream(side):
    side.wait_event(ready)
    y = x * 3.0 + 1.0  # runs on `side`
x.record_stream(side)  # x's memory is not reused until `side` is done with it
done = torch_mimic.Event()
done.record(side)
torch_mimic.current_stream().wait_event(done)
check(torch.all(y == 7.0).item(), "side-stream result, ordered by events")

# Pinned host memory: non_blocking copies are truly asynchronous.
host = torch_mimic.empty_pinned((1024, 1024))
host.fill_(0.5)
check(torch_mimic.is_pinned(host), "empty_pinned gives pinned memory")
t0 = torch_mimic.Event(enable_timing=True)
t1 = torch_mimic.Event(enable_timing=True)
t0.record()
on_device = host.to(dev, non_blocking=True)
t1.record()
t1.synchronize()
copy_ms = t0.elapsed_time(t1)
gbps = host.numel() * 4 / (copy_ms * 1e6)
print(f"4 MiB pinned upload: {copy_ms:.3f} ms simulated = {gbps:.2f} GB/s "
      f"(host link {props.host_link_bandwidth_gbps:g} GB/s)")
check(gbps <= props.host_link_bandwidth_gbps * 1.001, "an upload never beats the host link")
check(on_device.sum().item() == 0.5 * 1024 * 1024, "the uploaded data is right")

# --- Memory statistics ------------------------------------------------------------------------
torch_mimic.synchronize()
before = torch_mimic.memory_allocated()
big = torch.empty(4 << 20, device=dev)  # 16 MiB
check(torch_mimic.memory_allocated() - before >= big.numel() * 4, "memory_allocated grows")
peak = torch_mimic.max_memory_allocated()
del big
check(torch_mimic.memory_allocated() == before, "memory_allocated falls when a tensor dies")
check(torch_mimic.memory_reserved() >= peak, "the cache keeps the block reserved")
stats = torch_mimic.memory_stats()
print(f"allocated {torch_mimic.memory_allocated() >> 10} KiB, peak {peak >> 20} MiB, "
      f"reserved {torch_mimic.memory_reserved() >> 20} MiB, {len(stats)} stats")
torch_mimic.empty_cache()
check(torch_mimic.memory_reserved() < peak, "empty_cache releases cached blocks")

# --- The simulated clock ----------------------------------------------------------------------
now = torch_mimic.sim_time()
print(f"simulated clock at the end: {now / 1e6:.3f} ms")
check(now > 0, "sim_time advances")

if failures:
    print(f"pytorch_basics: {len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("pytorch_basics: OK")
