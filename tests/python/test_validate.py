"""`mimic validate` on the tiny preset with a fixture figures file (validate_tiny_figures.json:
its "real" figures are test inputs, not measurements): the mimic values are what the public
APIs measure, within the physical bounds of the preset; the summary maths; and one line plus a
hint, exit code 2, for each kind of bad input."""
import json
import math
import os
import re
import subprocess

import pytest
import torch_mimic

from mimic_cli import _build, presets_api
from mimic_cli.validate_summary import aggregate, error, ratio, summarize

BUILD = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(torch_mimic.__file__))))
MIMIC = os.environ.get("MIMIC_CLI", os.path.join(BUILD, "bin", "mimic"))
FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "validate_tiny_figures.json")


def mimic(*args):
    done = subprocess.run([MIMIC, *map(str, args)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "MIMIC_FALLBACK": "silent"})
    return done.returncode, done.stdout, done.stderr


def assert_user_error(result, *phrases):
    code, out, err = result
    assert code == 2, (out, err)
    assert "Traceback" not in out + err
    first, hint = err.strip().splitlines()[-2:]
    assert first.startswith("mimic: ") and hint.startswith("hint: "), err
    for phrase in phrases:
        assert phrase in first, err


def probe(*args, devices=None):
    """mimic-probe's JSON result for a workload on tiny, run directly."""
    env = {**os.environ, "MIMIC_PRESET": "tiny", "SYSTEMC_DISABLE_COPYRIGHT_MESSAGE": "1"}
    env.pop("MIMIC_NUM_DEVICES", None)
    if devices:
        env["MIMIC_NUM_DEVICES"] = str(devices)
    done = subprocess.run([_build.PROBE, *args], capture_output=True, text=True, env=env,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def validated():
    """One JSON run of the fixture, shared by the tests that read its result."""
    code, out, err = mimic("validate", "--figures", FIXTURE, "--json")
    assert code == 0, err
    result = json.loads(out)
    assert [p["preset"] for p in result["presets"]] == ["tiny"]
    return {row["id"]: row for row in result["presets"][0]["rows"]}, result


@pytest.fixture(scope="module")
def tiny():
    return {p["field"]: float(p["value"]) for p in presets_api.describe("tiny")
            if p["field"].endswith(("_gbps", "_ns"))}


def test_pinned_upload_is_what_the_probe_measures_within_the_link(validated, tiny):
    rows, _ = validated
    row = rows["copy.h2d_pinned"]
    assert row["status"] == "ok"
    measured = probe("h2d", "bytes=4194304", "pinned=true")
    assert row["sim_ns"] == measured["sim_ns"]  # deterministic: the same simulated time
    assert row["mimic"] == pytest.approx(4194304 / measured["sim_ns"], rel=1e-12)
    # Physical bounds: no faster than the link's peak; the latencies of a 4 MiB copy are under
    # 1 % of it, and any achievable-bandwidth share of a link is above one half.
    link = tiny["host_link.bandwidth_gbps"]
    assert row["mimic"] < link
    assert row["mimic"] > 0.5 * link


def test_peer_copy_is_what_the_probe_measures_within_the_device_link(validated, tiny):
    rows, _ = validated
    row = rows["copy.peer"]
    measured = probe("peer", "bytes=4194304", devices=2)
    assert row["sim_ns"] == measured["sim_ns"]
    assert row["mimic"] == pytest.approx(4194304 / measured["sim_ns"], rel=1e-12)
    link = tiny["device_link.bandwidth_gbps"]
    assert 0.5 * link < row["mimic"] < link


def test_every_runner_reports_and_ratios_point_the_right_way(validated):
    rows, _ = validated
    for row in rows.values():
        assert row["status"] == "ok", row
        assert row["error"] == pytest.approx(math.exp(abs(math.log(row["ratio"]))) - 1)
    launch = rows["launch.sync"]  # a time: ratio = real / mimic, above 1 when mimic is faster
    assert launch["mimic"] == pytest.approx(launch["sim_ns"] / 1e3)
    assert launch["ratio"] == pytest.approx(launch["real"] / launch["mimic"])
    triad = rows["hbm.triad"]  # a throughput: ratio = mimic / real; 3 arrays of 2^18 f32
    assert triad["mimic"] == pytest.approx(3 * 262144 * 4 / triad["sim_ns"] / 1e3)
    assert triad["ratio"] == pytest.approx(triad["mimic"] / triad["real"])
    allreduce = rows["allreduce.64k"]  # busbw on 2 ranks: algbw x 2(n-1)/n = algbw
    assert allreduce["mimic"] == pytest.approx(65536 / allreduce["sim_ns"])


def test_summary_of_the_run_is_its_rows_summarised(validated):
    rows, result = validated
    summary = result["presets"][0]["summary"]
    assert summary["all"] == aggregate(list(rows.values()))
    device = [r for r in rows.values() if r["group"] != "collective"]
    assert summary["device"]["rows"] == len(device) == 4
    assert summary["collective"]["worst"]["id"] == "allreduce.64k"
    assert set(summary["groups"]) == {"memory", "copy", "launch", "collective"}
    assert set(summary["sets"]) == {"calibration", "check"}
    assert result["targets"] == {"geomean_error": 0.10, "worst_error": 0.25}


def test_summary_maths_on_synthetic_rows():
    assert ratio(real=10.0, mimic=5.0, unit="us") == 2.0  # mimic takes half the time: too fast
    assert ratio(real=10.0, mimic=5.0, unit="GB/s") == 0.5
    assert ratio(real=2.0, mimic=3.0, unit="TF") == 1.5
    assert error(0.8) == pytest.approx(0.25) and error(1.25) == pytest.approx(0.25)
    rows = [{"id": "a", "group": "memory", "set": "calibration", "ratio": 2.0},
            {"id": "b", "group": "memory", "set": "check", "ratio": 0.25},
            {"id": "c", "group": "compute", "set": "calibration", "ratio": 1.05},
            {"id": "d", "group": "collective", "set": "check", "ratio": 1.2},
            {"id": "e", "group": "copy", "set": "check", "ratio": None}]  # failed: left out
    s = summarize(rows)
    memory = s["groups"]["memory"]
    assert memory["rows"] == 2
    assert memory["geomean_error"] == pytest.approx(math.sqrt(2.0 * 4.0) - 1)
    assert memory["worst"] == {"id": "b", "ratio": 0.25, "error": pytest.approx(3.0)}
    assert not memory["geomean_met"] and not memory["worst_met"]
    compute = s["groups"]["compute"]
    assert compute["geomean_met"] and compute["worst_met"]
    assert set(s["groups"]) == {"memory", "compute", "collective"}
    assert s["device"]["rows"] == 3 and s["collective"]["rows"] == 1 and s["all"]["rows"] == 4
    assert s["sets"]["check"]["worst"]["id"] == "b"
    # a ratio and its inverse are the same error
    pair = aggregate([{"id": "x", "ratio": 1.1}, {"id": "y", "ratio": 1 / 1.1}])
    assert pair["geomean_error"] == pytest.approx(0.10)
    assert pair["worst"]["error"] == pytest.approx(0.10)
    assert aggregate([]) is None


def test_text_output_has_the_table_and_the_targets():
    code, out, err = mimic("validate", "--figures", FIXTURE, "--rows", "launch.sync,copy.peer")
    assert code == 0, err
    assert "| launch.sync " in out and "| copy.peer " in out and "hbm.triad" not in out
    assert "geomean error" in out and "<= 10 %" in out and "<= 25 %" in out
    assert re.search(r"\| copy +\| +1 \| .* \| (met|MISSED) +\|", out), out


def _fixture_with(tmp_path, change):
    data = json.load(open(FIXTURE))
    change(data["rows"])
    path = tmp_path / "figures.json"
    path.write_text(json.dumps(data))
    return path


def test_a_workload_that_fails_is_named_with_its_reason(tmp_path):
    def multi_node(rows):
        rows[4]["workload"]["nodes"] = 2

    path = _fixture_with(tmp_path, multi_node)
    code, out, err = mimic("validate", "--figures", path, "--rows", "allreduce.64k,copy.peer")
    assert code == 1, err
    assert "FAILED tiny allreduce.64k" in out and "multi-node" in out
    assert "| copy.peer " in out  # the other rows are still reported


def test_bad_inputs_are_user_errors(tmp_path):
    assert_user_error(mimic("validate", "--preset", "h200"), "unknown preset 'h200'")
    assert_user_error(mimic("validate", "--figures", FIXTURE, "--preset", "h200"),
                      "unknown preset 'h200'")
    assert_user_error(mimic("validate", "--figures", FIXTURE, "--rows", "copy.h2d_pinned,hbm.trad"),
                      "no row 'hbm.trad'", "hbm.triad")
    assert_user_error(mimic("validate", "--figures", tmp_path / "none.json"), "none.json")

    def unknown_kind(rows):
        rows[1]["workload"]["kind"] = "peer2peer"

    assert_user_error(mimic("validate", "--figures", _fixture_with(tmp_path, unknown_kind)),
                      "row 'copy.peer'", "workload kind 'peer2peer' is unknown")

    def missing_field(rows):
        del rows[3]["workload"]["elements"]

    assert_user_error(mimic("validate", "--figures", _fixture_with(tmp_path, missing_field)),
                      "row 'hbm.triad'", "'elements' is missing")

    def missing_real(rows):
        del rows[0]["real"]

    assert_user_error(mimic("validate", "--figures", _fixture_with(tmp_path, missing_real)),
                      "row 'copy.h2d_pinned'", "field 'real' is missing")

    def unit_of_another_kind(rows):
        rows[0]["unit"] = "TF"

    assert_user_error(mimic("validate", "--figures", _fixture_with(tmp_path, unit_of_another_kind)),
                      "row 'copy.h2d_pinned'", "unit 'TF'")

    not_json = tmp_path / "notes.json"
    not_json.write_text("hbm.triad = 1.7 TB/s\n")
    assert_user_error(mimic("validate", "--figures", not_json), "is not JSON")
