"""One rank of `mimic demo`: `python3 -m mimic_cli.demo_worker OPTIONS` with RANK, WORLD_SIZE,
MASTER_ADDR and MASTER_PORT in the environment (env:// rendezvous), as demo.py starts it.

Each rank is a process with its own simulated system and uses its device 0; DDP averages the
gradients over the mimic c10d backend. Rank 0 prints one progress line per step, profiles the
last steps, saves the trace and timeline, and writes what demo.py reports as JSON. With
--compile, DDP wraps torch_mimic.compile(model): the forward and backward run as the captured
graphs' fused kernels, and DDP's gradient hooks fire on the original parameters as in eager.
In timing-only mode (MIMIC_MODE=timing, `mimic demo --timing-only`) nothing is computed: the
steps take the same simulated time, and no loss is recorded.
"""
import argparse
import contextlib
import itertools
import json
import os
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

from mimic_cli import compile_summary, report
from mimic_cli.demo_config import SIZES, TIMELINE_NAME, TRACE_NAME
from mimic_cli.demo_model import MarkovLanguage, build_model, next_token_loss

RENDEZVOUS_TIMEOUT = timedelta(seconds=60)
LEARNING_RATE = 1e-2
TOP_KERNELS = 10


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="mimic_cli.demo_worker")
    parser.add_argument("--steps", type=int, required=True)
    parser.add_argument("--size", choices=sorted(SIZES), required=True)
    parser.add_argument("--profile-steps", type=int, required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--result", required=True, help="rank 0 writes its JSON here")
    parser.add_argument("--compile", action="store_true", help="train torch_mimic.compile(model)")
    return parser.parse_args(argv)


def save_profile(prof, out_dir):
    return {"trace": os.path.abspath(prof.export_chrome_trace(os.path.join(out_dir, TRACE_NAME))),
            "timeline": os.path.abspath(prof.export_timeline(os.path.join(out_dir,
                                                                          TIMELINE_NAME)))}


def read_loss(loss, timing_only):
    """The loss's value, or None in timing-only mode. Either way the read copies the loss to the
    host and waits for the step, so that the step's simulated time is complete and the same in
    both modes; timing mode's copy brings a placeholder, which is not shown."""
    value = loss.item()
    return None if timing_only else value


def train(options, rank, world_size):
    import torch_mimic
    from torch.nn.parallel import DistributedDataParallel

    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    timing_only = torch_mimic.simulation_mode() == "timing"

    dist.init_process_group("mimic", rank=rank, world_size=world_size,
                            timeout=RENDEZVOUS_TIMEOUT)
    size = SIZES[options.size]
    language = MarkovLanguage(size)
    model = build_model(size).to(device)
    if options.compile:
        model = torch_mimic.compile(model)
    model = DistributedDataParallel(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE, foreach=True)
    first_profiled = options.steps - options.profile_steps
    steps, prof = [], None
    started = time.perf_counter()
    with contextlib.ExitStack() as profiling:
        for step in range(options.steps):
            if rank == 0 and step == first_profiled:
                prof = profiling.enter_context(torch_mimic.profiler.profile())
            wall0, sim0 = time.perf_counter(), torch_mimic.sim_time()
            tokens, targets = language.batch(step, rank, world_size)
            loss = next_token_loss(model(tokens.to(device)), targets.to(device))
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            value = read_loss(loss, timing_only)
            record = {"step": step + 1, "loss": value, "sim_ns": torch_mimic.sim_time() - sim0,
                      "wall_s": time.perf_counter() - wall0}
            steps.append(record)
            if rank == 0:
                shown = "  n/a " if value is None else "%.4f" % value
                print("step %3d/%d  loss %s  sim %8.3f ms  wall %5.2f s  (total %5.1f s)"
                      % (record["step"], options.steps, shown, record["sim_ns"] / 1e6,
                         record["wall_s"], time.perf_counter() - started), flush=True)
    dist.barrier()
    dist.destroy_process_group()
    if rank != 0:
        return
    # The shape `report.format_run_report` prints, plus the demo's own fields.
    result = {"preset": torch_mimic.get_device_properties(0).preset, "devices": world_size,
              "sim_ns": sum(record["sim_ns"] for record in steps),
              "step_marks_ns": list(itertools.accumulate(record["sim_ns"] for record in steps)),
              "summary": report.summarize(prof, top=TOP_KERNELS),
              "fallback": dict(torch_mimic.fallback_report()),
              **save_profile(prof, options.out),
              "size": options.size, "loss_floor": language.loss_floor(), "steps": steps,
              "profiled_steps": [first_profiled + 1, options.steps]}
    if timing_only:
        result["timing_mode"] = torch_mimic.timing_mode_report()
    if options.compile:
        reports = torch_mimic.compile_report()
        names = [report["name"] for report in reports]
        result["compile"] = dict(compile_summary.summarize("default", names, reports,
                                                           prof.trace), report=None)
    with open(options.result, "w") as out:
        json.dump(result, out, indent=1)


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # Two ranks share the cores with their simulators: one CPU thread each for PyTorch.
    torch.set_num_threads(1)
    train(options, rank, world_size)


if __name__ == "__main__":
    main()
