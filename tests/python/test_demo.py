"""`mimic demo` and `mimic test-torch` (cli/mimic_cli/demo.py, test_torch.py), run as a user
runs them: the CLI in a child process (ctest gives its path as MIMIC_CLI; otherwise
`python3 -m mimic_cli` from the PYTHONPATH). The demo runs at its tiny size here."""
import json
import os
import re
import subprocess
import sys

import pytest

DEMO_STEPS = 6
PROGRESS_LINE = re.compile(r"^step +(\d+)/(\d+)  loss (\d+\.\d+)  sim +(\d+\.\d+) ms  wall",
                           re.MULTILINE)


def mimic(*args, timeout=300):
    cli = os.environ.get("MIMIC_CLI")
    command = [cli] if cli else [sys.executable, "-m", "mimic_cli"]
    return subprocess.run(command + list(args), capture_output=True, text=True, timeout=timeout)


def run_demo(out_dir):
    done = mimic("demo", "--size", "tiny", "--steps", str(DEMO_STEPS), "--preset", "default",
                 "--out", str(out_dir))
    assert done.returncode == 0, done.stdout + done.stderr
    with open(out_dir / "demo-result.json") as f:
        return done.stdout, json.load(f)


@pytest.fixture(scope="module")
def two_demo_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("demo")
    return [(base / name, *run_demo(base / name)) for name in ("first", "second")]


def test_demo_prints_a_progress_line_per_step_and_the_loss_falls(two_demo_runs):
    _, stdout, result = two_demo_runs[0]
    progress = PROGRESS_LINE.findall(stdout)
    assert [int(step) for step, *_ in progress] == list(range(1, DEMO_STEPS + 1))
    assert all(int(total) == DEMO_STEPS for _, total, *_ in progress)
    assert all(float(sim_ms) > 0 for *_, sim_ms in progress)
    losses = [step["loss"] for step in result["steps"]]
    assert losses[-1] < losses[0]
    assert f"Loss fell: {losses[0]:.4f} at step 1 -> {losses[-1]:.4f} at step {DEMO_STEPS}" \
        in stdout
    assert result["devices"] == 2 and result["preset"] == "default"
    assert result["fallback"] == {}  # the whole model runs on the device


def test_demo_reports_where_time_went_and_saves_trace_and_timeline(two_demo_runs):
    out_dir, stdout, result = two_demo_runs[0]
    for section in ("Profiled on rank 0: steps 4-6", "Traced span:", "compute (kernels)",
                    "copies (memcpy, memset)", "collectives", "idle, device 0",
                    "Top kernels (roofline position", "% roofline", "Trace:", "Timeline:"):
        assert section in stdout, section
    breakdown = result["summary"]["breakdown"]
    assert breakdown["compute_ns"] > 0 and breakdown["collective_ns"] > 0  # DDP's all-reduce
    assert "gemm" in result["summary"]["kernels"]
    assert result["trace"] == str(out_dir / "trace.json") and f"Trace:    {result['trace']}" \
        in stdout
    with open(result["trace"]) as f:
        assert json.load(f)["traceEvents"]
    with open(result["timeline"]) as f:
        assert "<svg" in f.read()


def test_demo_is_deterministic(two_demo_runs):
    (_, first_out, first), (_, second_out, second) = two_demo_runs
    assert [(s["loss"], s["sim_ns"]) for s in first["steps"]] == \
        [(s["loss"], s["sim_ns"]) for s in second["steps"]]
    assert first["summary"]["breakdown"] == second["summary"]["breakdown"]
    # The progress lines differ only in their wall times.
    assert [m[:4] for m in PROGRESS_LINE.findall(first_out)] == \
        [m[:4] for m in PROGRESS_LINE.findall(second_out)]


TIMING_PROGRESS_LINE = re.compile(r"^step +(\d+)/(\d+)  loss   n/a   sim +(\d+\.\d+) ms  wall",
                                  re.MULTILINE)


def test_demo_timing_only_gives_the_full_demos_step_times(tmp_path):
    def demo(name, *flags):
        done = mimic("demo", "--size", "tiny", "--steps", "2", "--preset", "default", "--out",
                     str(tmp_path / name), *flags)
        assert done.returncode == 0, done.stdout + done.stderr
        with open(tmp_path / name / "demo-result.json") as f:
            return done.stdout, json.load(f)

    full_out, full = demo("full")
    timing_out, timing = demo("timing", "--timing-only")
    assert [s["sim_ns"] for s in timing["steps"]] == [s["sim_ns"] for s in full["steps"]]
    assert [m[2] for m in TIMING_PROGRESS_LINE.findall(timing_out)] == \
        [m[3] for m in PROGRESS_LINE.findall(full_out)]
    assert timing["summary"]["breakdown"] == full["summary"]["breakdown"]
    # The report says what the run was, and shows no loss: the values are placeholders.
    assert "timing only (no values computed)" in timing_out.splitlines()[0]
    assert "Timing only: no values were computed, so there is no loss to show" in timing_out
    assert "Loss fell" not in timing_out and "Loss fell" in full_out
    assert all(s["loss"] is None for s in timing["steps"])
    assert timing["timing_mode"]["mode"] == "timing" and "timing_mode" not in full
    assert f"see the warnings in {tmp_path / 'timing' / 'rank0.log'}, one per place" \
        in timing_out


@pytest.mark.parametrize("args, message", [
    (["demo", "--steps", "0"], "--steps"),
    (["demo", "--steps", "many"], "--steps"),
    (["demo", "--preset", "no-such-preset"], "unknown preset 'no-such-preset'"),
    (["test-torch", "--ops", ","], "names no op"),
    (["test-torch", "--dtypes", "float99"], "unknown dtype 'float99'"),
])
def test_user_errors_are_one_line_and_a_hint(args, message):
    done = mimic(*args, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2, done.stderr
    assert message in lines[0] and lines[1].startswith("hint: ")
    assert "Traceback" not in done.stdout + done.stderr


def test_test_torch_prints_a_conformance_summary():
    done = mimic("test-torch", "--ops", "add,mm", timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[1/2] OpInfo conformance" in out and "[2/2] device-generic tests" in out
    assert re.search(r"\| TestMimicDeviceGenericPRIVATEUSEONE +\| +\d+ \| +0 \|", out), out
    for op in ("add", "mm"):
        assert re.search(rf"\| {op} +\| float32 \| pass ", out), out
    assert re.search(r"\| OpInfo \(op, dtype\) +\| +2 \| +2 \| +0 \|", out), out
    assert "CPU fallback" in out
