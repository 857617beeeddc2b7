"""Issue 20's scale targets, measured in one run of the scale study (examples/scale/study.py):
one training step of the 1.3B-parameter decoder on 8 `h100` ranks, one process per rank under
torchrun, timing-only mode, DDP (or --parallel zero), on this machine.

  - wall time: the whole launch (start-up and the one step of every rank; with --warmup 1 a
    warm-up step too) against the target of 5 minutes for one simulated step, and the step alone;
  - host memory for all ranks together against 12 GB: the largest drop of the machine's
    MemAvailable during the launch (torchrun's agent included) and the ranks' summed
    proportional set size after the step;
  - the simulated step with its breakdown, and the sanity ratio against the published figure.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_scale_study.py
                    [--parallel zero|tp] [--micro-batch N] [--warmup 1]
The machine is shared: the wall figures grow with its load (printed); memory does not.
"""
import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                                "scale"))
import study  # noqa: E402
from decoder import SIZES  # noqa: E402

WALL_TARGET_S = 5 * 60
MEMORY_TARGET_BYTES = 12e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", default="ddp", choices=["ddp", "zero", "tp"])
    parser.add_argument("--micro-batch", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=0, choices=[0, 1],
                        help="steps before the measured one (default 0: the launch is one step)")
    cli = parser.parse_args()
    args = argparse.Namespace(size="1.3b", ranks=8, preset="h100", micro_batch=cli.micro_batch,
                              parallel=cli.parallel, mode="timing", warmup=cli.warmup,
                              token_ids="random")
    out_dir = tempfile.mkdtemp(prefix="mimic-bench-scale-")
    load = os.getloadavg()[0]
    results, wall, memory_drop_kb = study.run_ranks(args, 1, out_dir)
    summary = study.report(args, SIZES[args.size], results, wall, memory_drop_kb)
    study.sanity(summary)
    step_wall = max(r["host_step_s"] for r in results)
    memory = max(memory_drop_kb * 1024, sum(r["pss_kb"] for r in results) * 1024)
    print(f"load average at the start: {load:.1f} on {os.cpu_count()} cores")
    print(f"wall time of the launch (start-up and {1 + args.warmup} step(s)): {wall:.0f} s "
          f"(target <= {WALL_TARGET_S} s for one step) "
          f"{'met' if wall <= WALL_TARGET_S else 'MISSED'}; the measured step alone "
          f"{step_wall:.0f} s")
    print(f"host memory of all ranks: {memory / 1e9:.2f} GB (target <= "
          f"{MEMORY_TARGET_BYTES / 1e9:.0f} GB) "
          f"{'met' if memory <= MEMORY_TARGET_BYTES else 'MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
