"""torch_mimic.profiler on real PyTorch programs: the trace of a known program (records, host-op
correlations, timestamps equal to the events'), schedules, overflow, export and reload. The
output formats themselves are checked in test_profiler_outputs.py."""
import json

import pytest
import torch

import torch_mimic
from torch_mimic.profiler import load_trace, profile


def kernels_of(trace):
    return [a for a in trace["activities"] if a["kind"] == "kernel"]


def host_op(trace, correlation):
    return next(op for op in trace["host_ops"] if op["id"] == correlation)


def test_known_program(device):
    a = torch.randn(64, 64)
    b = torch.randn(64, 64, device=device)
    start = torch_mimic.Event(enable_timing=True)
    end = torch_mimic.Event(enable_timing=True)
    torch_mimic.synchronize()
    with profile() as prof:
        start.record()
        a_dev = a.to(device)
        c = torch.mm(a_dev, b)
        d = torch.add(c, 1.0)
        end.record()
    trace = prof.trace
    kinds = [act["kind"] for act in trace["activities"]]
    # The copy, the two kernels and the two events, in call order (allocations in between).
    ordered = [k for k in kinds if k in ("memcpy", "kernel", "event_record")]
    assert ordered == ["event_record", "memcpy", "kernel", "kernel", "event_record"]
    copy = next(act for act in trace["activities"] if act["kind"] == "memcpy")
    assert copy["copy_kind"] == "HtoD" and copy["bytes"] == 64 * 64 * 4
    assert copy["pinned"] is False
    gemm, add = kernels_of(trace)
    assert host_op(trace, copy["correlation"])["name"] == "aten::_copy_from"
    assert host_op(trace, gemm["correlation"])["name"] == "aten::mm"
    assert host_op(trace, add["correlation"])["name"] == "aten::add"
    assert 2 * 64 ** 3 <= gemm["counters"]["flops"] <= 2 * 64 ** 3 + 64 * 64  # + alpha scaling
    # Host ops enclose the device work they launched on the simulated host clock.
    op = host_op(trace, gemm["correlation"])
    assert op["start_ns"] <= op["end_ns"] <= gemm["end_ns"]
    # Timestamps agree with the driver's events.
    records = [act for act in trace["activities"] if act["kind"] == "event_record"]
    span_ms = (records[1]["end_ns"] - records[0]["end_ns"]) / 1e6
    assert span_ms == pytest.approx(start.elapsed_time(end), rel=1e-6)
    assert records[1]["end_ns"] == add["end_ns"]
    assert trace["dropped"] == 0
    torch.testing.assert_close(d.cpu(), a @ b.cpu() + 1, rtol=1e-4, atol=1e-4)


def test_backward_work_is_correlated_with_autograd_ops(device):
    w = torch.randn(32, 32, device=device, requires_grad=True)
    x = torch.randn(8, 32, device=device)
    with profile() as prof:
        (x @ w).relu().sum().backward()
    trace = prof.trace
    names = {host_op(trace, k["correlation"])["name"] for k in kernels_of(trace)}
    assert "aten::mm" in names
    assert len({op["thread"] for op in trace["host_ops"]}) >= 1
    assert all(k["correlation"] for k in kernels_of(trace))


def test_schedule_keeps_only_the_active_steps(device):
    x = torch.randn(16, 16, device=device)
    ready = []
    schedule = torch.profiler.schedule(wait=1, warmup=1, active=2)
    with profile(schedule=schedule, on_trace_ready=ready.append) as prof:
        for _ in range(5):
            x = x + 1  # one kernel per step
            prof.step()
    assert len(ready) == 1
    assert len(kernels_of(ready[0].trace)) == 2


def test_full_buffer_is_reported(device):
    x = torch.randn(16, device=device)
    with profile(capacity=4) as prof:
        for _ in range(10):
            x = x + 1
    assert prof.trace["dropped"] > 0
    assert len(prof.trace["activities"]) == 4
    assert "dropped" in prof.table()


def test_export_loads_back_and_the_table_reproduces(device, tmp_path):
    x = torch.randn(128, 128, device=device)
    with profile() as prof:
        (x @ x).sum().item()
    chrome = prof.export_chrome_trace(str(tmp_path / "trace.json"))
    raw = prof.save(str(tmp_path / "raw.json"))
    with open(chrome) as f:
        assert "traceEvents" in json.load(f)
    for path in (chrome, raw):
        loaded = load_trace(path)
        assert loaded == json.loads(json.dumps(prof.trace))
    from torch_mimic.profiler import _table
    assert _table.report(load_trace(chrome)) == prof.table()
    html = prof.export_timeline(str(tmp_path / "trace.html"))
    with open(html) as f:
        assert "<svg" in f.read()


def test_results_before_the_block_ends_are_an_error():
    prof = profile()
    with pytest.raises(RuntimeError, match="no trace yet"):
        prof.table()


def test_device_activity_shows_in_torch_profiler_as_device_work(device, tmp_path):
    x = torch.randn(128, 128, device=device)
    with torch.profiler.profile() as prof:
        (x @ x).sum().item()
    rows = {event.key: event for event in prof.key_averages()}
    gemm = next(rows[name] for name in rows if name.startswith("gemm.f32"))
    # A device event: simulated time in the device columns, none in the CPU columns.
    assert str(gemm.device_type) == "DeviceType.CUDA" and gemm.cpu_time_total == 0
    assert gemm.self_cuda_time_total > 0
    assert str(rows["mimic memcpy DtoH"].device_type) == "DeviceType.CUDA"
    # And a kernel of the op that launched it.
    assert rows["aten::mm"].self_cuda_time_total == gemm.self_cuda_time_total
    assert "CUDA total" in prof.key_averages().table(sort_by="cuda_time_total", row_limit=5)

    path = tmp_path / "torch_trace.json"
    prof.export_chrome_trace(str(path))
    events = json.loads(path.read_text())
    names = {e["args"]["name"] for e in events
             if e.get("ph") == "M" and e["name"] == "process_name"}
    assert names == {"mimic device 0 (%s)" % torch_mimic.get_device_properties(0).name}
    kernels = [e for e in events if e.get("ph") == "X" and e["name"] == gemm.key]
    assert len(kernels) == 1 and kernels[0]["pid"] == 1 and kernels[0]["cat"] == "kernel"
    assert abs(kernels[0]["dur"] - gemm.self_cuda_time_total) < 1e-9
    cpu = [e for e in events if e.get("pid") == "CPU functions" and e.get("ph") == "X"]
    assert gemm.key not in {e["name"] for e in cpu}  # not a CPU event
    starts = {e["id"] for e in events if e.get("ph") == "s"}
    ends = {e["id"] for e in events if e.get("ph") == "f"}
    assert starts and starts == ends  # every launch arrow lands on device work
