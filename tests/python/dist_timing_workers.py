"""Rank programs for test_distributed_timing.py: the c10d backend in timing-only mode
(MIMIC_MODE=timing), set by each program before torch_mimic starts its simulation."""
import ctypes
import os

import torch
import torch.distributed as dist

from dist_workers import _error_of, _init


def _mode(mode):
    os.environ["MIMIC_MODE"] = mode


def _driver():
    """The driver this process has loaded (libmimic.so), through ctypes."""
    with open("/proc/self/maps") as maps:
        path = next(line.split()[-1] for line in maps if line.rstrip().endswith("/libmimic.so"))
    return ctypes.CDLL(path)


def _host_view(tensor):
    """The simulator's bytes of a device tensor as a writable CPU tensor (mimicMemGetHostView):
    it sees what a collective wrote there, and in timing mode what it did not."""
    nbytes = tensor.numel() * tensor.element_size()
    view = ctypes.c_void_p()
    assert _driver().mimicMemGetHostView(ctypes.c_void_p(tensor.data_ptr()),
                                         ctypes.c_size_t(nbytes), ctypes.byref(view)) == 0
    buffer = (ctypes.c_uint8 * nbytes).from_address(view.value)
    return torch.frombuffer(buffer, dtype=torch.uint8)


# Elements per tensor: bulk calls move nothing in timing mode; small ones are control data, which
# timing mode moves (driver/src/timing_mode_transfers.h: up to 64 KiB of a call's tensors).
BULK, SMALL = 32 * 1024, 256


def _buffers(rank, size, dev, n):
    """The tensors of every kind of collective of the backend (a call's input first), of n
    elements each (n x size for a whole group's)."""

    def ones(count=n):
        return torch.ones(count, device=dev)

    def empty(count=n):
        return torch.empty(count, device=dev)

    root_list = [empty() for _ in range(size)] if rank == 0 else []
    return {"allreduce": [ones()], "broadcast": [ones()], "reduce": [ones()],
            "allgather": [ones()] + [empty() for _ in range(size)],
            "allgather_base": [ones(), empty(n * size)],
            "reduce_scatter_base": [ones(n * size), empty()],
            "alltoall_base": [ones(n * size), empty(n * size)],
            "gather": [ones()] + root_list,
            "scatter": [empty()] + [t.fill_(1) for t in root_list],
            "p2p": [ones()], "barrier": []}


def _call(name, rank, size, t):
    if name == "allreduce":
        dist.all_reduce(t[0])
    elif name == "broadcast":
        dist.broadcast(t[0], src=size - 1)
    elif name == "reduce":
        dist.reduce(t[0], dst=0)
    elif name == "allgather":
        dist.all_gather(t[1:], t[0])
    elif name == "allgather_base":
        dist._all_gather_base(t[1], t[0])
    elif name == "reduce_scatter_base":
        dist._reduce_scatter_base(t[1], t[0])
    elif name == "alltoall_base":
        dist.all_to_all_single(t[1], t[0])
    elif name == "gather":
        dist.gather(t[0], t[1:] or None, dst=0)
    elif name == "scatter":
        dist.scatter(t[0], t[1:] or None, src=0)
    elif name == "p2p":
        if rank == 0:
            dist.send(t[0], dst=1)
        elif rank == 1:
            dist.recv(t[0], src=0)
    else:
        dist.barrier()


def _collective_times(rank, size, dev):
    """Every kind of collective, one after another, each after compute that differs per rank
    (so that the ranks arrive at different times): the simulated time after each."""
    import torch_mimic

    a = torch.ones(64, 64, device=dev)
    times = {}
    for name, tensors in _buffers(rank, size, dev, BULK).items():
        for _ in range(1 + rank):
            a = a @ a / 64
        _call(name, rank, size, tensors)
        torch_mimic.synchronize()
        times[name] = torch_mimic.sim_time()
    return times


def _changed_buffers(rank, size, dev, n):
    """Each collective's buffers of n elements start with a per-rank pattern written through the
    host view; returns, per collective after which they no longer hold it, their bytes' sum."""
    import torch_mimic

    changed = {}
    for name, tensors in _buffers(rank, size, dev, n).items():
        torch_mimic.synchronize()  # the fills of the inputs are done before the pattern
        views = [_host_view(t) for t in tensors]
        for i, view in enumerate(views):
            view.copy_((torch.arange(view.numel()) * 7 + rank * 13 + i) % 251)
        expected = [view.clone() for view in views]
        _call(name, rank, size, tensors)
        torch_mimic.synchronize()
        if any(not torch.equal(view, want) for view, want in zip(views, expected)):
            changed[name] = sum(int(view.sum()) for view in views)
    return changed


def _bad_inputs(rank, size, dev):
    """The argument checks and the ranks' agreement: each error's text."""
    errors = {}
    errors["shape"] = _error_of(lambda: dist.all_reduce(torch.ones(10 + 2 * rank, device=dev)))
    errors["dtype"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, device=dev, dtype=torch.float32 if rank == 0 else torch.int32)))
    errors["device"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, device=dev if rank == 0 else "cpu")))
    errors["op"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, dtype=torch.int32, device=dev), op=dist.ReduceOp.BAND))
    errors["root"] = _error_of(lambda: dist.broadcast(torch.ones(4, device=dev), src=size + 3))
    errors["collective"] = _error_of(
        lambda: dist.all_reduce(torch.ones(4, device=dev)) if rank == 0
        else dist.broadcast(torch.ones(4, device=dev), src=0))
    errors["gather_size"] = _error_of(lambda: dist._all_gather_base(
        torch.empty(4 * size + rank, device=dev), torch.ones(4, device=dev)))
    return errors


def _ddp_steps(dev, steps=3):
    """DDP training steps of a small model: the simulated time each took, and the caching
    allocator's statistics after DDP's construction and after the steps. The second step
    rebuilds the gradient buckets, which sends rank 0's bucket order through a device tensor
    and reads it back."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    import torch_mimic

    torch.manual_seed(0)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                    torch.nn.Linear(256, 8)).to(dev), bucket_cap_mb=0.05)
    memory = [torch_mimic.memory_stats(dev)]
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    inputs, targets = torch.ones(16, 64), torch.ones(16, 8)
    times = []
    for _ in range(steps):
        torch_mimic.synchronize()
        start = torch_mimic.sim_time()
        loss = torch.nn.functional.mse_loss(model(inputs.to(dev)), targets.to(dev))
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        torch_mimic.synchronize()
        times.append(torch_mimic.sim_time() - start)
    memory.append(torch_mimic.memory_stats(dev))
    return {"ns": times, "memory": memory}


def _ddp_different_models(rank, dev):
    """DDP's check that the ranks' parameters agree (PyTorch's own), with rank 1's layers more or
    wider. Every rank compares the parameters' counts; only rank 1 compares its shapes with rank
    0's and finds the wider layer, and then calls a barrier, which rank 0's DDP, broadcasting
    its parameters meanwhile, finds mismatched."""
    from torch.nn.parallel import DistributedDataParallel as DDP

    more = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(1 + rank)])
    width = 8 + rank
    wider = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.Linear(width, 2))
    errors = {"count": _error_of(lambda: DDP(more.to(dev))),
              "shape": _error_of(lambda: DDP(wider.to(dev)))}
    if rank != 0:
        errors["barrier"] = _error_of(dist.barrier)
    return errors


def every_check(rank, size, mode):
    """All of the above in one group (each rank process costs seconds to start)."""
    _mode(mode)
    dev = _init(rank, size)
    return {"times": _collective_times(rank, size, dev),
            "changed": {"bulk": _changed_buffers(rank, size, dev, BULK),
                        "small": _changed_buffers(rank, size, dev, SMALL)},
            "errors": _bad_inputs(rank, size, dev),
            "ddp": _ddp_steps(dev),
            "ddp_errors": _ddp_different_models(rank, dev)}
