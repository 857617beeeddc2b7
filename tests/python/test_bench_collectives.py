"""mimic-bench-collectives (perf/bench_collectives.cpp) speaks nccl-tests: its flags, its table
(out of place and in place, #wrong from a checked call on known data) and its summary lines."""
import pathlib
import re
import subprocess

import pytest

import torch_mimic

# The build tree puts the package in build/python/torch_mimic and the benchmark in build/perf.
BENCH = pathlib.Path(torch_mimic.__file__).resolve().parents[2] / "perf" / "mimic-bench-collectives"
pytestmark = pytest.mark.skipif(not BENCH.exists(), reason="mimic-bench-collectives is not built")

ROW = re.compile(r"^\s+(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+-1"
                 + r"\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+(\d+)" * 2 + r"$")


def bench(*args):
    done = subprocess.run([str(BENCH), *map(str, args)], capture_output=True, text=True,
                          timeout=120, env={"SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"})
    return done.returncode, done.stdout, done.stderr


@pytest.mark.parametrize("dtype,op", [("float", "sum"), ("half", "prod"), ("bfloat16", "avg"),
                                      ("int32", "min"), ("uint8", "max")])
def test_nccl_tests_flags_and_table(dtype, op):
    code, out, err = bench("-b", "1K", "-e", "64K", "-f", "8", "-d", dtype, "-o", op,
                           "-n", "2", "-w", "1", "-c", "1", "-g", "3")
    assert code == 0, err
    assert "minBytes 1024 maxBytes 65536 step: 8(factor) warmup iters: 1 iters: 2" in out
    rows = [ROW.match(line) for line in out.splitlines() if ROW.match(line)]
    # Three collectives, sizes 1K, 8K, 64K each rounded down to whole parts of 3 ranks.
    assert len(rows) == 9, out
    for row in rows:
        size, count = int(row.group(1)), int(row.group(2))
        assert size % 3 == 0 and row.group(3) == dtype
        assert row.group(4) in (op, "none")
        assert row.group(8) == "0" and row.group(12) == "0"  # no wrong element either way
        for time, algbw in ((row.group(5), row.group(6)), (row.group(9), row.group(10))):
            # algbw is size / time, each printed with 2 decimals.
            assert abs(float(algbw) - size / (float(time) * 1e3)) <= 0.005 + \
                size / float(time) ** 2 / 1e3 * 0.005 + 1e-9
    assert "# Out of bounds values : 0 OK" in out
    assert re.search(r"^# Avg bus bandwidth    : [\d.]+$", out, re.M)


def test_without_the_check_wrong_is_not_counted():
    code, out, _ = bench("-b", "4K", "-e", "4K", "-c", "0", "-C", "allreduce", "-g", "2")
    assert code == 0
    assert "# Out of bounds values : N/A" in out
    assert re.search(r"\s+N/A\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+N/A$", out, re.M), out


@pytest.mark.parametrize("args,problem", [
    (["-x", "1"], "unknown option '-x'"),
    (["-b", "2Q"], "-b takes a size in bytes"),
    (["-d", "double"], "unknown type 'double'"),
    (["-o", "xor"], "unknown op 'xor'"),
    (["-g", "100"], "-g takes a whole number from 1 to 64"),
    (["-b", "1M", "-e", "1K"], "-b is above -e"),
])
def test_usage_errors_are_one_line_and_a_hint(args, problem):
    code, out, err = bench(*args)
    assert code == 2 and out == ""
    first, hint = err.strip().splitlines()
    assert problem in first and hint.startswith("hint: ")


MIMIC = BENCH.parents[1] / "bin" / "mimic"


def test_the_mimic_subcommand_runs_it_on_a_preset():
    done = subprocess.run([str(MIMIC), "bench-collectives", "--preset", "tiny", "-b", "4K", "-e",
                           "4K", "-C", "allreduce", "-g", "2"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# mimic-bench-collectives: preset tiny, 2 devices")
    assert len([line for line in done.stdout.splitlines() if ROW.match(line)]) == 1
    done = subprocess.run([str(MIMIC), "bench-collectives", "--preset", "h200"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "unknown preset 'h200'" in done.stderr
