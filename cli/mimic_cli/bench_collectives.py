"""mimic bench-collectives [--preset P] [FLAGS]: the collectives benchmark with nccl-tests' flags
(-b -e -f -d -o -n -w -c -g; perf/bench_collectives.cpp, `-h` lists them), on a preset as the
other subcommands choose one. Its flags go to the benchmark as they are, so they are not
parsed here (PASSES_ARGS: __main__ hands over the arguments after the subcommand's name)."""
import os
import subprocess
import sys

from . import presets_api
from .common import UsageError, package_root

PASSES_ARGS = True


def add_parser(subparsers):
    return subparsers.add_parser(
        "bench-collectives", add_help=False,
        help="the collectives benchmark with nccl-tests' flags (-h lists them)",
        description="Runs AllReduce, AllGather and ReduceScatter over the simulated devices "
                    "out of place and in place, checks each result and prints nccl-tests' table "
                    "in simulated time.")


def binary():
    """The benchmark of this build tree (build/perf beside build/python)."""
    path = os.path.join(os.path.dirname(package_root()), "perf", "mimic-bench-collectives")
    if not os.access(path, os.X_OK):
        raise UsageError(f"the collectives benchmark is not built ({path} is missing)",
                         "cmake --build build --target mimic-bench-collectives")
    return path


def run_args(argv):
    """Runs the benchmark with argv, after taking --preset P out of it (the benchmark reads
    MIMIC_PRESET); returns its exit code."""
    argv, env = list(argv), dict(os.environ, SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    if "--preset" in argv:
        at = argv.index("--preset")
        if at + 1 >= len(argv):
            raise UsageError("--preset needs a preset name", "mimic presets lists them")
        env["MIMIC_PRESET"] = argv[at + 1]
        presets_api.check(env["MIMIC_PRESET"])
        del argv[at:at + 2]
    if any(word in ("-h", "--help") for word in argv):
        print("mimic bench-collectives [--preset P] [FLAGS]: --preset P runs on preset P "
              "(mimic presets lists them); the benchmark's flags follow.")
    sys.stdout.flush()
    return subprocess.run([binary()] + argv, env=env).returncode
