"""`mimic run --compile` (cli/mimic_cli/run.py, runner.py, compile_summary.py), run as a user
runs it: the CLI in a child process (ctest gives its path as MIMIC_CLI; otherwise
`python3 -m mimic_cli` from the PYTHONPATH), on tiny scripts and the tiny preset."""
import json
import os
import re
import subprocess
import sys

import pytest

# Asks for no-fusion on purpose: --compile's mode must win over the script's own.
SCRIPT = """
import torch, torch_mimic, mimic_cli
device = torch.device("privateuseone", 0)
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                            torch.nn.Linear(32, 4)).to(device)
compiled = torch_mimic.compile(model, mode="no-fusion")
x = torch.randn(8, 16, device=device)
for _ in range(2):
    compiled(x).relu().sum().backward()
    mimic_cli.step()
print("returned the model itself:", compiled is model)
"""

EAGER_SCRIPT = """
import torch, torch_mimic
x = torch.randn(8, device=torch.device("privateuseone", 0))
print("sum", float((x * 2).sum().cpu()) == float((x * 2).sum().cpu()))
"""

TABLE_ROW = re.compile(r"^(mimic_\w+_\d+ \[aten\.[\w.+]+\])\s+(\d+)\s", re.MULTILINE)


def mimic(*args, cwd):
    cli = os.environ.get("MIMIC_CLI")
    command = [cli] if cli else [sys.executable, "-m", "mimic_cli"]
    done = subprocess.run(command + [str(a) for a in args], cwd=cwd, capture_output=True,
                          text=True, env={**os.environ, "MIMIC_FALLBACK": "silent"}, timeout=300)
    return done.returncode, done.stdout, done.stderr


@pytest.fixture(scope="module")
def scripts(tmp_path_factory):
    base = tmp_path_factory.mktemp("compile_cli")
    (base / "train.py").write_text(SCRIPT)
    (base / "eager.py").write_text(EAGER_SCRIPT)
    return base


def compile_section(out):
    return out[out.index("torch_mimic.compile (--compile"):]


def test_compile_runs_the_scripts_compile_calls_in_the_chosen_mode_and_reports_them(scripts):
    code, out, err = mimic("run", "--compile", "train.py", "--preset", "tiny", cwd=scripts)
    assert code == 0, out + err
    assert "returned the model itself: False" in out
    section = compile_section(out)
    assert section.startswith("torch_mimic.compile (--compile, mode default):")
    assert "Sequential: 1 capture, 0 recompiles" in section
    forward = re.search(r"forward: (\d+) nodes, (\d+) fused into (\d+) kernels?", section)
    backward = re.search(r"backward: (\d+) nodes, (\d+) fused into (\d+) kernels?", section)
    assert forward and backward, section
    assert int(forward.group(3)) >= 1 and int(backward.group(3)) >= 1
    # The full report beside the trace says the same, in the mode --compile chose.
    path = scripts / "train.trace.compile.json"
    assert f"Compile report: {path}" in section
    with open(path) as f:
        (report,) = json.load(f)
    assert report["mode"] == "default" and len(report["captures"]) == 1
    kernels = report["captures"][0]["graphs"]["forward"]["kernels"]
    assert len(kernels) == int(forward.group(3))
    # Fused kernels appear in the kernel table by their ops (the GELU is fused, alone or as an
    # epilogue; the two profiled steps call each forward kernel at least twice), and the
    # profile line counts them.
    rows = dict(TABLE_ROW.findall(out))
    gelu = [name for name in rows if "aten.gelu" in name[name.index("[") + 1:-1].split("+")]
    assert gelu and int(rows[gelu[0]]) >= 2, out
    launches = re.search(r"profiled: (\d+) launch(es)? of (\d+) fused kernels?", section)
    assert launches and int(launches.group(1)) >= 2 * int(forward.group(3)), section


def test_compile_mode_eager_returns_the_model_and_says_so(scripts):
    code, out, err = mimic("run", "--compile-mode", "eager", "train.py", "--preset", "tiny",
                           cwd=scripts)
    assert code == 0, out + err
    assert "returned the model itself: True" in out
    section = compile_section(out)
    assert "mode eager" in section and "1 callable ran eager as asked (Sequential)" in section
    assert not TABLE_ROW.search(out)


def test_compile_on_a_script_that_compiles_nothing_says_so(scripts):
    code, out, err = mimic("run", "--compile", "eager.py", "--preset", "tiny", cwd=scripts)
    assert code == 0, out + err
    assert "sum True" in out
    assert "the script never called torch_mimic.compile" in compile_section(out)


def test_unknown_compile_mode_is_a_user_error(scripts):
    code, out, err = mimic("run", "--compile-mode", "fast", "train.py", cwd=scripts)
    assert code == 2 and "Traceback" not in out + err
    first, hint = err.strip().splitlines()[-2:]
    assert first.startswith("mimic: ") and "--compile-mode" in first and "'fast'" in first, err
    assert hint.startswith("hint: "), err


def test_compile_is_in_the_help(scripts):
    code, out, _ = mimic("run", "--help", cwd=scripts)
    assert code == 0
    assert "--compile" in out and "--compile-mode" in out and "eager" in out
