"""ddp_two_process: DistributedDataParallel on two processes over the c10d backend "mimic".

Each rank is a process with its own simulated device. `import torch_mimic` registers the
backend; `dist.init_process_group("mimic")` then works like "nccl". The ranks train the same
small MLP on different halves of a batch; DDP averages the gradients with all_reduce over the
modelled device links. Afterwards every rank must hold the same parameters, equal to those of
one CPU process trained on the whole batch. Rank 0 prints the simulated time per step.

    PYTHONPATH=build/python /usr/bin/python3 examples/ddp_two_process.py

The ranks are started with torch.multiprocessing: by default with the "fork" start method,
which saves each rank from importing torch again (seconds each); `--start-method spawn` starts
fresh interpreters, as torch.multiprocessing.spawn does. Either way the parent must not touch
the device before starting the ranks: a process holds one simulation, and its thread does not
survive a fork. torchrun works too (on Python 3.11 it needs `--redirects 2 --tee 2 --log_dir
DIR`, a PyTorch 1.13 bug). Exits non-zero if a check fails.
"""
import argparse
import os
import socket
import sys
from datetime import timedelta

import torch
import torch.multiprocessing as mp

WORLD_SIZE = 2
STEPS = 5


def make_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))


def make_batches():
    generator = torch.Generator().manual_seed(1234)
    return [(torch.randn(8 * WORLD_SIZE, 16, generator=generator),
             torch.randn(8 * WORLD_SIZE, 4, generator=generator)) for _ in range(STEPS)]


def train(model, batches, device, rank=0, size=1):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for inputs, targets in batches:
        shard = slice(rank * len(inputs) // size, (rank + 1) * len(inputs) // size)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs[shard].to(device)),
                                            targets[shard].to(device))
        loss.backward()  # DDP all-reduces (averages) the gradients here
        optimizer.step()
    return loss.item()


def worker(rank, size, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE=str(size))
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP

    import torch_mimic  # registers the device and the c10d backend "mimic"

    dist.init_process_group("mimic", rank=rank, world_size=size, timeout=timedelta(seconds=20))
    dev = torch.device(torch_mimic.DEVICE_TYPE, 0)

    # A plain collective first: real data moves between the processes.
    x = torch.full((1024,), float(rank + 1), device=dev)
    dist.all_reduce(x)
    assert torch.all(x == sum(range(1, size + 1))).item(), f"rank {rank}: all_reduce is wrong"

    model = DDP(make_model().to(dev))
    start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
    start.record()
    last_loss = train(model, make_batches(), dev, rank, size)
    end.record()
    end.synchronize()
    step_ms = start.elapsed_time(end) / STEPS

    # Every rank holds the same parameters: compare them through the backend itself.
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    low, high = flat.clone(), flat.clone()
    dist.all_reduce(low, op=dist.ReduceOp.MIN)
    dist.all_reduce(high, op=dist.ReduceOp.MAX)
    spread = (high - low).abs().max().item()
    assert spread == 0.0, f"rank {rank}: the ranks' parameters differ by {spread}"

    # ... and they are those of one process that trained on the whole batch.
    reference = make_model()
    train(reference, make_batches(), "cpu")
    diff = max((p.detach().cpu() - q.detach()).abs().max().item()
               for p, q in zip(model.parameters(), reference.parameters()))
    assert diff < 1e-5, f"rank {rank}: DDP differs from single-process training by {diff}"

    if rank == 0:
        props = torch_mimic.get_device_properties(0)
        print(f"{size} ranks on preset {props.preset}: device links "
              f"{props.device_link_bandwidth_gbps:g} GB/s, {props.device_link_latency_ns} ns/hop")
        print(f"final loss {last_loss:.4f}; {step_ms:.3f} ms simulated per training step")
        print(f"parameters identical on every rank; max difference from single-process "
              f"training {diff:.2e}")
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


if __name__ == "__main__":
    os.environ.setdefault("MIMIC_PRESET", "tiny")
    os.environ.setdefault("MIMIC_FALLBACK", "silent")
    os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--start-method", choices=["fork", "spawn"], default="fork")
    args = parser.parse_args()
    try:
        # join=True: an exception in any rank is raised here, naming the rank.
        mp.start_processes(worker, args=(WORLD_SIZE, free_port()), nprocs=WORLD_SIZE, join=True,
                           start_method=args.start_method)
    except Exception as e:  # noqa: B902
        print(f"ddp_two_process: FAILED: {e}", file=sys.stderr)
        sys.exit(1)
    print("ddp_two_process: OK")
