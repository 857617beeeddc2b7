"""Many light ranks: a training step of a small model on N ranks (default 64: 8 nodes x 8 H100s of
h100-4x8) in timing-only mode (MIMIC_MODE=timing), one process per rank, on this machine.

Each rank is a process of its own (``python3 perf/bench_timing_ranks.py --rank-worker``, started
all at once, torchrun-style env:// rendezvous on 127.0.0.1) that simulates the whole system
(``MIMIC_NUM_DEVICES`` = ranks, ``network.nodes`` = nodes) and computes on its own device, the
ranks placed node by node (``LOCAL_WORLD_SIZE``). It imports torch and torch_mimic, starts the
simulation, joins the "mimic" process group, builds the `mimic demo` transformer (``--size``)
under DistributedDataParallel, and runs one training step: forward, backward (DDP's bucketed
all_reduce over the mimic c10d backend, which in timing mode moves no bulk bytes) and AdamW.

Printed, per rank (median and largest over the ranks):

- start-up: host seconds from the launch to the rank ready to train (imported, simulation up,
  group joined, model built), in wall time and in the rank's own CPU time. All ranks start at
  once on this machine's cores, so the wall figure grows with the number of ranks; the CPU
  figure is what one rank costs.
- memory: the rank's peak resident set (VmHWM) and its proportional set size (Pss, shared
  pages such as libtorch's code divided among the processes that map them) after the step. The
  sum of Pss over the ranks is what they take together; the drop of the machine's MemAvailable
  during the run is printed beside it.

Then the simulated step time (every rank ends the step's last collective at the same simulated
time) and the total wall time, from the launch to the last rank's exit.

A rank's failure (or a hang past --deadline) ends the others and exits non-zero with its log.

Run after a build:
  PYTHONPATH=build/python /usr/bin/python3 perf/bench_timing_ranks.py [--ranks 64] [--mode full]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from mimic_cli.common import free_port
from mimic_cli.host_memory import POLL_S, MemoryWatch, own_memory_kb

PRESET = "h100-4x8"
RESULT = "rank{}.json"


# ---------------------------------------------------------------------------------------------
# One rank


def rank_worker(out_dir, size_name):
    import resource
    from datetime import timedelta

    launched = float(os.environ["BENCH_LAUNCHED"])
    marks = {}

    def mark(name):
        marks[name] = time.time() - launched

    import torch
    mark("import_torch")
    import torch.distributed as dist
    import torch_mimic
    mark("import_torch_mimic")
    from torch.nn.parallel import DistributedDataParallel

    from mimic_cli.demo_config import SIZES
    from mimic_cli.demo_model import MarkovLanguage, build_model, next_token_loss

    torch.set_num_threads(1)
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    torch.empty(1, device=device)  # starts the simulation
    torch_mimic.synchronize()
    mark("simulation_up")
    dist.init_process_group("mimic", timeout=timedelta(minutes=30))
    mark("group_joined")
    size = SIZES[size_name]
    model = DistributedDataParallel(build_model(size).to(device))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    language = MarkovLanguage(size)
    tokens, targets = language.batch(0, rank, world)
    torch_mimic.synchronize()
    mark("ready")
    usage = resource.getrusage(resource.RUSAGE_SELF)
    ready_cpu = usage.ru_utime + usage.ru_stime
    ready_peak, _ = own_memory_kb()

    dist.barrier()  # the step's wall time starts when every rank is ready
    wall0, sim0 = time.perf_counter(), torch_mimic.sim_time()
    loss = next_token_loss(model(tokens.to(device)), targets.to(device))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    torch_mimic.synchronize()
    step = {"sim_ns": torch_mimic.sim_time() - sim0, "wall_s": time.perf_counter() - wall0,
            "end_ns": torch_mimic.sim_time()}
    peak, pss = own_memory_kb()
    dist.barrier()
    mode = "timing" if dist.group.WORLD.timing_only else "full"
    dist.destroy_process_group()
    result = {"rank": rank, "mode": mode, "marks": marks, "ready_cpu_s": ready_cpu,
              "ready_peak_kb": ready_peak, "peak_kb": peak, "pss_kb": pss, "step": step,
              "parameters": sum(p.numel() for p in model.parameters())}
    with open(os.path.join(out_dir, RESULT.format(rank)), "w") as f:
        json.dump(result, f)


# ---------------------------------------------------------------------------------------------
# The launcher


def rank_env(args, rank, port, launched):
    env = dict(os.environ)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
               WORLD_SIZE=str(args.ranks), LOCAL_RANK=str(rank % args.per_node),
               LOCAL_WORLD_SIZE=str(args.per_node), MIMIC_PRESET=args.preset,
               MIMIC_NUM_DEVICES=str(args.nodes * args.per_node),
               MIMIC_OVERRIDES=f"network.nodes={args.nodes}", MIMIC_MODE=args.mode,
               MIMIC_HOST_THREADS="1", OMP_NUM_THREADS="1", MIMIC_FALLBACK="silent",
               SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1", BENCH_LAUNCHED=repr(launched))
    return env


def launch(args, out_dir):
    port = free_port()
    launched = time.time()
    ranks = []
    for rank in range(args.ranks):
        log = open(os.path.join(out_dir, f"rank{rank}.log"), "w")
        ranks.append(subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), "--rank-worker", "--out", out_dir,
             "--size", args.size], env=rank_env(args, rank, port, launched), stdout=log,
            stderr=subprocess.STDOUT))
        log.close()
    return ranks, launched


def wait(ranks, deadline_s, watch):
    """Waits for every rank; the first failure (or the deadline, or the machine running out of
    memory) ends the others. Returns (rank, why) of the first failure, or None."""
    end = time.monotonic() + deadline_s
    try:
        while any(p.poll() is None for p in ranks):
            failed = next(((r, f"exit code {p.returncode}") for r, p in enumerate(ranks)
                           if p.poll() not in (None, 0)), None)
            if failed:
                return failed
            running = next((r for r, p in enumerate(ranks) if p.poll() is None), 0)
            if time.monotonic() > end:
                return running, f"still running after {deadline_s:.0f} s"
            if watch.exhausted.is_set():
                return running, (f"stopped: the machine's MemAvailable fell below "
                                 f"{watch.floor_kb // 1024} MiB")
            time.sleep(POLL_S)
        return next(((r, f"exit code {p.returncode}") for r, p in enumerate(ranks)
                     if p.returncode), None)
    finally:
        for process in ranks:
            if process.poll() is None:
                process.kill()
            process.wait()


def spread(values, unit, scale=1.0, digits=1):
    values = [v * scale for v in values]
    return (f"median {statistics.median(values):.{digits}f} {unit}, "
            f"max {max(values):.{digits}f} {unit}")


def report(args, results, wall_s, memory_drop_kb):
    mib = 1 / 1024
    marks = [r["marks"] for r in results]
    ends = {r["step"]["end_ns"] for r in results}
    lines = [
        f"{args.ranks} ranks ({args.nodes} node{'s' * (args.nodes != 1)} x {args.per_node} "
        f"devices of {args.preset}), "
        f"{results[0]['mode']} mode, the `mimic demo` '{args.size}' transformer "
        f"({results[0]['parameters']:,} parameters) under DDP, one training step",
        f"  start-up wall (launch to ready):  {spread([m['ready'] for m in marks], 's')}",
        f"    import torch done at:           {spread([m['import_torch'] for m in marks], 's')}",
        f"    import torch_mimic done at:     "
        f"{spread([m['import_torch_mimic'] for m in marks], 's')}",
        f"    simulation up at:               {spread([m['simulation_up'] for m in marks], 's')}",
        f"    process group joined at:        {spread([m['group_joined'] for m in marks], 's')}",
        f"  start-up CPU time per rank:       "
        f"{spread([r['ready_cpu_s'] for r in results], 's', digits=2)}",
        f"  peak RSS per rank:                {spread([r['peak_kb'] for r in results], 'MiB', mib)}",
        f"  PSS per rank after the step:      {spread([r['pss_kb'] for r in results], 'MiB', mib)}",
        f"  PSS of all ranks together:        {sum(r['pss_kb'] for r in results) * mib:.0f} MiB "
        f"(MemAvailable fell by {memory_drop_kb * mib:.0f} MiB during the run)",
        f"  simulated step time:              {results[0]['step']['sim_ns'] / 1e6:.3f} ms "
        f"(every rank ends at the same simulated time: {'yes' if len(ends) == 1 else 'NO'})",
        f"  step wall time (ranks ready to done): "
        f"{spread([r['step']['wall_s'] for r in results], 's', digits=2)}",
        f"  total wall time (launch to last exit): {wall_s:.1f} s",
    ]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=64, help="ranks, one process each")
    parser.add_argument("--per-node", type=int, default=8, help="ranks (devices) per node")
    parser.add_argument("--preset", default=PRESET, help=f"multi-node preset (default {PRESET})")
    parser.add_argument("--mode", choices=["timing", "full"], default="timing")
    parser.add_argument("--size", default="tiny", help="`mimic demo` model size (tiny, default)")
    parser.add_argument("--deadline", type=float, default=1800, help="seconds before giving up")
    parser.add_argument("--min-available-mib", type=int, default=2048,
                        help="end the run if the machine's MemAvailable falls below this")
    parser.add_argument("--out", help="where the ranks' logs and results go (default: a "
                                      "temporary directory)")
    parser.add_argument("--rank-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rank_worker:
        return rank_worker(args.out, args.size)
    args.nodes = -(-args.ranks // args.per_node)
    out_dir = args.out or tempfile.mkdtemp(prefix="bench_timing_ranks.")
    os.makedirs(out_dir, exist_ok=True)
    print(f"launching {args.ranks} ranks in {args.mode} mode (logs in {out_dir})", flush=True)
    watch = MemoryWatch(args.min_available_mib * 1024)
    ranks, launched = launch(args, out_dir)
    failed = wait(ranks, args.deadline, watch)
    wall_s = time.time() - launched
    memory_drop_kb = watch.stop()
    if failed:
        rank, why = failed
        log = os.path.join(out_dir, f"rank{rank}.log")
        with open(log, errors="replace") as f:
            tail = f.read()[-3000:]
        print(f"rank {rank} failed ({why}) after {wall_s:.1f} s, MemAvailable fell by "
              f"{memory_drop_kb // 1024} MiB; its log ({log}) ends:\n{tail}", file=sys.stderr)
        return 1
    results = []
    for rank in range(args.ranks):
        with open(os.path.join(out_dir, RESULT.format(rank))) as f:
            results.append(json.load(f))
    print(report(args, results, wall_s, memory_drop_kb))
    return 0


if __name__ == "__main__":
    sys.exit(main())
