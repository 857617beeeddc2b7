"""Failures of the `mimic` command that must never be silent (issue 19, item 3), and the presets
as an axis of `what-if`: a device count above the limit, a stopped `mimic run` (its child and
temporary folder go with it), MIMIC_SANITIZE from the environment, a script that never uses the
device. Scripts are tiny and run on the tiny preset."""
import os
import pathlib
import signal
import subprocess
import time

import torch_mimic

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(torch_mimic.__file__))))
MIMIC = os.environ.get("MIMIC_CLI", os.path.join(BUILD, "bin", "mimic"))

ON_DEVICE = """
import torch, torch_mimic, mimic_cli
x = torch.randn(32, 32, device=torch.device("privateuseone", 0))
for _ in range(2):
    (x @ x).sum().item()
    mimic_cli.step()
"""


def mimic(*args, env=None, cwd=None):
    done = subprocess.run([MIMIC, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "MIMIC_FALLBACK": "silent", **(env or {})},
                          timeout=300)
    return done.returncode, done.stdout, done.stderr


def test_more_devices_than_the_limit_is_one_line():
    code, out, err = mimic("devices", "--devices", 100000)
    assert code == 2 and out == "" and "Traceback" not in err
    first, hint = err.strip().splitlines()
    assert first == ("mimic: field 'system.num_devices' is 100000, above "
                     "the limit of 64 devices (MIMIC_MAX_DEVICES)"), first
    assert hint.startswith("hint: ")


def test_run_honours_mimic_sanitize_from_the_environment(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ON_DEVICE)
    code, out, err = mimic("run", script, "--preset", "tiny", "--trace", tmp_path / "t.json",
                           env={"MIMIC_SANITIZE": "racecheck,initcheck"})
    assert code == 0, err
    assert "Sanitizer (racecheck,initcheck): 0 findings" in out, out
    # The script's two mimic_cli.step() calls are marked on the timeline.
    assert (tmp_path / "t.html").read_text().count('<line class="step"') == 2


def test_run_warns_when_the_script_never_uses_the_device(tmp_path):
    script = tmp_path / "cpu_only.py"
    script.write_text("import torch\nprint(float((torch.ones(4) * 2).sum()))\n")
    code, out, err = mimic("run", script, "--preset", "tiny", "--trace", tmp_path / "t.json")
    assert code == 0, err
    assert (f"WARNING: {script} never used the simulated device" in out
            and "torch.device('privateuseone', 0)" in out), out
    used = tmp_path / "used.py"
    used.write_text(ON_DEVICE)
    code, out, err = mimic("run", used, "--preset", "tiny", "--trace", tmp_path / "u.json")
    assert code == 0 and "never used the simulated device" not in out, out + err


def test_sigterm_stops_the_script_and_cleans_up(tmp_path):
    pid_file = tmp_path / "child.pid"
    script = tmp_path / "forever.py"
    script.write_text(f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
                      "while True:\n    time.sleep(0.05)\n")
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = subprocess.Popen([MIMIC, "run", str(script), "--preset", "tiny", "--trace",
                            str(tmp_path / "t.json")], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True,
                           env={**os.environ, "TMPDIR": str(scratch)})
    deadline = time.monotonic() + 120
    while not pid_file.exists() or not pid_file.read_text():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.05)
    child = int(pid_file.read_text())
    assert list(scratch.glob("mimic-run-*")), "the run's temporary folder is missing"
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=120)
    assert run.returncode == 128 + signal.SIGTERM, (out, err)
    assert "stopped before the report could be made (exit 143)" in out
    assert not pathlib.Path(f"/proc/{child}").exists(), "the script outlived `mimic run`"
    assert list(scratch.iterdir()) == [], list(scratch.iterdir())
    assert not (tmp_path / "t.json").exists()  # no half-written trace


def test_what_if_takes_presets_as_an_axis(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(ON_DEVICE)
    chart = tmp_path / "chart.svg"
    code, out, err = mimic("what-if", script, "--preset", "tiny,default", "--vary",
                           "hbm_bandwidth=2x", "--chart", chart)
    assert code == 0, err
    assert "2 variants of presets tiny, default" in out
    # Each preset's own value is scaled: tiny has 100 GB/s, default 1000.
    for line in ("[1/2] preset=tiny, hbm_bandwidth=2x (hbm.bandwidth_gbps=200)",
                 "[2/2] preset=default, hbm_bandwidth=2x (hbm.bandwidth_gbps=2000)"):
        assert line in out, out
    assert "tiny, default" in chart.read_text()
    code, out, err = mimic("what-if", script, "--preset", "tiny,tiny")
    assert code == 2 and "names tiny twice" in err
    code, out, err = mimic("what-if", script, "--preset", "tiny")
    assert code == 2 and "nothing to compare" in err
