"""The time breakdown of `mimic run`, `mimic demo` and the scale study (mimic_cli.report) on
hand-made traces: exposed communication is the time a collective runs while no kernel or copy
of the same device does."""
from mimic_cli.report import breakdown


def _activity(kind, start, end, device=0):
    return {"kind": kind, "start_ns": start, "end_ns": end, "device": device}


def _trace(*activities, devices=(0,)):
    return {"activities": list(activities), "devices": [{"index": d} for d in devices]}


def test_a_collective_hidden_behind_kernels_is_not_exposed():
    b = breakdown(_trace(_activity("kernel", 0, 100), _activity("range", 10, 90)))
    assert (b["compute_ns"], b["collective_ns"], b["exposed_collective_ns"]) == (100, 80, 0)


def test_only_the_part_outside_kernels_and_copies_is_exposed():
    b = breakdown(_trace(_activity("kernel", 0, 10), _activity("range", 5, 20),
                         _activity("memcpy", 15, 18), _activity("host_task", 30, 40),
                         _activity("range", 35, 45)))
    # 10..15 and 18..20 of the first collective, 30..45 of the other two
    assert b["exposed_collective_ns"] == 5 + 2 + 15
    assert b["devices"][0]["exposed_collective_ns"] == 22


def test_work_of_another_device_hides_nothing():
    b = breakdown(_trace(_activity("kernel", 0, 100, device=1), _activity("range", 0, 50),
                         devices=(0, 1)))
    assert [d["exposed_collective_ns"] for d in b["devices"]] == [50, 0]
    assert b["exposed_collective_ns"] == 50


def test_kernels_that_read_device_data_are_counted():
    reads = {"data_dependent_reads": 3}
    b = breakdown(_trace(dict(_activity("kernel", 0, 10), counters=reads),
                         dict(_activity("kernel", 10, 15), counters={"data_dependent_reads": 0}),
                         _activity("range", 20, 30)))
    assert (b["data_dependent_kernels"], b["data_dependent_ns"]) == (1, 10)
