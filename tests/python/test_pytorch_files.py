"""The runner of PyTorch's own test files (tests/conformance/pytorch_tests.py): crash and hang
isolation on a generated test file, test id normalisation, classification and the known-
failure check. None of it needs PyTorch's test files."""
import os
import signal
import sys
import textwrap

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))
import pytorch_tests  # noqa: E402
import update_known_failures  # noqa: E402

GENERATED = textwrap.dedent("""\
    import os
    import signal
    import time

    import pytest


    def test_a_passes():
        pass


    def test_b_segfaults():
        os.kill(os.getpid(), signal.SIGSEGV)


    def test_c_fails():
        raise ValueError("bad value 42")


    def test_d_hangs():
        time.sleep(600)


    @pytest.mark.skip(reason="Only runs on cuda")
    def test_e_skipped():
        pass


    def test_f_passes():
        pass


    def test_g_exits():
        os._exit(3)


    def test_h_passes():
        pass
    """)


@pytest.fixture
def generated(tmp_path):
    path = tmp_path / "test_generated.py"
    path.write_text(GENERATED)
    work = tmp_path / "work"
    work.mkdir()
    return path, work


def test_crash_and_hang_do_not_stop_the_run(generated):
    path, work = generated
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    records, notes = pytorch_tests.run_file(str(path), "cpu", env, str(work), watchdog=3,
                                            device_classes_only=False, collect_seconds=120)
    outcomes = {test.split("::")[-1]: record["outcome"] for test, record in records.items()}
    assert outcomes == {"test_a_passes": "passed", "test_b_segfaults": "crash",
                        "test_c_fails": "failed", "test_d_hangs": "hang",
                        "test_e_skipped": "skipped", "test_f_passes": "passed",
                        "test_g_exits": "crash", "test_h_passes": "passed"}
    assert notes == []
    by_name = {test.split("::")[-1]: record for test, record in records.items()}
    assert by_name["test_b_segfaults"]["message"] == f"crash: {signal.SIGSEGV.name}"
    assert "test_b_segfaults" in by_name["test_b_segfaults"]["detail"]
    assert by_name["test_c_fails"]["message"] == "ValueError: bad value 42"
    assert by_name["test_d_hangs"]["message"] == "hang: ran past the 3 s watchdog"
    assert by_name["test_e_skipped"]["message"] == "Only runs on cuda"
    assert by_name["test_g_exits"]["message"] == "crash: exit code 3"


def test_keyword_selects_tests(generated):
    path, work = generated
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sys.path)
    records, _ = pytorch_tests.run_file(str(path), "cpu", env, str(work), keyword="passes",
                                        device_classes_only=False)
    assert sorted(test.split("::")[-1] for test in records) == [
        "test_a_passes", "test_f_passes", "test_h_passes"]


@pytest.mark.parametrize("nodeid, expected", [
    ("test_x.py::TestFooPRIVATEUSEONE::test_add_privateuseone_float32",
     "test_x.py::TestFoo::test_add_float32"),
    ("test_x.py::TestFooCPU::test_add_cpu_float32", "test_x.py::TestFoo::test_add_float32"),
    ("test_x.py::TestFooCPU::test_cpu_copy_cpu", "test_x.py::TestFoo::test_cpu_copy"),
    ("test_x.py::TestFooCPU::test_mm_cpu_float32_int64",
     "test_x.py::TestFoo::test_mm_float32_int64"),
    ("test_x.py::TestFooPRIVATEUSEONE::test_p_size_2_privateuseone",
     "test_x.py::TestFoo::test_p_size_2"),
    ("test_x.py::TestPlain::test_cpu_thing", "test_x.py::TestPlain::test_cpu_thing"),
])
def test_normalise_takes_the_device_out(nodeid, expected):
    assert pytorch_tests.normalise(nodeid) == expected


def record(test, outcome, message="", device_work=True, device_type="privateuseone"):
    return {"test": test, "outcome": outcome, "message": message, "device_work": device_work,
            "device_type": device_type, "fallback": {}}


MIMIC_ID = "t.py::TestFooPRIVATEUSEONE::test_a_privateuseone"
CPU_ID = "t.py::TestFooCPU::test_a_cpu"


@pytest.mark.parametrize("mimic, cpu, expected", [
    (record(MIMIC_ID, "passed"), record(CPU_ID, "passed", device_type="cpu"), "agnostic"),
    (record(MIMIC_ID, "failed", "AssertionError: x"), record(CPU_ID, "passed"), "agnostic"),
    (record(MIMIC_ID, "skipped", "onlyNativeDeviceTypes: doesn't run on privateuseone"),
     record(CPU_ID, "passed"), "specific"),
    (record(MIMIC_ID, "skipped", "Only runs on cpu"), record(CPU_ID, "passed"), "specific"),
    (record(MIMIC_ID, "skipped", "Scipy not found"), record(CPU_ID, "skipped"), "agnostic"),
    (None, record(CPU_ID, "passed", device_type="cpu"), "specific"),
    (record(MIMIC_ID, "passed", device_work=False), record(CPU_ID, "passed"), "unrelated"),
    (record(MIMIC_ID, "failed", device_work=False), record(CPU_ID, "passed"), "agnostic"),
    (None, record("t.py::TestPlain::test_a", "passed", device_type=None), "unrelated"),
])
def test_classification(mimic, cpu, expected):
    assert pytorch_tests.classify(mimic, cpu) == expected


def test_known_failures(tmp_path):
    mimic = {
        "t.py::TestFooPRIVATEUSEONE::test_new_privateuseone": record("", "failed", "E: new"),
        "t.py::TestFooPRIVATEUSEONE::test_old_privateuseone": record("", "crash", "crash: SIGSEGV"),
        "t.py::TestFooPRIVATEUSEONE::test_fixed_privateuseone": record("", "passed"),
        "t.py::TestFooPRIVATEUSEONE::test_cpu_too_privateuseone": record("", "failed", "E: cpu"),
    }
    cpu = {
        "t.py::TestFooCPU::test_new_cpu": record("", "passed"),
        "t.py::TestFooCPU::test_old_cpu": record("", "passed"),
        "t.py::TestFooCPU::test_fixed_cpu": record("", "passed"),
        "t.py::TestFooCPU::test_cpu_too_cpu": record("", "failed", "E: cpu"),
    }
    known_file = tmp_path / "known.txt"
    known_file.write_text("# comment\n\n"
                          "t.py::TestFoo::test_old  # crashes in the fallback\n"
                          "t.py::TestFoo::test_fixed  # was wrong once\n"
                          "t.py::TestFoo::test_not_run  # another file's\n")
    known = pytorch_tests.read_known_failures(str(known_file))
    assert known["t.py::TestFoo::test_old"] == "crashes in the fallback"
    rows = pytorch_tests.compare(mimic, cpu)
    new, again, stale = pytorch_tests.check_known(rows, known)
    assert new == ["t.py::TestFoo::test_new"]
    assert again == ["t.py::TestFoo::test_old"]
    assert stale == ["t.py::TestFoo::test_fixed"]
    summary = pytorch_tests.summarise(rows, pytorch_tests.CLASSES)
    assert (summary["agnostic_both_pass"], summary["agnostic_cpu_pass"]) == (1, 3)
    assert summary["mimic_failures"] == 2


def test_known_failures_need_a_reason(tmp_path):
    known_file = tmp_path / "known.txt"
    known_file.write_text("t.py::TestFoo::test_old\n")
    with pytest.raises(ValueError, match=r"known.txt:1: expected 'file::Class::test  # reason'"):
        pytorch_tests.read_known_failures(str(known_file))


def test_causes_group_by_normalised_first_line():
    mimic = {f"t.py::TestFooPRIVATEUSEONE::test_{i}_privateuseone":
             record("", "failed", f"AssertionError: {i} != {i + 1} at 0x7f{i}a") for i in range(3)}
    cpu = {f"t.py::TestFooCPU::test_{i}_cpu": record("", "passed") for i in range(3)}
    causes = pytorch_tests.group_causes(pytorch_tests.compare(mimic, cpu))
    assert [(cause, len(tests)) for cause, tests in causes] == [
        ("AssertionError: N != N at <address>", 3)]


def test_missing_files_name_the_fetch_script(tmp_path):
    with pytest.raises(pytorch_tests.Missing, match="scripts/fetch_pytorch_tests.sh"):
        pytorch_tests.test_dir(str(tmp_path))


def _row(test, outcome, message=""):
    return {"test": test, "mimic_failure": outcome in pytorch_tests.FAILED,
            "mimic": {"outcome": outcome, "message": message}}


def test_update_known_failures_merges_measured_reports(tmp_path):
    known = {"test_x.py::T::test_fixed": "AssertionError: old",
             "test_x.py::T::test_not_run": "ValueError: still listed",
             "test_x.py::T::test_annotated": "RuntimeError: bad 3 (why: a hand-written cause)",
             "test_x.py::T::test_changed": "RuntimeError: old cause"}
    report = {"files": {"test_x": {}}, "tests": [
        _row("test_x.py::T::test_fixed", "passed"),
        _row("test_x.py::T::test_new", "failed", "TypeError: new 1"),
        _row("test_x.py::T::test_annotated", "failed", "RuntimeError: bad 4"),
        _row("test_x.py::T::test_changed", "hang", "hang: ran past the 60 s watchdog"),
        _row("test_x.py::T::test_skipped", "skipped", "Only runs on cuda"),
        dict(_row("test_x.py::T::test_not_run", "hang", "hang: ran past the 60 s watchdog"), mimic_failure=False)]}
    entries, added, removed = update_known_failures.merge(known, [report])
    assert added == ["test_x.py::T::test_new"] and removed == ["test_x.py::T::test_fixed"]
    assert entries == {"test_x.py::T::test_not_run": "ValueError: still listed",
                       "test_x.py::T::test_annotated": "RuntimeError: bad 3 (why: a hand-written cause)",
                       "test_x.py::T::test_changed": "hang: ran past the 60 s watchdog",
                       "test_x.py::T::test_new": "TypeError: new 1"}
    path = tmp_path / "known.txt"
    path.write_text(update_known_failures.render(entries, {"test_torch": "-k float32"}))
    assert pytorch_tests.read_known_failures(str(path)) == entries
    assert update_known_failures.read_scope(str(path)) == {"test_torch": "-k float32"}
