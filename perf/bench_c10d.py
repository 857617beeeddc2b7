"""nccl-tests-style benchmark of the c10d process group "mimic" across processes.

Each rank is a process of its own (torch.multiprocessing, spawn) owning simulated device 0; the
ranks form a "mimic" process group (collectives/c10d/process_group_mimic.h) over a TCP store on
127.0.0.1. For all_reduce (sum), _all_gather_base and _reduce_scatter_base on float32 buffers of
1 KiB, 4 KiB, ... up to --max-bytes, every rank measures:

- sim time: simulated time of one synchronous call (async_op=False, which makes the current
  stream wait for the collective), from a timing Event recorded on the current stream before
  the call to one recorded after it; the mean over --iters calls. This is the link model's time
  (collectives/c10d/time_model.h), not a host measurement.
- wall time: host time of one call, time.perf_counter() around --iters calls followed by
  torch_mimic.synchronize(), divided by --iters. It is the cost of running the simulation and
  moving the bytes with Gloo between the processes' host views of device memory.
- whether the ranks agree on the simulated end: torch_mimic.sim_time() after
  torch_mimic.synchronize(), compared across ranks after the sim loop and after the wall loop.

Sizes follow nccl-tests: "size" is the whole buffer for all_reduce, the gathered (output) buffer
for all_gather and the input buffer for reduce_scatter; algbw = size / sim time and
busbw = algbw * 2(n-1)/n for all_reduce, algbw * (n-1)/n for the other two. busbw is also shown
as a fraction of the device link bandwidth of the preset.

Finally the host overhead of a small collective: wall time per 8-byte all_reduce on mimic over
200 calls against the same on a Gloo group over CPU tensors in the same processes.

Rank 0 prints the tables. A rank's exception (or a hang past --deadline) makes the script exit
non-zero with the rank's traceback.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_c10d.py [--ranks 4]
"""
import argparse
import os
import sys
import time
import warnings
from datetime import timedelta

os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
import torch.multiprocessing as mp  # noqa: E402

from mimic_cli.common import free_port  # noqa: E402

MIB = 1 << 20
SMALL_CALLS = 200
SMALL_BYTES = 8
GROUP_TIMEOUT = timedelta(seconds=120)


def sizes(max_bytes):
    size = 1024
    while size <= max_bytes:
        yield size
        size *= 4


# ---------------------------------------------------------------------------------------------
# The collectives: each returns (call, size counted for algbw, busbw factor) for a buffer of
# `nbytes` over `n` ranks; `call()` issues one synchronous collective.


def make_all_reduce(nbytes, n, dev):
    count = nbytes // 4
    x = torch.ones(count, device=dev)
    return (lambda: dist.all_reduce(x)), count, 2 * (n - 1) / n


def make_all_gather(nbytes, n, dev):
    count = nbytes // 4 // n
    x = torch.ones(count, device=dev)
    out = torch.empty(count * n, device=dev)
    return (lambda: dist._all_gather_base(out, x)), count * n, (n - 1) / n


def make_reduce_scatter(nbytes, n, dev):
    count = nbytes // 4 // n
    x = torch.ones(count * n, device=dev)
    out = torch.empty(count, device=dev)
    return (lambda: dist._reduce_scatter_base(out, x)), count * n, (n - 1) / n


COLLECTIVES = [
    ("all_reduce", make_all_reduce),
    ("_all_gather_base", make_all_gather),
    ("_reduce_scatter_base", make_reduce_scatter),
]


# ---------------------------------------------------------------------------------------------
# One rank


def gather_floats(values, gloo):
    """Every rank's `values` (a list of floats), as a list per rank, over the Gloo group."""
    mine = torch.tensor(values, dtype=torch.float64)
    everyone = [torch.empty_like(mine) for _ in range(dist.get_world_size())]
    dist.all_gather(everyone, mine, group=gloo)
    return [t.tolist() for t in everyone]


def synchronized_sim_end(torch_mimic):
    torch_mimic.synchronize()
    return float(torch_mimic.sim_time())


def measure(call, iters, torch_mimic, gloo):
    """(mean simulated us per call, sim end after the sim loop, mean wall us per call,
    sim end after the wall loop) on this rank."""
    call()  # warm-up: buffers touched, ranks aligned in simulated time
    torch_mimic.synchronize()
    sim_ms = 0.0
    for _ in range(iters):
        start = torch_mimic.Event(enable_timing=True)
        end = torch_mimic.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        sim_ms += start.elapsed_time(end)
    sim_end = synchronized_sim_end(torch_mimic)

    dist.barrier(group=gloo)  # the ranks start the wall loop together
    begin = time.perf_counter()
    for _ in range(iters):
        call()
    torch_mimic.synchronize()
    wall_s = time.perf_counter() - begin
    wall_end = synchronized_sim_end(torch_mimic)
    return sim_ms * 1e3 / iters, sim_end, wall_s * 1e6 / iters, wall_end


def small_overhead(dev, gloo, torch_mimic):
    """Wall us per 8-byte all_reduce: (mimic, gloo over CPU tensors)."""
    results = []
    for group, device in ((None, dev), (gloo, torch.device("cpu"))):
        x = torch.ones(SMALL_BYTES // 4, device=device)
        for _ in range(5):  # warm-up
            dist.all_reduce(x, group=group)
        torch_mimic.synchronize()
        dist.barrier(group=gloo)
        begin = time.perf_counter()
        for _ in range(SMALL_CALLS):
            dist.all_reduce(x, group=group)
        if device.type != "cpu":
            torch_mimic.synchronize()
        results.append((time.perf_counter() - begin) * 1e6 / SMALL_CALLS)
    return results


def agree_text(per_rank_values):
    lo, hi = min(per_rank_values), max(per_rank_values)
    return "yes" if lo == hi else f"NO ({hi - lo:.0f} ns apart)"


def rank_main(rank, n, port, args):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    import torch_mimic  # registers the "mimic" backend

    # _all_gather_base / _reduce_scatter_base warn on every call that they are private.
    warnings.filterwarnings("ignore", message=r"torch\.distributed\._(all_gather|reduce_scatter)_base")

    dist.init_process_group("mimic", rank=rank, world_size=n, timeout=GROUP_TIMEOUT)
    gloo = dist.new_group(backend="gloo")
    dev = torch.device(torch_mimic.DEVICE_TYPE, 0)
    props = torch_mimic.get_device_properties(0)
    link = props.device_link_bandwidth_gbps

    def say(text=""):
        if rank == 0:
            print(text, flush=True)

    say(f"mimic c10d benchmark: {n} ranks, preset {props.preset}, float32, {args.iters} iters "
        f"per size; device link bandwidth {link:g} GB/s per direction")
    disagreements = 0
    for name, make in COLLECTIVES:
        say()
        say(f"# {name}")
        say(f"{'size(B)':>10} {'count':>9} {'sim(us)':>10} {'algbw':>8} {'busbw':>8} "
            f"{'busbw/link':>10} {'wall(us)':>11} {'wall/sim':>9}  ranks agree on sim end")
        for nbytes in sizes(args.max_bytes):
            call, count, bus_factor = make(nbytes, n, dev)
            row = gather_floats(list(measure(call, args.iters, torch_mimic, gloo)), gloo)
            sim_us, _, wall_us, _ = row[0]
            sim_agree = agree_text([r[1] for r in row])
            wall_agree = agree_text([r[3] for r in row])
            per_call_agree = agree_text([r[0] * 1e3 for r in row])
            agree = "yes" if sim_agree == wall_agree == per_call_agree == "yes" else (
                f"sim loop {sim_agree}, wall loop {wall_agree}, per-call sim {per_call_agree}")
            disagreements += agree != "yes"
            size = count * 4
            algbw = size / (sim_us * 1e3)  # bytes per ns = GB/s
            busbw = algbw * bus_factor
            say(f"{size:>10} {count:>9} {sim_us:>10.2f} {algbw:>8.2f} {busbw:>8.2f} "
                f"{busbw / link:>10.3f} {wall_us:>11.1f} {wall_us / sim_us:>9.1f}  {agree}")
            del call
    say()
    say(f"ranks agreed on simulated end times in all rows: {'yes' if not disagreements else 'NO'}")

    mimic_us, gloo_us = gather_floats(small_overhead(dev, gloo, torch_mimic), gloo)[0]
    say()
    say(f"# host overhead, {SMALL_BYTES}-byte all_reduce, {SMALL_CALLS} calls (rank 0 wall)")
    say(f"mimic: {mimic_us:.1f} us/call   gloo (CPU tensors): {gloo_us:.1f} us/call   "
        f"ratio mimic/gloo: {mimic_us / gloo_us:.2f}")
    dist.barrier(group=gloo)
    dist.destroy_process_group()


# ---------------------------------------------------------------------------------------------
# Launcher


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--max-bytes", type=int, default=64 * MIB)
    parser.add_argument("--iters", type=int, default=5, help="calls per size (default 5)")
    parser.add_argument("--deadline", type=float, default=600,
                        help="seconds before the ranks are killed as hung (default 600)")
    args = parser.parse_args()
    if args.ranks < 2 or args.iters < 1 or args.max_bytes < 1024:
        parser.error("need --ranks >= 2, --iters >= 1, --max-bytes >= 1024")

    start = time.monotonic()
    context = mp.start_processes(rank_main, args=(args.ranks, free_port(), args),
                                 nprocs=args.ranks, join=False, start_method="spawn")
    try:
        # join() raises ProcessRaisedException (with the rank's traceback) or
        # ProcessExitedException as soon as a rank fails, and terminates the others.
        while not context.join(timeout=1):
            if time.monotonic() - start > args.deadline:
                raise RuntimeError(f"ranks still running after {args.deadline:g} s (a hang?)")
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
    print(f"\ntotal run time {time.monotonic() - start:.1f} s", flush=True)


if __name__ == "__main__":
    sys.exit(main())
