"""Timing-only mode's host reads of device data (issue 20): `.item()`, `bool()`, `.cpu()`,
`.tolist()`, printing, the one host sync of nonzero, masked_select and unique, and the CPU
fallback get placeholder zeros, and each is counted per (kind, op, Python line) and warned once
per place. The mode is fixed when the driver starts, so the cases run in one child process per
mode; `mimic run --timing-only` sets it for its script and prints the count."""
import json
import os
import subprocess
import sys
import textwrap

import pytest
import torch_mimic

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(torch_mimic.__file__))))
MIMIC = os.environ.get("MIMIC_CLI", os.path.join(BUILD, "bin", "mimic"))

# Each case's lines carry a marker comment ("# @name"), by which the tests find their numbers.
TIMING_SCRIPT = """
import json, warnings
import torch, torch_mimic
warnings.simplefilter("always")
d = torch.device(torch_mimic.DEVICE_TYPE, 0)
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    x = torch.full((4,), 7.0, device=d)
    out = {"item": [x.sum().item() for _ in range(3)],  # @item
           "bool": bool(x[0] != 0),  # @bool
           "cpu": x.cpu().tolist(),  # @cpu
           "tolist": x.tolist(),  # @tolist
           "str": str(x)}  # @str
    m = torch.arange(6.0, device=d).reshape(2, 3)
    out["nonzero"] = list(torch.nonzero(m).shape)  # @nonzero
    out["masked_select"] = list(torch.masked_select(m, m > 2).shape)  # @masked_select
    out["unique"] = list(torch.unique(m).shape)  # @unique
    # complex128 has no device kernels: its ops go through the CPU fallback.
    z = torch.ones(8, dtype=torch.complex128, device=d)
    torch_mimic.reset_fallback_report()
    y = torch.exp(z)  # @fallback
    out["fallback"] = torch_mimic.fallback_report()
mode = [w for w in seen if issubclass(w.category, torch_mimic.TimingModeWarning)]
print(json.dumps({"out": out, "report": torch_mimic.timing_mode_report(),
                  "warnings": [(w.filename, w.lineno, str(w.message)) for w in mode]}))
"""

FULL_SCRIPT = """
import json, warnings
import torch, torch_mimic
with warnings.catch_warnings(record=True) as seen:
    warnings.simplefilter("always")
    x = torch.full((4,), 7.0, device=torch.device(torch_mimic.DEVICE_TYPE, 0))
    out = {"item": x.sum().item(), "mode": torch_mimic.simulation_mode()}
mode = [w for w in seen if issubclass(w.category, torch_mimic.TimingModeWarning)]
print(json.dumps({"out": out, "report": torch_mimic.timing_mode_report(),
                  "warnings": [str(w.message) for w in mode]}))
"""


def line_of(marker):
    """reads.py:N, N the line of TIMING_SCRIPT that carries `# @marker`."""
    lines = TIMING_SCRIPT.splitlines()
    number = next(i + 1 for i, text in enumerate(lines) if text.endswith("# @" + marker))
    return f"reads.py:{number}"


def start_child(tmp_path, script, mode):
    path = tmp_path / mode / "reads.py"
    path.parent.mkdir()
    path.write_text(script)
    env = dict(os.environ, MIMIC_MODE=mode, MIMIC_FALLBACK="silent")
    return subprocess.Popen([sys.executable, str(path)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def result_of(child):
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err[-3000:]
    return json.loads(out.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("reads")
    children = {mode: start_child(tmp_path, script, mode)
                for mode, script in (("timing", TIMING_SCRIPT), ("full", FULL_SCRIPT))}
    return {mode: result_of(child) for mode, child in children.items()}


def test_scalar_and_copy_reads_are_zeros_counted_per_line_and_warned_once(results):
    out, report = results["timing"]["out"], results["timing"]["report"]
    assert out["item"] == [0.0, 0.0, 0.0] and out["bool"] is False
    assert out["cpu"] == [0.0] * 4 and out["tolist"] == [0.0] * 4
    assert "0., 0., 0., 0." in out["str"]
    assert report["mode"] == "timing"
    by_place = {(r["kind"], r["where"]): r for r in report["reads"]}
    assert by_place[("scalar", line_of("item"))]["count"] == 3
    assert by_place[("scalar", line_of("item"))]["op"] == "aten::_local_scalar_dense"
    assert by_place[("scalar", line_of("bool"))]["count"] == 1
    assert by_place[("copy", line_of("cpu"))] == {"kind": "copy", "op": "aten::_copy_from",
                                                  "where": line_of("cpu"), "count": 1,
                                                  "bytes": 16}
    assert by_place[("copy", line_of("tolist"))]["bytes"] == 16
    assert any(where == line_of("str") for _, where in by_place)
    # Every copy to the host that the backend made is counted; the driver counts the same.
    assert report["total_reads"] == report["driver_placeholder_copies"]
    assert report["total_bytes"] == report["driver_placeholder_bytes"]


def test_each_place_is_warned_once_at_its_line(results):
    warnings_, reads = results["timing"]["warnings"], results["timing"]["report"]["reads"]
    places = [(f"{os.path.basename(f)}:{line}", message.split(" at ")[0])
              for f, line, message in warnings_]
    assert len(places) == len(set(places)) == len(reads)
    assert sum(where == line_of("item") for where, _ in places) == 1
    assert all("placeholder zeros" in message and "cannot be simulated faithfully" in message
               for _, _, message in warnings_)


def test_data_dependent_sizes_read_zero_and_give_empty_results(results):
    out, reads = results["timing"]["out"], results["timing"]["report"]["reads"]
    assert (out["nonzero"], out["masked_select"], out["unique"]) == ([0, 2], [0], [0])
    syncs = {r["op"]: r["where"] for r in reads if r["kind"] == "op_sync"}
    assert syncs == {"aten::nonzero": line_of("nonzero"),
                     "aten::masked_select": line_of("masked_select"),
                     "aten::_unique2": line_of("unique")}


def test_cpu_fallback_on_placeholder_data_is_counted(results):
    out, reads = results["timing"]["out"], results["timing"]["report"]["reads"]
    assert "aten::exp" in out["fallback"], "exp of complex128 no longer falls back: pick an op"
    [exp] = [r for r in reads if r["kind"] == "fallback" and r["op"] == "aten::exp"]
    assert (exp["where"], exp["count"], exp["bytes"]) == (line_of("fallback"), 1, 8 * 16)


def test_full_mode_counts_nothing(results):
    full = results["full"]
    assert full["out"] == {"item": 28.0, "mode": "full"}
    assert full["report"]["reads"] == [] and full["warnings"] == []
    assert full["report"]["driver_placeholder_copies"] == 0


def test_mimic_run_timing_only_sets_the_mode_and_reports_the_reads(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import torch, torch_mimic
        x = torch.ones(16, device=torch.device("privateuseone", 0))
        print("mode", torch_mimic.simulation_mode())
        for _ in range(2):
            loss = (x * 2).sum()
            print("loss", loss.item())
        """))
    done = subprocess.run([MIMIC, "run", str(script), "--timing-only", "--preset", "tiny",
                           "--trace", str(tmp_path / "t.json")], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "MIMIC_FALLBACK": "silent"})
    assert done.returncode == 0, done.stderr
    assert "mode timing" in done.stdout and "loss 0.0" in done.stdout
    assert "timing only: 2 host reads of device data got placeholder zeros" in done.stdout
    assert "aten::_local_scalar_dense" in done.stdout and "train.py:7" in done.stdout
    assert "TimingModeWarning" in done.stderr and "train.py:7" in done.stderr
