"""mimic demo: trains a small transformer language model with DistributedDataParallel on
simulated devices, one process per rank (demo_worker.py), and reports where the simulated time
went: progress per step, the loss falling, a time breakdown and the top kernels of the last
steps, and the saved trace and timeline. With --timing-only the ranks compute no values: the
same simulated times, and no loss."""
import json
import os
import subprocess
import sys
import threading
import time

from . import compile_summary, presets_api
from .common import PYTHON, UsageError, child_env, free_port, positive_int
from .demo_config import RESULT_NAME, SIZES
from .report import format_run_report, median
from .run import format_timing_mode

DEFAULT_STEPS = 30
DEFAULT_RANKS = 2
PROFILED_STEPS = 3  # the last steps, profiled on rank 0
POLL_S = 0.1


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "demo", help="train a small transformer on 2 simulated devices with DDP",
        description="Trains a small GPT-style language model on a synthetic language for a few "
                    "dozen steps, one process per simulated device, gradients averaged by "
                    "DistributedDataParallel over the mimic collectives. Prints the loss and "
                    "the simulated time of every step, then where the simulated time of the "
                    "last steps went, the top kernels with their roofline position, and the "
                    "paths of the saved trace and timeline. Same losses and simulated times on "
                    "every run.")
    parser.add_argument("--steps", metavar="N", type=positive_int, default=DEFAULT_STEPS,
                        help=f"training steps (default {DEFAULT_STEPS})")
    parser.add_argument("--preset", metavar="P", default=os.environ.get("MIMIC_PRESET", "default"),
                        help="preset name or .preset file (default: $MIMIC_PRESET or 'default')")
    parser.add_argument("--devices", metavar="N", type=positive_int, default=DEFAULT_RANKS,
                        help=f"simulated devices, one rank each (default {DEFAULT_RANKS})")
    parser.add_argument("--out", metavar="DIR", default="mimic-demo",
                        help="where the trace, timeline and result go (default ./mimic-demo)")
    parser.add_argument("--size", choices=sorted(SIZES), default="default",
                        help=f"model size: 'default', a {SIZES['default'].describe()}; or "
                             "'tiny', for quick checks")
    parser.add_argument("--compile", action="store_true",
                        help="train the model through torch_mimic.compile (DDP around the "
                             "compiled model): the first step also captures and lowers the "
                             "graphs; the report adds the fused kernels per graph and their "
                             "share of kernel time, and the kernel table names them by their "
                             "ops. Run without --compile for the eager figures to compare")
    parser.add_argument("--timing-only", action="store_true",
                        help="simulate without computing values (MIMIC_MODE=timing in every "
                             "rank): the same simulated step times and breakdown as the full "
                             "demo, for less host time and memory; the losses are not computed, "
                             "so no loss is shown")
    return parser


def plural(count, noun):
    return f"{count} {noun}{'s' * (count != 1)}"


def rank_env(args, rank, port):
    # Each rank's process simulates a system of one device per rank, so that the collective
    # model can place every rank on a device of it (the rank computes on its device 0).
    env = child_env(args.preset, devices=args.devices)
    env.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
               WORLD_SIZE=str(args.devices))
    env.setdefault("MIMIC_FALLBACK", "silent")
    if args.timing_only:
        env["MIMIC_MODE"] = "timing"
    # The ranks share the cores: one kernel thread each (results and simulated time do not
    # depend on it).
    env["MIMIC_HOST_THREADS"] = "1"
    return env


def start_ranks(args, out_dir, result_path):
    port = free_port()
    command = [PYTHON, "-m", "mimic_cli.demo_worker", "--steps", str(args.steps),
               "--size", args.size, "--profile-steps", str(min(PROFILED_STEPS, args.steps)),
               "--out", out_dir, "--result", result_path] + ["--compile"] * args.compile
    ranks = []
    for rank in range(args.devices):
        log = open(os.path.join(out_dir, f"rank{rank}.log"), "w")
        # Rank 0's progress lines come through us (so they follow our stdout wherever it goes).
        stdout = subprocess.PIPE if rank == 0 else log
        process = subprocess.Popen(command, env=rank_env(args, rank, port), stdout=stdout,
                                   stderr=log, text=True)
        log.close()
        ranks.append(process)
    return ranks


def relay(stream):
    for line in stream:
        print(line, end="", flush=True)


def first_failure(ranks):
    return next(((rank, process.returncode) for rank, process in enumerate(ranks)
                 if process.poll() not in (None, 0)), None)


def wait_for_ranks(ranks):
    """Waits for every rank; a rank that fails ends the others, which would otherwise wait in
    their next collective until the timeout. Returns (rank, exit code) of the first failure, or
    None."""
    reader = threading.Thread(target=relay, args=(ranks[0].stdout,), daemon=True)
    reader.start()
    try:
        while first_failure(ranks) is None and any(p.poll() is None for p in ranks):
            time.sleep(POLL_S)
        return first_failure(ranks)  # before the others are killed below
    finally:
        for process in ranks:
            if process.poll() is None:
                process.kill()
            process.wait()
        reader.join()


def last_line(path):
    with open(path, errors="replace") as log:
        lines = [line.strip() for line in log if line.strip()]
    return lines[-1] if lines else "(no output)"


def report_failure(out_dir, rank, code):
    log = os.path.join(out_dir, f"rank{rank}.log")
    print(f"mimic demo: rank {rank} failed (exit code {code}): {last_line(log)}",
          file=sys.stderr)
    print(f"hint: its whole output is in {log}", file=sys.stderr)
    return 1


def run(args):
    presets_api.check(args.preset)  # a bad preset is the user's mistake, found before starting
    out_dir = os.path.abspath(args.out)
    if os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise UsageError(f"--out '{args.out}' is a file, not a directory",
                         "give a directory (it is created if missing)")
    os.makedirs(out_dir, exist_ok=True)
    result_path = os.path.join(out_dir, RESULT_NAME)
    if os.path.exists(result_path):
        os.remove(result_path)  # a stale result must not pass for this run's

    print(f"mimic demo: {SIZES[args.size].describe()} on "
          f"{plural(args.devices, 'simulated device')} (preset {args.preset}), DDP over the "
          f"mimic collectives, {plural(args.steps, 'step')}"
          + (", compiled with torch_mimic.compile" if args.compile else "")
          + (", timing only (no values computed)" if args.timing_only else ""), flush=True)
    started = time.monotonic()
    failed = wait_for_ranks(start_ranks(args, out_dir, result_path))
    if failed:
        return report_failure(out_dir, *failed)
    with open(result_path) as f:
        result = json.load(f)
    print("\n" + format_demo_report(result, time.monotonic() - started, result_path))
    return 0


def format_loss(result):
    steps = result["steps"]
    first, last = steps[0], steps[-1]
    if "timing_mode" in result:
        return ("Timing only: no values were computed, so there is no loss to show (the model "
                "did not learn); the simulated step times are those of the full demo")
    trend = "fell" if last["loss"] < first["loss"] else "did NOT fall"
    return (f"Loss {trend}: {first['loss']:.4f} at step {first['step']} -> {last['loss']:.4f} "
            f"at step {last['step']} (a model that knew the language: about "
            f"{result['loss_floor']:.3f})")


def format_demo_report(result, wall_s, result_path):
    steps = result["steps"]
    first_profiled, last_profiled = result["profiled_steps"]
    lines = [format_loss(result),
             f"Wall time: {wall_s:.1f} s for {plural(len(steps), 'step')} on "
             f"{plural(result['devices'], 'rank')}",
             f"Profiled on rank 0: steps {first_profiled}-{last_profiled}"]
    text = "\n".join(lines) + "\n\n" + format_run_report(result) \
        + f"\nResult:   {result_path}  (losses and simulated step times, JSON)"
    if "timing_mode" in result:
        rank0_log = os.path.join(os.path.dirname(result_path), "rank0.log")
        text += "\n\n" + format_timing_mode(result["timing_mode"], warnings_in=f"in {rank0_log}")
    if "compile" in result:
        text += "\n\n" + compile_summary.format_compile(result["compile"]) \
            + "\n" + format_compiled_steps(steps)
    return text


def format_compiled_steps(steps):
    """The first compiled step also traces the model (on the device) and lowers its graphs; the
    later steps are the compiled steady state."""
    first, later = steps[0], [record["sim_ns"] for record in steps[1:]]
    line = (f"  step 1 (capture and lowering included): sim {first['sim_ns'] / 1e6:.3f} ms, "
            f"wall {first['wall_s']:.2f} s")
    if later:
        line += (f"; steps 2-{len(steps)}: median sim {median(later) / 1e6:.3f} ms "
                 "(`mimic demo` without --compile gives the eager figures)")
    return line
