"""Scale study: one training step of a GPT-style decoder sized like a 1.3B-parameter model on 8
simulated H100s, one process per rank launched by torchrun, in timing-only mode.

    PYTHONPATH=build/python /usr/bin/python3 examples/scale/study.py
        [--size 1.3b|7b|test] [--ranks 8] [--preset h100] [--micro-batch 1] [--warmup 0|1]
        [--parallel ddp|zero|tp] [--mode timing|full] [--link-scales 0.5,1,2]

Each rank builds the decoder (examples/scale/decoder.py) in bfloat16 directly on its device, wraps
it in DistributedDataParallel (25 MiB buckets, gradients all-reduced during the backward pass) and
trains it with AdamW: `--parallel zero` shards AdamW's state over the ranks with
ZeroRedundancyOptimizer; `--parallel tp` splits every block over the ranks instead
(examples/scale/tensor_parallel.py: heads and MLP columns, two all-reduces per block each way), all
ranks working on the same sequences. Each rank draws its token ids on the host. The first step is
profiled (its time includes the caching allocator's first allocations); with --warmup 1 it
builds the kernels and fills the allocator, and the second is profiled. Timing-only mode
(MIMIC_MODE=timing) computes no values and moves no bulk bytes, so the weights (2.6 GB in bfloat16
per rank for 1.3B) and activations live in simulated address space only; the simulated times are
those full mode would give.

Printed: the simulated step time and its breakdown on rank 0 (kernel time, collective time,
communication not hidden behind compute, device memory peak), the spread of the step's end over
the ranks, the host cost (wall time, each rank's peak RSS and the ranks' summed proportional set
size), a what-if table over NVLink bandwidth (one run per `--link-scales` entry, scaling
device_link.bandwidth_gbps), and a sanity ratio against a published throughput of a model of
this size on 8 H100s (MosaicML llm-foundry, `PUBLISHED`), with the reasons it should differ.
Exits non-zero if a rank fails.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
RESULT = "rank{}.json"

# MosaicML llm-foundry, scripts/train/benchmarking/README.md, table "H100 80GB BF16": MPT "1b"
# (1,315,950,592 parameters), sequence 2048, 8 x h100_80gb, micro-batch 14, amp_bf16, FSDP
# FULL_SHARD, no activation checkpointing: 45455 tokens/s per GPU, MFU 41.82 %.
PUBLISHED = {"model": "MPT-1b (1.32B)", "gpus": 8, "seq_len": 2048, "micro_batch": 14,
             "tokens_per_s_per_gpu": 45455, "mfu": 0.4182,
             "source": "mosaicml/llm-foundry scripts/train/benchmarking/README.md, H100 80GB BF16"}
H100_BF16_DENSE_TFLOPS = 989  # H100 SXM datasheet, the peak MFU figures are taken against


# ---------------------------------------------------------------------------------------------
# One rank (started by torchrun)


def rank_worker(args):
    started = time.time()
    import torch
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel

    import torch_mimic
    from mimic_cli.host_memory import own_memory_kb
    from mimic_cli.report import breakdown
    from torch_mimic.profiler import profile

    sys.path.insert(0, HERE)
    from decoder import SIZES, Decoder, next_token_loss

    torch.set_num_threads(1)
    size = SIZES[args.size]
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    dist.init_process_group("mimic")
    rank = dist.get_rank()
    torch.manual_seed(0)
    if args.parallel == "tp":
        from tensor_parallel import TensorParallelAttention, TensorParallelMLP

        model = Decoder(size, device, torch.bfloat16, make_attention=TensorParallelAttention,
                        make_mlp=TensorParallelMLP)
    else:
        model = DistributedDataParallel(Decoder(size, device, torch.bfloat16), bucket_cap_mb=25)
    if args.parallel == "zero":
        optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW,
                                            lr=1e-4)
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=True)
    # The token ids come from the host, as a data loader's do: an embedding's and the loss's
    # memory accesses depend on them, and in timing mode a copy of up to 64 KiB (micro-batch 4
    # of 2048 int64 ids) keeps its bytes, so those kernels see the ids full mode sees.
    sequences = torch.randint(0, size.vocab, (args.micro_batch, size.seq_len + 1),
                              generator=torch.Generator().manual_seed(
                                  0 if args.parallel == "tp" else rank))
    if args.token_ids == "zeros":
        sequences.zero_()
    ids, targets = sequences[:, :-1].to(device), sequences[:, 1:].to(device)

    def step():
        optimizer.zero_grad(set_to_none=True)
        next_token_loss(model(ids), targets).backward()
        optimizer.step()
        torch_mimic.synchronize()

    walls = []
    for _ in range(args.warmup):  # kernels built, allocator blocks cached
        wall = time.perf_counter()
        step()
        walls.append(time.perf_counter() - wall)
    torch_mimic.reset_peak_memory_stats(device)
    dist.barrier()
    sim_start, wall = torch_mimic.sim_time(), time.perf_counter()
    with profile() as measured:
        step()
    walls.append(time.perf_counter() - wall)
    peak_rss, pss = own_memory_kb()
    result = {
        "rank": rank, "world": dist.get_world_size(), "mode": torch_mimic.simulation_mode(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "step_ns": torch_mimic.sim_time() - sim_start, "end_ns": torch_mimic.sim_time(),
        "breakdown": breakdown(measured.trace),
        "device_peak_allocated": torch_mimic.max_memory_allocated(device),
        "device_peak_reserved": torch_mimic.max_memory_reserved(device),
        "device_capacity": torch_mimic.get_device_properties(0).total_memory,
        "host_warmup_s": walls[:-1], "host_step_s": walls[-1],
        "host_start_s": time.time() - started - sum(walls),
        "host_cpu_s": time.process_time(),
        "peak_rss_kb": peak_rss, "pss_kb": pss,
    }
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(args.out, RESULT.format(rank)), "w") as out:
        json.dump(result, out)


# ---------------------------------------------------------------------------------------------
# The study


def run_ranks(args, link_scale, out_dir):
    """One torchrun launch of every rank on this machine; returns the ranks' results, the wall
    seconds the launch took and the largest drop of the machine's available memory, in kB."""
    from mimic_cli.common import free_port
    from mimic_cli.host_memory import MemoryWatch

    overrides = [o for o in os.environ.get("MIMIC_OVERRIDES", "").split(",") if o]
    if link_scale != 1:
        overrides.append(f"device_link.bandwidth_gbps={args.link_gbps * link_scale:g}")
    env = dict(os.environ, MIMIC_PRESET=args.preset, MIMIC_MODE=args.mode,
               MIMIC_OVERRIDES=",".join(overrides), MIMIC_HOST_THREADS="1", OMP_NUM_THREADS="1",
               MIMIC_FALLBACK="error", SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    worker = [os.path.abspath(__file__), "--rank-worker", "--out", out_dir, "--size", args.size,
              "--micro-batch", str(args.micro_batch), "--parallel", args.parallel,
              "--warmup", str(args.warmup), "--token-ids", args.token_ids]
    # 1.13's torchrun on Python 3.11 needs its stream options spelt out (PLATFORM.md): each
    # rank's stderr goes to the log and to a file of its own under logs/.
    command = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "1",
               "--rdzv_backend", "c10d", "--rdzv_endpoint", f"127.0.0.1:{free_port()}",
               "--nproc_per_node", str(args.ranks), "--redirects", "2", "--tee", "2",
               "--log_dir", os.path.join(out_dir, "logs")] + worker
    wall, watch = time.perf_counter(), MemoryWatch()
    with open(os.path.join(out_dir, "torchrun.log"), "w") as log:
        code = subprocess.run(command, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall, memory_drop_kb = time.perf_counter() - wall, watch.stop()
    if code != 0:
        with open(os.path.join(out_dir, "torchrun.log")) as log:
            tail = log.read()[-4000:]
        sys.exit(f"the ranks failed (torchrun exit {code}; log {out_dir}/torchrun.log):\n{tail}")
    results = []
    for rank in range(args.ranks):
        with open(os.path.join(out_dir, RESULT.format(rank))) as source:
            results.append(json.load(source))
    return results, wall, memory_drop_kb


def _ms(ns):
    return f"{ns / 1e6:9.2f} ms"


def report(args, size, results, wall, memory_drop_kb):
    first = results[0]
    b = first["breakdown"]
    step_ns = first["step_ns"]
    # Tensor parallelism: every rank works on the same sequences, a share of each layer.
    tokens = args.micro_batch * size.seq_len / (args.ranks if args.parallel == "tp" else 1)
    tokens_per_s = tokens / (step_ns * 1e-9)
    mfu = 3 * size.forward_flops_per_token() * tokens_per_s / (H100_BF16_DENSE_TFLOPS * 1e12)
    ends = [r["end_ns"] for r in results]
    gib = 1 << 30
    print(f"{size.describe()} ({first['parameters'] / 1e9:.3f}B as built)")
    print(f"bfloat16, {args.parallel.upper()} over {args.ranks} ranks of preset {args.preset}, "
          f"micro-batch {args.micro_batch} x {size.seq_len} tokens per rank, "
          f"{first['mode']} mode")
    print(f"simulated step (rank 0):     {_ms(step_ns)}  = {tokens_per_s:,.0f} tokens/s per GPU, "
          f"MFU {100 * mfu:.1f} % of {H100_BF16_DENSE_TFLOPS} TFLOPS")
    print(f"  compute (kernel time):     {_ms(b['compute_ns'])}")
    print(f"  collectives:               {_ms(b['collective_ns'])}")
    print(f"  exposed communication:     {_ms(b['exposed_collective_ns'])}")
    print(f"  kernels reading device data into their control flow or addresses: "
          f"{b['data_dependent_kernels']}, {_ms(b['data_dependent_ns']).strip()}"
          + (" (estimates: timing-only mode reads zeros there)" if first["mode"] == "timing"
             else ""))
    print(f"  device memory peak:        {first['device_peak_allocated'] / gib:9.2f} GiB allocated"
          f", {first['device_peak_reserved'] / gib:.2f} GiB reserved, of "
          f"{first['device_capacity'] / gib:.0f} GiB")
    # Ranks apart after the last collective: their own token ids leave other lines in the
    # cache, and ZeRO's ranks each update a shard of their own.
    print(f"  step end over the ranks:   {min(ends)} .. {max(ends)} ns")
    rss = [r["peak_rss_kb"] / 1024 for r in results]
    warmup = "".join(f", warm-up step {s:.1f} s" for s in first["host_warmup_s"])
    print(f"host: {wall:.0f} s wall for the launch (start-up median "
          f"{sorted(r['host_start_s'] for r in results)[len(results) // 2]:.1f} s{warmup}, "
          f"measured step {first['host_step_s']:.1f} s on rank 0; CPU per rank "
          f"{min(r['host_cpu_s'] for r in results):.0f}-{max(r['host_cpu_s'] for r in results):.0f}"
          f" s); peak RSS per rank {min(rss):.0f}-{max(rss):.0f} MiB; summed PSS "
          f"{sum(r['pss_kb'] for r in results) / 1024 / 1024:.2f} GiB, the machine's available "
          f"memory fell by {memory_drop_kb / 1024 / 1024:.2f} GiB at most")
    return {"step_ns": step_ns, "tokens_per_s_per_gpu": tokens_per_s, "mfu": mfu}


def what_if(rows, link_gbps):
    base = next(r for scale, r in rows if scale == 1)
    print(f"What-if over NVLink bandwidth (device_link.bandwidth_gbps, {link_gbps:g} GB/s each "
          "way in the preset):")
    print(f"  {'link GB/s':>10} {'step':>12} {'collectives':>12} {'exposed':>12} {'speed-up':>9}")
    for scale, r in rows:
        b = r["breakdown"]
        print(f"  {link_gbps * scale:>10g} {_ms(r['step_ns']):>12} {_ms(b['collective_ns']):>12} "
              f"{_ms(b['exposed_collective_ns']):>12} {base['step_ns'] / r['step_ns']:>8.3f}x")


def sanity(summary):
    ratio = summary["tokens_per_s_per_gpu"] / PUBLISHED["tokens_per_s_per_gpu"]
    print(f"Sanity check against {PUBLISHED['model']} on {PUBLISHED['gpus']} H100s "
          f"({PUBLISHED['source']}): {PUBLISHED['tokens_per_s_per_gpu']:,} tokens/s per GPU, MFU "
          f"{100 * PUBLISHED['mfu']:.1f} %; simulated {summary['tokens_per_s_per_gpu']:,.0f}: "
          f"ratio {ratio:.2f}")
    print("  Why they differ: the published run uses FlashAttention (no score matrices in HBM; "
          "here the scores, softmax and its gradient are plain kernels), mixed precision with "
          "fp32 master weights (here all-bfloat16), FSDP with micro-batch 14 (here DDP or ZeRO "
          "and a smaller micro-batch, as plain attention's scores do not fit 80 GB at 14), and "
          "fused kernels (LayerNorm, GELU, AdamW) where this eager step launches each op.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rank-worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", help="directory for the ranks' results and logs (default: a "
                                      "temporary one)")
    parser.add_argument("--size", default="1.3b", choices=["1.3b", "7b", "test"])
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--preset", default="h100")
    parser.add_argument("--micro-batch", type=int, default=1, help="sequences per rank and step")
    parser.add_argument("--parallel", default="ddp", choices=["ddp", "zero", "tp"])
    parser.add_argument("--warmup", type=int, default=0, choices=[0, 1],
                        help="steps before the measured one (1: the measured step then finds "
                             "its kernels built and the allocator's blocks cached)")
    parser.add_argument("--mode", default="timing", choices=["timing", "full"])
    parser.add_argument("--token-ids", default="random", choices=["random", "zeros"],
                        help="zeros: every token id 0, the values timing-only mode's kernels "
                             "read, so that full mode's embedding and loss kernels take timing "
                             "mode's times (to compare the modes)")
    parser.add_argument("--link-scales", default="0.5,1,2",
                        help="NVLink bandwidths to try, as multiples of the preset's")
    args = parser.parse_args()
    if args.rank_worker:
        rank_worker(args)
        return 0
    sys.path.insert(0, HERE)
    from decoder import SIZES
    from mimic_cli import presets_api
    from mimic_cli.common import UsageError

    try:
        fields = presets_api.describe(args.preset, os.environ.get("MIMIC_OVERRIDES", ""))
    except UsageError as error:
        print(f"study.py: {error}", file=sys.stderr)
        return 2
    args.link_gbps = next(float(p["value"]) for p in fields
                          if p["field"] == "device_link.bandwidth_gbps")
    scales = sorted({float(s) for s in args.link_scales.split(",")} | {1.0})
    base_dir = args.out or tempfile.mkdtemp(prefix="mimic-scale-")
    rows, summary = [], None
    for scale in scales:
        out_dir = os.path.join(base_dir, f"link-x{scale:g}")
        os.makedirs(out_dir, exist_ok=True)
        results, wall, memory_drop_kb = run_ranks(args, scale, out_dir)
        if scale == 1:
            summary = report(args, SIZES[args.size], results, wall, memory_drop_kb)
        rows.append((scale, results[0]))
    if len(rows) > 1:
        what_if(rows, args.link_gbps)
    if args.size == "1.3b":
        sanity(summary)
    print(f"results and logs: {base_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
