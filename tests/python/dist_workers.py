"""Rank programs for test_distributed.py. Each runs in a process of its own (dist_harness) and
returns plain data for the test to check."""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

DEV = "privateuseone"
TIMEOUT = timedelta(seconds=20)


def _init(rank, size, init_method="env://", timeout=TIMEOUT):
    import torch_mimic  # noqa: F401  (registers the backend)

    dist.init_process_group("mimic", init_method=init_method, rank=rank, world_size=size,
                            timeout=timeout)
    return torch.device(DEV, 0)


def _data(rank, shape, dtype, salt=0):
    """Deterministic per-rank data that differs between ranks; small integers so that sums and
    products are exact in every dtype."""
    n = 1
    for d in shape:
        n *= d
    values = (torch.arange(n, dtype=torch.int64) * 7 + rank * 3 + salt) % 5 + 1
    return values.reshape(shape).to(dtype)


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and torch.equal(a, b)


# ---------------------------------------------------------------------------------------------
# Every collective, compared with Gloo over CPU tensors (a second group in the same processes).

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64]
SIZES = [0, 1, 7, 1000]
OPS = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX}


def _mismatches(rank, size, gloo, dev):
    bad = []

    def check(name, got, want):
        want = want.to(got.dtype)
        if not _same(got.cpu(), want.cpu()):
            bad.append(f"{name}: rank {rank} got {got.cpu().tolist()[:6]}, want "
                       f"{want.tolist()[:6]}")

    for dtype in DTYPES:
        # Gloo has no bfloat16: its reference runs in float32 (the values are small integers,
        # so both are exact until the final rounding).
        gloo_dtype = torch.float32 if dtype == torch.bfloat16 else dtype

        def mine(r, shape, salt=0):
            return _data(r, shape, dtype, salt).to(dev)

        def host(r, shape, salt=0):
            return _data(r, shape, gloo_dtype, salt)

        for n in SIZES:
            tag = f"{dtype} x {n}"
            for op_name, op in OPS.items():
                want = host(rank, [n])
                dist.all_reduce(want, op=op, group=gloo)
                got = mine(rank, [n])
                dist.all_reduce(got, op=op)
                check(f"all_reduce {op_name} {tag}", got, want)
            want = host(rank, [n])
            dist.all_reduce(want, group=gloo)
            want = (want / size if dtype.is_floating_point
                    else torch.div(want, size, rounding_mode="trunc"))
            got = mine(rank, [n])
            dist.all_reduce(got, op=dist.ReduceOp.AVG)
            check(f"all_reduce avg {tag}", got, want)

            pieces = [host(rank, [n], salt=10 + i) for i in range(3)]
            dist.all_reduce_coalesced(pieces, group=gloo)
            gots = [mine(rank, [n], salt=10 + i) for i in range(3)]
            dist.all_reduce_coalesced(gots)
            for i in range(3):
                check(f"all_reduce_coalesced [{i}] {tag}", gots[i], pieces[i])

            root = size - 1
            want = host(rank, [n], salt=1)
            dist.broadcast(want, src=root, group=gloo)
            got = mine(rank, [n], salt=1)
            dist.broadcast(got, src=root)
            check(f"broadcast {tag}", got, want)

            want = host(rank, [n], salt=2)
            dist.reduce(want, dst=root, group=gloo)
            got = mine(rank, [n], salt=2)
            dist.reduce(got, dst=root)
            check(f"reduce {tag}", got, want if rank == root else host(rank, [n], salt=2))

            # Gloo's own allgather, gather and scatter crash (SIGFPE) on 0 elements: the
            # reference of those is built by hand.
            wants = [host(r, [n], salt=3) for r in range(size)]
            gots = [torch.empty(n, dtype=dtype, device=dev) for _ in range(size)]
            dist.all_gather(gots, mine(rank, [n], salt=3))
            if n:
                gloo_gots = [torch.empty(n, dtype=gloo_dtype) for _ in range(size)]
                dist.all_gather(gloo_gots, host(rank, [n], salt=3), group=gloo)
                for r in range(size):
                    check(f"gloo all_gather [{r}] {tag}", wants[r].to(dtype).to(dev), gloo_gots[r])
            for r in range(size):
                check(f"all_gather [{r}] {tag}", gots[r], wants[r])
            flat = torch.empty(n * size, dtype=dtype, device=dev)
            dist._all_gather_base(flat, mine(rank, [n], salt=3))
            check(f"_all_gather_base {tag}", flat, torch.cat(wants))

            lists = [[torch.empty(n, dtype=dtype, device=dev),
                      torch.empty(2, dtype=dtype, device=dev)] for _ in range(size)]
            dist.all_gather_coalesced(lists, [mine(rank, [n], salt=20), mine(rank, [2], salt=21)])
            for r in range(size):
                check(f"all_gather_coalesced [{r}][0] {tag}", lists[r][0], host(r, [n], salt=20))
                check(f"all_gather_coalesced [{r}][1] {tag}", lists[r][1], host(r, [2], salt=21))

            # Gloo has no reduce_scatter: the reference is its allreduce, sliced.
            whole = torch.cat([host(rank, [n], salt=4 + r) for r in range(size)])
            dist.all_reduce(whole, group=gloo)
            want = whole[rank * n:(rank + 1) * n]
            got = torch.empty(n, dtype=dtype, device=dev)
            dist.reduce_scatter(got, [mine(rank, [n], salt=4 + r) for r in range(size)])
            check(f"reduce_scatter {tag}", got, want)
            got = torch.empty(n, dtype=dtype, device=dev)
            dist._reduce_scatter_base(
                got, torch.cat([mine(rank, [n], salt=4 + r) for r in range(size)]))
            check(f"_reduce_scatter_base {tag}", got, want)

            # Uneven all-to-all: rank r sends (r + q + n) % 3 rows of 2 to rank q.
            in_splits = [(rank + q + n) % 3 for q in range(size)]
            out_splits = [(q + rank + n) % 3 for q in range(size)]
            want = torch.empty(sum(out_splits), 2, dtype=gloo_dtype)
            dist.all_to_all_single(want, host(rank, [sum(in_splits), 2], salt=5), out_splits,
                                   in_splits, group=gloo)
            got = torch.empty(sum(out_splits), 2, dtype=dtype, device=dev)
            dist.all_to_all_single(got, mine(rank, [sum(in_splits), 2], salt=5), out_splits,
                                   in_splits)
            check(f"all_to_all_single {tag}", got, want)
            gots = [torch.empty(s, 2, dtype=dtype, device=dev) for s in out_splits]
            sent = list(mine(rank, [sum(in_splits), 2], salt=5).split(in_splits))
            dist.all_to_all(gots, [t.contiguous() for t in sent])
            check(f"all_to_all {tag}", torch.cat(gots), want)

            gots = [torch.empty(n, dtype=dtype, device=dev) for _ in range(size)]
            dist.gather(mine(rank, [n], salt=6), gots if rank == 0 else None, dst=0)
            if rank == 0:
                for r in range(size):
                    check(f"gather [{r}] {tag}", gots[r], host(r, [n], salt=6))

            got = torch.empty(n, dtype=dtype, device=dev)
            dist.scatter(got, [mine(r, [n], salt=7) for r in range(size)] if rank == 0 else None,
                         src=0)
            check(f"scatter {tag}", got, host(rank, [n], salt=7))

            # A ring of sends: rank r sends to r + 1 and receives from r - 1.
            got = torch.empty(n, dtype=dtype, device=dev)
            sent = dist.isend(mine(rank, [n], salt=8), (rank + 1) % size)
            dist.recv(got, (rank - 1) % size)
            sent.wait()
            check(f"send/recv {tag}", got, host((rank - 1) % size, [n], salt=8))

    flags = torch.tensor([rank == 0, True, False], device=dev)
    dist.all_reduce(flags)  # SUM of bool is "or"
    check("all_reduce bool sum", flags, torch.tensor([True, True, False]))
    flags = torch.tensor([rank == 0, True, False], device=dev)
    dist.all_reduce(flags, op=dist.ReduceOp.MIN)  # "and"
    check("all_reduce bool min", flags, torch.tensor([False, True, False]))
    dist.barrier()
    return bad


def collectives_match_gloo(rank, size):
    dev = _init(rank, size)
    gloo = dist.new_group(backend="gloo")
    return _mismatches(rank, size, gloo, dev)


def init_method(rank, size, method):
    dev = _init(rank, size, init_method=method)
    x = torch.full((5,), float(rank + 1), device=dev)
    dist.all_reduce(x)
    backend = dist.get_backend()
    dist.destroy_process_group()
    return {"sum": x.cpu().tolist(), "backend": backend}


# ---------------------------------------------------------------------------------------------
# Simulated time


def simulated_time(rank, size):
    """Rank 1 computes longer before the collective; both must end it at the same time, the
    slower rank's arrival plus the link model."""
    import torch_mimic

    dev = _init(rank, size)
    a = torch.ones(256, 256, device=dev)
    for _ in range(4 if rank == 1 else 1):
        a = a @ a / 256
    arrived = torch_mimic.Event(enable_timing=True)
    arrived.record()
    x = torch.ones(1 << 20, device=dev)
    work = dist.all_reduce(x, async_op=True)
    work.wait()
    done = torch_mimic.Event(enable_timing=True)
    done.record()
    done.synchronize()
    return {"arrived_to_done_ms": arrived.elapsed_time(done), "end_ns": torch_mimic.sim_time(),
            "model_ns": _allreduce_model_ns(size, 4 << 20), "x0": x[0].item()}


def _allreduce_model_ns(ranks, nbytes, devices=None):
    """The collective model's time for an f32 all_reduce of nbytes on ranks 0..ranks-1 (on
    devices 0..ranks-1 unless given), as the in-process communicator would run it alone:
    mimicCollectiveGetPlan, through ctypes on the driver this process has loaded."""
    import ctypes

    class Desc(ctypes.Structure):
        _fields_ = [("kind", ctypes.c_int), ("count", ctypes.c_size_t), ("datatype", ctypes.c_int),
                    ("op", ctypes.c_int), ("root", ctypes.c_int), ("numRanks", ctypes.c_int),
                    ("devices", ctypes.POINTER(ctypes.c_int))]

    class Plan(ctypes.Structure):
        _fields_ = [("algorithm", ctypes.c_char * 16), ("protocol", ctypes.c_char * 16),
                    ("channels", ctypes.c_int), ("steps", ctypes.c_int),
                    ("estimateNs", ctypes.c_uint64), ("bytes", ctypes.c_uint64)]

    with open("/proc/self/maps") as maps:
        path = next(line.split()[-1] for line in maps if line.rstrip().endswith("/libmimic.so"))
    devices = (ctypes.c_int * ranks)(*(devices or range(ranks)))
    plan = Plan()
    desc = Desc(0, nbytes // 4, 0, 0, 0, ranks, devices)
    assert ctypes.CDLL(path).mimicCollectiveGetPlan(ctypes.byref(desc), ctypes.byref(plan)) == 0
    return plan.estimateNs


def multinode_allreduce(rank, size):
    """4 ranks as torchrun --nnodes 2 --nproc_per_node 2 places them on a100-4x8 (two ranks to
    a node: devices 0, 1, 8, 9): the all_reduce crosses the NICs, and takes the model's time for
    those devices, which is what the in-process communicator takes on them."""
    os.environ.update(MIMIC_PRESET="a100-4x8", MIMIC_NUM_DEVICES="32", LOCAL_WORLD_SIZE="2")
    return _timed_allreduce(rank, size, two_nodes=[0, 1, 8, 9], one_node=[0, 1, 2, 3])


def one_launcher_over_two_nodes(rank, size):
    """4 ranks of one launcher (LOCAL_WORLD_SIZE 4, as torchrun --nproc_per_node 4 sets it) on
    2 nodes of 2 devices: the ranks fill node 0, then node 1 (devices 0, 1 | 2, 3), so the
    all_reduce crosses the NICs."""
    os.environ.update(MIMIC_PRESET="a100-4x8", MIMIC_NUM_DEVICES="4",
                      MIMIC_OVERRIDES="network.nodes=2", LOCAL_WORLD_SIZE="4")
    return _timed_allreduce(rank, size, two_nodes=[0, 1, 2, 3], one_node=[0, 1])


def _timed_allreduce(rank, size, two_nodes, one_node):
    import torch_mimic

    dev = _init(rank, size)
    x = torch.ones(1 << 20, device=dev)
    torch_mimic.synchronize()
    arrived = torch_mimic.Event(enable_timing=True)
    arrived.record()
    dist.all_reduce(x)
    done = torch_mimic.Event(enable_timing=True)
    done.record()
    done.synchronize()
    return {"arrived_to_done_ns": arrived.elapsed_time(done) * 1e6, "x0": x[0].item(),
            "two_nodes_ns": _allreduce_model_ns(size, 4 << 20, two_nodes),
            "one_node_ns": _allreduce_model_ns(len(one_node), 4 << 20, one_node)}


def too_many_ranks(rank, size):
    """A group of `size` ranks on a system of 2 devices: the collective says so."""
    os.environ["MIMIC_NUM_DEVICES"] = "2"
    dev = _init(rank, size)
    try:
        dist.all_reduce(torch.ones(4, device=dev))
    except RuntimeError as e:
        return str(e)
    return None


def _link_properties():
    import torch_mimic

    props = torch_mimic.get_device_properties(0)
    return {name: getattr(props, name) for name in (
        "device_link_bandwidth_gbps", "device_link_latency_ns", "hbm_bandwidth_gbps",
        "hbm_latency_ns", "command_latency_ns")}


def async_overlap(rank, size):
    """An async allreduce and a matmul queued after it overlap in simulated time."""
    import torch_mimic

    dev = _init(rank, size)
    a = torch.ones(512, 512, device=dev)
    x = torch.ones(4 << 20, device=dev)
    torch_mimic.synchronize()
    spans = {}
    for name in ("allreduce", "matmul", "both"):
        start = torch_mimic.Event(enable_timing=True)
        end = torch_mimic.Event(enable_timing=True)
        start.record()
        work = dist.all_reduce(x, async_op=True) if name != "matmul" else None
        if name != "allreduce":
            a = (a @ a) / 512
        if work is not None:
            work.wait()
        end.record()
        end.synchronize()
        spans[name] = start.elapsed_time(end)
    return spans


def stream_ordering(rank, size):
    """A collective issued on a side stream runs after that stream's producer kernel; a consumer
    on another stream that waits for an event after it sees the reduced data, later in time."""
    import torch_mimic

    dev = _init(rank, size)
    side = torch_mimic.Stream()
    consumer = torch_mimic.Stream()
    produced = torch_mimic.Event(enable_timing=True)
    reduced = torch_mimic.Event(enable_timing=True)
    consumed = torch_mimic.Event(enable_timing=True)
    with torch_mimic.stream(side):
        big = torch.ones(2048, 2048, device=dev)
        x = (big @ big)[0, :1024] * (rank + 1) / 2048
        produced.record()
        dist.all_reduce(x)
        reduced.record()
    with torch_mimic.stream(consumer):
        consumer.wait_event(reduced)
        y = x * 2
        consumed.record()
    consumed.synchronize()
    return {"model_ns": _allreduce_model_ns(size, 1024 * 4),
            "produced_to_reduced_ms": produced.elapsed_time(reduced),
            "reduced_to_consumed_ms": reduced.elapsed_time(consumed),
            "y0": y[0].item(), "expected": 2.0 * sum(r + 1 for r in range(size))}


# ---------------------------------------------------------------------------------------------
# Bad input: every rank gets an error naming the collective and the ranks, and the group still
# works afterwards.


def _error_of(fn):
    try:
        fn()
    except RuntimeError as e:
        return str(e)
    return None


def bad_inputs(rank, size):
    dev = _init(rank, size)
    errors = {}
    errors["shape"] = _error_of(lambda: dist.all_reduce(torch.ones(10 + 2 * rank, device=dev)))
    errors["dtype"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, device=dev, dtype=torch.float32 if rank == 0 else torch.int32)))
    errors["device"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, device=dev if rank == 0 else "cpu")))
    errors["contiguous"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, 4, device=dev).t() if rank == 1 else torch.ones(4, 4, device=dev)))
    errors["op"] = _error_of(lambda: dist.all_reduce(
        torch.ones(4, dtype=torch.int32, device=dev), op=dist.ReduceOp.BAND))
    errors["root"] = _error_of(lambda: dist.broadcast(torch.ones(4, device=dev), src=size + 3))
    errors["collective"] = _error_of(
        lambda: dist.all_reduce(torch.ones(4, device=dev)) if rank == 0
        else dist.broadcast(torch.ones(4, device=dev), src=0))
    x = torch.ones(3, device=dev)
    dist.all_reduce(x)
    return {"errors": errors, "after": x.cpu().tolist()}


def dead_peer(rank, size):
    dev = _init(rank, size, timeout=timedelta(seconds=5))
    x = torch.ones(4, device=dev)
    dist.all_reduce(x)
    if rank == size - 1:
        os._exit(0)  # dies without a word
    start = time.monotonic()
    error = _error_of(lambda: dist.all_reduce(x))
    return {"error": error, "seconds": time.monotonic() - start}


def late_peer(rank, size):
    """The last rank arrives long after the timeout: the others fail within about the timeout,
    naming it, instead of hanging."""
    dev = _init(rank, size, timeout=timedelta(seconds=3))
    if rank == size - 1:
        time.sleep(8)
        return None
    start = time.monotonic()
    error = _error_of(lambda: dist.all_reduce(torch.ones(4, device=dev)))
    return {"error": error, "seconds": time.monotonic() - start}


def single_rank(rank, size):
    import torch_mimic

    dev = _init(rank, size)
    x = torch.arange(4.0, device=dev)
    dist.all_reduce(x, op=dist.ReduceOp.AVG)
    gathered = [torch.empty(4, device=dev)]
    dist.all_gather(gathered, x)
    dist.barrier()
    torch_mimic.synchronize()
    return {"x": x.cpu().tolist(), "gathered": gathered[0].cpu().tolist()}


# ---------------------------------------------------------------------------------------------
# DDP on mimic against DDP on Gloo/CPU.


def _train(model, batches, device):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    for inputs, targets in batches:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs.to(device)), targets.to(device))
        loss.backward()
        optimizer.step()
    return [p.detach().cpu() for p in model.parameters()]


def ddp_parity(rank, size):
    from torch.nn.parallel import DistributedDataParallel as DDP

    dev = _init(rank, size)
    gloo = dist.new_group(backend="gloo")
    torch.manual_seed(0)
    template = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(),
                                   torch.nn.Linear(32, 4))
    generator = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(8, 16, generator=generator), torch.randn(8, 4, generator=generator))
               for _ in range(6)]
    import copy

    on_mimic = DDP(copy.deepcopy(template).to(dev), bucket_cap_mb=0.001)
    on_cpu = DDP(copy.deepcopy(template), process_group=gloo, bucket_cap_mb=0.001)
    mimic_params = _train(on_mimic, batches, dev)
    cpu_params = _train(on_cpu, batches, "cpu")
    initial = list(template.parameters())
    return {"max_diff": max((a - b).abs().max().item() for a, b in zip(mimic_params, cpu_params)),
            "moved": max((a - b.detach()).abs().max().item()
                         for a, b in zip(cpu_params, initial))}


def profiled_collective(rank, size):
    """A collective inside torch_mimic.profiler: a named range, correlated with the host op."""
    import torch_mimic

    dev = _init(rank, size)
    x = torch.ones(1024, device=dev)
    with torch_mimic.profiler.profile() as prof:
        dist.all_reduce(x)
    trace = prof.trace
    ops = {op["id"]: op["name"] for op in trace["host_ops"]}
    ranges = [a for a in trace["activities"] if a["kind"] == "range"]
    return [{"name": r["name"], "op": ops.get(r["correlation"]),
             "span_ns": r["end_ns"] - r["start_ns"]} for r in ranges]


def injected_death(rank, size):
    """MIMIC_FAULTS=die_at_collective=2 on the last rank: it exits at its second collective."""
    if rank == size - 1:
        os.environ["MIMIC_FAULTS"] = "die_at_collective=2"
    dev = _init(rank, size, timeout=timedelta(seconds=5))
    x = torch.ones(4, device=dev)
    dist.all_reduce(x)
    start = time.monotonic()
    error = _error_of(lambda: dist.all_reduce(x))
    return {"error": error, "seconds": time.monotonic() - start}


def slow_link_allreduce(rank, size, faults_by_rank):
    """An all_reduce of 16 MiB under this rank's MIMIC_FAULTS (faults_by_rank[rank]): the
    simulated time from the call to its end, in ns."""
    os.environ["MIMIC_FAULTS"] = faults_by_rank[rank]
    import torch_mimic

    dev = _init(rank, size)
    x = torch.ones(4 << 20, device=dev)
    start = torch_mimic.Event(enable_timing=True)
    start.record()
    dist.all_reduce(x)
    end = torch_mimic.Event(enable_timing=True)
    end.record()
    end.synchronize()
    return {"ns": start.elapsed_time(end) * 1e6, "props": _link_properties(), "x0": x[0].item()}
