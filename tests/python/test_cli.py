"""The `mimic` command-line tool, run through its launcher (build/bin/mimic) as a user would:
outputs and exit codes of every subcommand, and one line plus a hint, exit code 2 and no
traceback for each kind of user mistake. Scripts are tiny and run on the tiny preset."""
import json
import os
import subprocess

import pytest
import torch_mimic

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(torch_mimic.__file__))))
MIMIC = os.environ.get("MIMIC_CLI", os.path.join(BUILD, "bin", "mimic"))

SCRIPT = """
import sys
import torch, torch_mimic, mimic_cli
x = torch.randn(64, 64, device=torch.device("privateuseone", 0))
for _ in range(2):
    y = (x @ x).relu().sum()
    mimic_cli.step()
print("script args:", sys.argv[1:], float(y.cpu()) >= 0)
"""


def mimic(*args, cwd=None):
    done = subprocess.run([MIMIC, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "MIMIC_FALLBACK": "silent"}, timeout=300)
    return done.returncode, done.stdout, done.stderr


def assert_user_error(result, *phrases):
    code, out, err = result
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    first, hint = err.strip().splitlines()[-2:]
    assert first.startswith("mimic: ") and hint.startswith("hint: "), err
    for phrase in phrases:
        assert phrase in first, err


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "tiny_step.py"
    path.write_text(SCRIPT)
    return path


@pytest.fixture(scope="module")
def traced_run(script):
    """One profiled run shared by the tests of `run` and `trace`."""
    trace = script.parent / "out.trace.json"
    result = mimic("run", script, "--preset", "tiny", "--trace", trace, "--sanitize", "racecheck",
                   "--", "--lr", "3")
    return result, trace


def test_help_lists_the_subcommands():
    code, out, _ = mimic("--help")
    assert code == 0
    for name in ("devices", "presets", "run", "what-if", "trace"):
        assert name in out
    # Timing-only mode is found from the top-level help, not only from `mimic run --help`.
    assert "mimic run train.py --preset h100 --timing-only" in out


def test_presets_lists_every_builtin_preset_with_its_peaks():
    code, out, _ = mimic("presets")
    assert code == 0
    for name in ("tiny", "default", "a100", "h100", "mi300x"):
        assert f"| {name} " in out
    assert "TF32/s" in out


def test_presets_show_marks_overrides_old_to_new_and_describes_every_field():
    code, out, _ = mimic("presets", "show", "tiny", "--set", "hbm_bandwidth=200,compute.units=8")
    assert code == 0, out
    line = next(l for l in out.splitlines() if l.startswith("* hbm.bandwidth_gbps"))
    assert "100 -> 200" in line
    assert "* compute.units" in out and "4 -> 8" in out
    assert "isa.sload_cycles" in out and "(default)" in out  # fields no preset sets
    assert "cycles of a scalar load" in out  # descriptions come from the model


def test_presets_show_prints_each_values_source(tmp_path):
    preset = tmp_path / "sourced.preset"
    preset.write_text("inherit = tiny\n"
                      "hbm.bandwidth_gbps = 123  # A datasheet, table 2\n"
                      "compute.units = 8\n")
    code, out, err = mimic("presets", "show", preset, "--set", "compute.lanes=32")
    assert code == 0, err
    header = next(l for l in out.splitlines() if l.split()[:3] == ["field", "value", "source"])
    column = header.index("source")

    def source(field):  # the text in the source column of the field's line
        return next(l for l in out.splitlines() if l[2:].startswith(field + " "))[column:].strip()

    assert source("hbm.bandwidth_gbps") == "A datasheet, table 2"
    assert source("compute.units") == "-"  # no trailing comment: no source
    assert source("compute.lanes") == "override"


def test_presets_show_errors_name_the_preset_or_field():
    assert_user_error(mimic("presets", "show", "h200"), "unknown preset 'h200'", "tiny")
    assert_user_error(mimic("presets", "show", "tiny", "--set", "hbm.bandwith_gbps=2"),
                      "hbm.bandwith_gbps")
    assert_user_error(mimic("presets", "show", "tiny", "--set", "hbm_bandwidth=fast"),
                      "hbm.bandwidth_gbps")
    assert_user_error(mimic("presets", "show"), "needs a preset name")


def test_devices_lists_each_device_of_the_chosen_preset():
    code, out, err = mimic("devices", "--preset", "tiny", "--devices", "3")
    assert code == 0, err
    rows = [l for l in out.splitlines() if "mimic-tiny" in l]
    assert len(rows) == 3
    assert "0 B / 64 MiB" in rows[0] and "ring 25 GB/s" in rows[0]
    assert "preset tiny, 3 devices" in out


def test_devices_rejects_an_unknown_preset_and_a_bad_count():
    assert_user_error(mimic("devices", "--preset", "h200"), "unknown preset 'h200'")
    assert_user_error(mimic("devices", "--devices", "0"), "--devices")


def test_run_reports_time_kernels_trace_and_sanitizer(traced_run):
    (code, out, err), trace = traced_run
    assert code == 0, err
    assert "script args: ['--lr', '3'] True" in out
    assert "Simulated time:" in out and "Steps marked: 2" in out
    assert "compute (kernels)" in out and "idle, device 0" in out
    assert "gemm" in out and "% roofline" in out
    assert "Sanitizer (racecheck): 0 findings" in out
    assert trace.exists() and trace.with_suffix(".html").exists()
    assert json.loads(trace.read_text())["mimic"]["preset"] == "tiny"


def test_run_passes_on_the_scripts_exit_code(tmp_path):
    failing = tmp_path / "fails.py"
    failing.write_text("import sys\nsys.exit(3)\n")
    code, out, _ = mimic("run", failing, "--preset", "tiny", "--trace", tmp_path / "t.json")
    assert code == 3
    assert "exited with code 3" in out


def test_run_user_errors(script, tmp_path):
    assert_user_error(mimic("run", tmp_path / "missing.py"), "missing.py", "not found")
    assert_user_error(mimic("run", script, "--preset", "h200"), "unknown preset 'h200'")
    assert_user_error(mimic("run", script, "--sanitize", "leaks"), "unknown sanitizer tool")
    assert_user_error(mimic("run", script, "--trace", tmp_path / "no" / "t.json"),
                      "directory does not exist")


def test_what_if_compares_variants_and_writes_a_chart(script, tmp_path):
    chart = tmp_path / "chart.svg"
    code, out, err = mimic("what-if", script, "--preset", "tiny", "--vary", "hbm_bandwidth=1x,4x",
                           "--chart", chart)
    assert code == 0, err
    assert "[1/2] hbm_bandwidth=1x (hbm.bandwidth_gbps=100)" in out
    assert "[2/2] hbm_bandwidth=4x (hbm.bandwidth_gbps=400)" in out
    assert "Median step" in out and "1.00x" in out
    speedup = float(out.split("hbm_bandwidth=4x")[-1].split("|")[-2].strip().rstrip("x"))
    assert speedup > 1.0  # the kernels of the tiny preset are memory-bound
    assert chart.read_text().startswith("<svg")


def test_what_if_user_errors(script):
    assert_user_error(mimic("what-if", script, "--vary", "hbm_bandwidth"), "FIELD=V1,V2")
    assert_user_error(mimic("what-if", script, "--vary", "hbm_bw=1x,2x"), "unknown field 'hbm_bw'")
    assert_user_error(mimic("what-if", script, "--vary", "topology=2x"), "not a number")
    assert_user_error(mimic("what-if", script, "--vary", "hbm_bandwidth=-1"), "hbm.bandwidth_gbps")


def test_trace_summarises_a_saved_trace(traced_run, tmp_path):
    _, trace = traced_run
    timeline = tmp_path / "timeline.html"
    code, out, err = mimic("trace", trace, "--timeline", timeline)
    assert code == 0, err
    assert "gemm" in out and "Calls" in out and "preset tiny" in out
    assert timeline.read_text().startswith("<!DOCTYPE html>")


def test_trace_rejects_what_is_not_a_trace(tmp_path):
    bogus = tmp_path / "bogus.json"
    bogus.write_text('{"hello": 1}')
    assert_user_error(mimic("trace", bogus), "not a mimic trace")
    assert_user_error(mimic("trace", tmp_path / "none.json"), "not found")
