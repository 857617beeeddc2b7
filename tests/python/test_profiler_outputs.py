"""The profiler's output side (Chrome JSON, table, HTML timeline, CLI) on a hand-built trace.

No device work: the trace below is written by hand so that every expected number can be
worked out on paper. Device 0 has peak 1e13 FLOP/s and 1e12 B/s, so its ridge point is
10 FLOP/byte.
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

import pytest

from torch_mimic.profiler import _chrome, _key_averages, _table, _timeline

# The directory holding torch_mimic, for the CLI subprocesses.
PYTHONPATH = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(_chrome.__file__))))


def _act(kind, device, queue, start, end, correlation=0, name=None, nbytes=0, **extra):
    record = {"kind": kind, "device": device, "queue": queue, "start_ns": start, "end_ns": end,
              "correlation": correlation, "name": name or kind, "bytes": nbytes,
              "copy_kind": None, "pinned": None, "grid": None, "counters": None}
    record.update(extra)
    return record


def _kernel(device, queue, start, end, correlation, name, flops, read, written):
    return _act("kernel", device, queue, start, end, correlation, name, grid=[4, 1, 1],
                counters={"workgroups": 4, "flops": flops, "hbm_bytes_read": read,
                          "hbm_bytes_written": written, "instructions": [1, 2, 0, 3],
                          "busy": [0.1, 0.5, 0.0, 0.2]})


def make_trace():
    dev = {"peak_flops": 1.0e13, "peak_f16_flops": 4.0e13, "hbm_bytes_per_s": 1.0e12}
    return {
        "format": "mimic-trace", "version": 1, "preset": "default",
        "devices": [dict(dev, index=0, name="mimic-default"),
                    dict(dev, index=1, name="mimic-default")],
        "queues": [{"id": 7, "device": 0, "label": "stream 0 (default)"},
                   {"id": 9, "device": 1, "label": "stream 0 (default)"}],
        "host_ops": [
            {"id": 10, "name": "aten::copy_", "start_ns": 0, "end_ns": 900, "thread": 0},
            {"id": 11, "name": "aten::mm", "start_ns": 950, "end_ns": 1000, "thread": 0},
            {"id": 12, "name": "aten::add", "start_ns": 1000, "end_ns": 1050, "thread": 0},
            {"id": 13, "name": "c10d::allreduce_", "start_ns": 1100, "end_ns": 1200,
             "thread": 0},
            {"id": 14, "name": "aten::add", "start_ns": 1000, "end_ns": 1060, "thread": 1}],
        "activities": [
            _act("alloc", 0, None, 50, 50, nbytes=1 << 20),
            _act("alloc", 0, None, 60, 60, nbytes=4096),
            _act("alloc", 1, None, 70, 70, nbytes=2048),
            _act("memcpy", 0, 7, 100, 1000, 10, nbytes=4096, copy_kind="HtoD", pinned=True),
            # 1 GFLOP in 1 ms over 5e7 bytes: 1000 GFLOP/s, intensity 20 -> compute-bound.
            _kernel(0, 7, 1000, 1_001_000, 11, "gemm_f32", 1_000_000_000, 40_000_000,
                    10_000_000),
            # 4096 FLOP over 49152 bytes in 1 us: intensity 1/12 -> memory-bound.
            _kernel(0, 7, 1_001_000, 1_002_000, 12, "add_f32", 4096, 32768, 16384),
            _kernel(1, 9, 1_001_000, 1_002_000, 14, "add_f32", 4096, 32768, 16384),
            _act("range", 0, 7, 1_002_000, 1_010_000, 13, "AllReduce sum f32 x2"),
            _act("range", 1, 9, 1_002_000, 1_010_000, 13, "AllReduce sum f32 x2"),
            _act("free", 0, None, 1_020_000, 1_020_000, nbytes=1 << 20)],
        "dropped": 3,
    }


@pytest.fixture
def trace():
    return make_trace()


# ---- Chrome JSON -------------------------------------------------------------------------------

def _events(chrome, ph):
    return [e for e in chrome["traceEvents"] if e["ph"] == ph]


def test_chrome_is_json_with_named_tracks(trace):
    chrome = json.loads(json.dumps(_chrome.to_chrome(trace)))
    assert chrome["displayTimeUnit"] == "ns"
    names = {(e["pid"], e["tid"], e["name"]): e["args"]["name"] for e in _events(chrome, "M")
             if "name" in e["args"]}
    assert names[(0, 0, "process_name")] == "host"
    assert names[(1, 0, "process_name")] == "mimic device 0 (mimic-default)"
    assert names[(2, 0, "process_name")] == "mimic device 1 (mimic-default)"
    assert names[(1, _chrome.queue_tid(7), "thread_name")] == "stream 0 (default)"
    assert names[(2, _chrome.queue_tid(9), "thread_name")] == "stream 0 (default)"


def test_chrome_complete_events_per_track(trace):
    chrome = _chrome.to_chrome(trace)
    per_track = {}
    for event in _events(chrome, "X"):
        key = (event["pid"], event["tid"])
        per_track[key] = per_track.get(key, 0) + 1
    q7, q9 = _chrome.queue_tid(7), _chrome.queue_tid(9)
    assert per_track == {(0, 0): 4, (0, 1): 1,      # host threads
                         (1, q7): 4, (1, 0): 3,     # memcpy, 2 kernels, range; 2 alloc + free
                         (2, q9): 2, (2, 0): 1}
    gemm = next(e for e in _events(chrome, "X") if e["name"] == "gemm_f32")
    assert gemm["ts"] == 1.0 and gemm["dur"] == 1000.0  # microseconds
    assert gemm["args"]["correlation"] == 11 and gemm["args"]["grid"] == [4, 1, 1]
    assert gemm["args"]["counters"]["flops"] == 1_000_000_000


def test_chrome_flows_match_correlations(trace):
    chrome = _chrome.to_chrome(trace)
    starts = {e["id"]: e for e in _events(chrome, "s")}
    finishes = {e["id"]: e for e in _events(chrome, "f")}
    assert len(starts) == len(_events(chrome, "s")) == 6  # ids unique; 13 launches two ranges
    assert starts.keys() == finishes.keys()
    host_ops = {op["id"]: op for op in trace["host_ops"]}
    pairs = set()
    for flow_id, start in starts.items():
        finish = finishes[flow_id]
        assert finish["bp"] == "e"
        act = next(a for a in trace["activities"] if a["correlation"]
                   and _chrome.device_pid(a["device"]) == finish["pid"]
                   and _chrome.queue_tid(a["queue"]) == finish["tid"]
                   and a["start_ns"] / 1000.0 == finish["ts"])
        op = host_ops[act["correlation"]]
        assert (start["pid"], start["tid"], start["ts"]) == (0, op["thread"], op["start_ns"] / 1e3)
        pairs.add((op["id"], act["name"], act["device"]))
    assert pairs == {(10, "memcpy", 0), (11, "gemm_f32", 0), (12, "add_f32", 0),
                     (14, "add_f32", 1), (13, "AllReduce sum f32 x2", 0),
                     (13, "AllReduce sum f32 x2", 1)}


def test_chrome_counters(trace):
    chrome = _chrome.to_chrome(trace)
    memory = [(e["pid"], e["ts"], e["args"]["bytes"]) for e in _events(chrome, "C")
              if e["name"] == "memory allocated"]
    assert memory == [(1, 0.05, 1 << 20), (1, 0.06, (1 << 20) + 4096), (1, 1020.0, 4096),
                      (2, 0.07, 2048)]
    bandwidth = {(e["pid"], e["ts"]): e["args"]["GB/s"] for e in _events(chrome, "C")
                 if e["name"] == "HBM bandwidth"}
    assert bandwidth[(1, 0.1)] == pytest.approx(4096 / 900)   # the pinned HtoD copy
    assert bandwidth[(1, 1.0)] == pytest.approx(50.0)          # gemm: 5e7 B over 1e6 ns
    assert bandwidth[(1, 1001.0)] == pytest.approx(49.152)     # add: 49152 B over 1000 ns
    assert bandwidth[(1, 1002.0)] == 0.0                       # the range moves no HBM bytes
    assert sorted(ts for pid, ts in bandwidth if pid == 2) == [1001.0, 1002.0]


def _overlapping_copies(count, seed):
    """`count` copies on device 0 at pseudo-random, overlapping times, with shared ends."""
    import random

    rng = random.Random(seed)
    trace = make_trace()
    trace["activities"] = []
    for i in range(count):
        start = rng.randrange(0, 1000) * 10
        trace["activities"].append(
            _act("memcpy", 0, 7, start, start + rng.randrange(1, 50) * 10, i, nbytes=1 + i * 7,
                 copy_kind="DtoD"))
    return trace


def test_bandwidth_samples_are_the_open_intervals_sums():
    """The sweep gives, at each boundary, exactly the sum (in record order) of the intervals
    open there, as summing every interval at every boundary would."""
    trace = _overlapping_copies(400, seed=5)
    intervals = [(a["start_ns"], a["end_ns"], a["bytes"] / (a["end_ns"] - a["start_ns"]))
                 for a in trace["activities"]]
    boundaries = sorted({t for start, end, _ in intervals for t in (start, end)})
    brute = [(t, sum(rate for start, end, rate in intervals if start <= t < end))
             for t in boundaries]
    assert _chrome.bandwidth_samples(trace, 0) == brute


def test_an_interrupted_save_keeps_the_earlier_file(trace, tmp_path):
    path = tmp_path / "trace.json"
    _chrome.save_chrome(trace, path)
    good = path.read_text()

    class Interrupt(Exception):
        pass

    def interrupted(out):
        out.write("{half a file")
        raise Interrupt()

    from torch_mimic.profiler import _files

    with pytest.raises(Interrupt):
        _files.write_atomically(path, interrupted)
    assert path.read_text() == good
    assert os.listdir(tmp_path) == ["trace.json"]  # no temporary file left behind


def test_save_load_round_trip(trace, tmp_path):
    path = tmp_path / "trace.json"
    _chrome.save_chrome(trace, path)
    loaded = _chrome.load_trace(path)
    assert loaded == trace
    assert _table.report(loaded) == _table.report(trace)
    raw = tmp_path / "raw.json"
    raw.write_text(json.dumps(trace))
    assert _chrome.load_trace(raw) == trace


@pytest.mark.parametrize("content, message", [
    ("{not json", "not valid JSON"),
    ("[1, 2]", "not a mimic trace"),
    ('{"format": "mimic-trace", "version": 1}', "missing keys"),
    ('{"format": "other", "version": 1}', "format is 'other'"),
    ('{"traceEvents": []}', "without an embedded mimic trace"),
])
def test_load_trace_rejects(tmp_path, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(ValueError, match=message) as info:
        _chrome.load_trace(path)
    assert str(path) in str(info.value)


# ---- table -------------------------------------------------------------------------------------

def test_table_numbers(trace):
    rows = {row["name"]: row for row in _table.summary(trace)}
    gemm, add = rows["gemm_f32"], rows["add_f32"]
    assert gemm["calls"] == 1 and gemm["total_ns"] == 1_000_000
    assert gemm["gflops_per_s"] == pytest.approx(1000.0)
    assert gemm["gb_per_s"] == pytest.approx(50.0)
    assert gemm["intensity"] == pytest.approx(20.0)
    assert gemm["bound"] == "compute-bound"
    assert gemm["pct_roofline"] == pytest.approx(10.0)  # 1e12 of min(1e13, 20 * 1e12)
    assert add["calls"] == 2 and add["avg_ns"] == 1000
    assert add["intensity"] == pytest.approx(1 / 12)
    assert add["bound"] == "memory-bound"
    assert add["pct_roofline"] == pytest.approx(100 * 4.096e9 / (1e12 / 12))


def test_table_ridge_point_boundary(trace):
    # Exactly at the ridge (10 FLOP/byte) counts as compute-bound, just under as memory-bound.
    trace["activities"].append(_kernel(0, 7, 0, 100, 0, "at_ridge", 1000, 100, 0))
    trace["activities"].append(_kernel(0, 7, 0, 100, 0, "under_ridge", 999, 100, 0))
    rows = {row["name"]: row for row in _table.summary(trace)}
    assert rows["at_ridge"]["bound"] == "compute-bound"
    assert rows["under_ridge"]["bound"] == "memory-bound"


def test_table_text(trace):
    text = _table.report(trace)
    lines = text.splitlines()
    assert lines[1].split()[:3] == ["Name", "Calls", "Total"]
    assert lines[3].startswith("gemm_f32") and lines[4].startswith("add_f32")
    assert "1,000.000" in lines[3] and "compute-bound" in lines[3]
    assert "Total simulated span: 1020.000 us" in text
    assert "Kernels: 1002.000 us" in text
    assert "Copies (memcpy/memset): 0.900 us" in text
    assert "Collectives (collective/range/host_task): 16.000 us" in text
    assert "Idle, device 0 stream 0 (default): 10.100 us" in text  # busy 0.1 .. 1010 us
    assert "WARNING: 3 records were dropped" in text
    by_calls = _table.format_table(_table.summary(trace), "calls", top=1).splitlines()
    assert len(by_calls) == 5 and by_calls[3].startswith("add_f32")
    with pytest.raises(ValueError):
        _table.format_table([], "bogus")


def test_table_ties_are_by_name(trace):
    for name in ("zeta", "alpha"):
        trace["activities"].append(_kernel(1, 9, 0, 5, 0, name, 1, 1, 1))
    lines = _table.format_table(_table.summary(trace), "total_ns").splitlines()
    assert [line.split()[0] for line in lines[-3:-1]] == ["alpha", "zeta"]


# ---- key_averages ------------------------------------------------------------------------------

def _nested(trace):
    """make_trace with aten::mm and the first aten::add called by an aten::linear around them."""
    trace["host_ops"].append({"id": 15, "name": "aten::linear", "start_ns": 940, "end_ns": 1060,
                              "thread": 0, "parent": 0})
    for op in trace["host_ops"]:
        op.setdefault("parent", 15 if op["id"] in (11, 12) else 0)
    return trace


def test_key_averages_rows(trace):
    rows = {(r.key, r.is_device_work): r for r in _key_averages.key_averages(_nested(trace))}
    linear = rows[("aten::linear", False)]
    # 120 ns of host time, 50 of them in mm and 50 in add; no device work of its own, but that
    # of the ops it called: the GEMM's 1e6 ns and the add kernel's 1000.
    assert (linear.count, linear.cpu_time_total, linear.self_cpu_time_total) == (1, 0.12, 0.02)
    assert (linear.self_device_time_total, linear.device_time_total) == (0, 1001.0)
    add = rows[("aten::add", False)]  # two calls, one per thread, 1 us of device work each
    assert (add.count, add.self_device_time_total, add.device_time) == (2, 2.0, 1.0)
    assert rows[("c10d::allreduce_", False)].self_device_time_total == 16.0  # both ranges
    assert rows[("add_f32", True)].count == 2 and rows[("add_f32", True)].cpu_time_total == 0
    assert rows[("mimic memcpy HtoD", True)].device_time_total == 0.9
    assert ("mimic alloc", True) not in rows  # allocations are not device work


def test_key_averages_table_sorts_and_limits(trace):
    table = _key_averages.key_averages(_nested(trace)).table(sort_by="device_time_total",
                                                              row_limit=3)
    lines = table.splitlines()
    assert lines[1].split()[:4] == ["Name", "Self", "CPU", "%"]
    assert "Device total" in lines[1] and "# of Calls" in lines[1]
    # Largest device total first; gemm_f32 and aten::mm tie at 1 ms (first call first).
    assert [line.split()[0] for line in lines[3:6]] == ["aten::linear", "aten::mm", "gemm_f32"]
    assert lines[3].split()[8] == "1.001ms" and lines[5].split()[1] == "0.00%"
    assert lines[-2] == "Self CPU time total: 1.180us (the host's simulated clock)"
    assert lines[-1] == "Self Device time total: 1.019ms (simulated, 2 devices)"
    with pytest.raises(ValueError, match="sort_by must be one of"):
        _key_averages.key_averages(trace).table(sort_by="flops")


# ---- HTML timeline -----------------------------------------------------------------------------

def test_timeline_is_self_contained(trace, tmp_path):
    trace["activities"][6]["name"] = "<b>&"
    path = tmp_path / "timeline.html"
    _timeline.save_timeline(trace, path)
    page = path.read_text()
    assert "<script src" not in page and "http://" not in page and "https://" not in page
    assert "<b>&" not in page and "&lt;b&gt;&amp;" in page
    assert page.count('<rect class="act ') == len(trace["activities"])
    assert page.count('<rect class="op"') == len(trace["host_ops"])
    assert "gemm_f32" in page and "WARNING: 3 records were dropped" in page


def test_timeline_empty_trace(trace, tmp_path):
    trace["activities"], trace["host_ops"] = [], []
    path = tmp_path / "empty.html"
    _timeline.save_timeline(trace, path)
    page = path.read_text()
    assert "The trace is empty" in page and "<svg" not in page


def _lane_labels(page):
    return re.findall(r'<text x="4" y="\d+">([^<]*)</text>', page)


def test_timeline_shows_only_devices_and_queues_with_records(trace, tmp_path):
    trace["devices"].append(dict(trace["devices"][1], index=2))  # no records at all
    trace["queues"].append({"id": 11, "device": 0, "label": "stream 1"})  # an unused queue
    trace["activities"].append(_act("synchronize", -1, None, 1_015_000, 1_016_000))
    path = tmp_path / "timeline.html"
    _timeline.save_timeline(trace, path)
    assert _lane_labels(path.read_text()) == [
        "host ops", "dev 0: stream 0 (default)", "dev 0: device (alloc/free/sync)",
        "dev 1: stream 0 (default)", "dev 1: device (alloc/free/sync)", "host (waits)"]


def test_timeline_marks_steps(trace, tmp_path):
    trace["steps"] = [500_000, 1_005_000, 5_000_000]  # the last is past the trace's end
    path = tmp_path / "timeline.html"
    _timeline.save_timeline(trace, path)
    page = path.read_text()
    assert page.count('<line class="step"') == 2
    assert ">step 1</text>" in page and ">step 2</text>" in page and "step 3" not in page


def _rect_widths(page, name):
    """The width attributes of the activity rects whose tooltip starts with `name`."""
    return [float(w) for w in re.findall(
        r'<rect class="act [^"]*"[^>]*width="([\d.]+)"[^>]*><title>%s\n' % name, page)]


def _chromium_dom(html_path, tmp_path):
    result = subprocess.run(
        ["chromium", "--headless", "--disable-gpu", "--no-sandbox",
         "--user-data-dir=%s" % (tmp_path / "profile"), "--enable-logging=stderr", "--v=0",
         "--dump-dom", html_path.resolve().as_uri()],
        capture_output=True, text=True, timeout=120)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result, console


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (apt-get install chromium)")
def test_timeline_zooms_and_resets_in_chromium(trace, tmp_path):
    page = tmp_path / "timeline.html"
    _timeline.save_timeline(trace, page)
    static = _rect_widths(page.read_text(), "gemm_f32")
    # A script run after the page's presses its buttons (twice in: each shows 0.8 of the span,
    # so 1.25x wider; then all again) and turns the wheel one notch in over the plot, writing
    # the GEMM's width after each into the page, which one headless run then dumps.
    steps = """
    var svg = document.getElementById("timeline"), out = [];
    function width() {
      var rects = svg.querySelectorAll("rect.act");
      for (var i = 0; i < rects.length; i++)
        if (rects[i].textContent.indexOf("gemm_f32") === 0) return rects[i].getAttribute("width");
    }
    document.getElementById("zoom-in").click(); document.getElementById("zoom-in").click();
    out.push(width());
    document.getElementById("zoom-reset").click(); out.push(width());
    var box = svg.getBoundingClientRect();
    svg.dispatchEvent(new WheelEvent("wheel", {deltaY: -1, clientX: box.left + box.width / 2,
                                               clientY: box.top + 40, cancelable: true}));
    out.push(width());
    var pre = document.createElement("pre"); pre.id = "widths"; pre.textContent = out.join(" ");
    document.body.appendChild(pre);"""
    driven = tmp_path / "driven.html"
    driven.write_text(page.read_text().replace("</body>", "<script>%s</script></body>" % steps))
    result, console = _chromium_dom(driven, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert console == []
    widths = [float(w) for w in re.search(r'<pre id="widths">([^<]*)</pre>',
                                          result.stdout).group(1).split()]
    assert len(widths) == 3, widths
    for width, factor in zip(widths, (1.25 ** 2, 1.0, 1.25)):
        # Both widths are written with 2 decimals: 0.005 px of rounding each, the static one
        # scaled by the factor.
        assert abs(width - static[0] * factor) <= 0.005 * (1 + factor), (widths, static)


def _png_pixels(path):
    """Decoded rows of an 8-bit RGB/RGBA, non-interlaced PNG (what Chromium writes)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, header = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0
    bpp = 3 if colour == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):  # undo the PNG filter of this row
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 255
            elif kind == 2:
                line[i] = (line[i] + up) & 255
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 255
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 255
        rows.append(bytes(line))
        prev = line
    return rows, bpp


def _chromium_screenshot(html_path, tmp_path):
    png = tmp_path / "out.png"
    result = subprocess.run(
        ["chromium", "--headless", "--disable-gpu", "--no-sandbox",
         "--user-data-dir=%s" % (tmp_path / "profile"), "--screenshot=%s" % png,
         "--window-size=1200,800", "--enable-logging=stderr", "--v=0",
         html_path.resolve().as_uri()],
        capture_output=True, text=True, timeout=120)
    console = [line for line in result.stderr.splitlines() if ":CONSOLE" in line]
    return result, png, console


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (apt-get install chromium)")
def test_timeline_renders_in_chromium(trace, tmp_path):
    page = tmp_path / "timeline.html"
    _timeline.save_timeline(trace, page)
    result, png, console = _chromium_screenshot(page, tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert console == []
    rows, bpp = _png_pixels(png)
    colours = {row[i:i + bpp] for row in rows[::8] for i in range(0, len(row), bpp * 8)}
    assert len(colours) > 3  # not blank: background, lanes, and coloured activity rects
    assert bytes.fromhex("1f77b4") in {c[:3] for c in colours}  # a kernel rect is visible


@pytest.mark.skipif(shutil.which("chromium") is None,
                    reason="chromium is not installed (apt-get install chromium)")
def test_chromium_console_capture_works(tmp_path):
    # Guards the check above: a page with a script error must show up in the console lines.
    page = tmp_path / "broken.html"
    page.write_text("<html><body><script>undefined_function();</script></body></html>")
    _, _, console = _chromium_screenshot(page, tmp_path)
    assert any("undefined_function" in line for line in console)


# ---- command line ------------------------------------------------------------------------------

def _cli(*args):
    env = dict(os.environ, PYTHONPATH=PYTHONPATH)
    return subprocess.run([sys.executable, "-m", "torch_mimic.profiler", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=300)


def test_cli_prints_table_and_writes_timeline(trace, tmp_path):
    path = tmp_path / "run.json"
    _chrome.save_chrome(trace, path)
    result = _cli(path, "--top", "1", "--sort", "flops")
    assert result.returncode == 0, result.stderr
    assert "gemm_f32" in result.stdout and "add_f32" not in result.stdout.split("\n\n")[0]
    html_path = tmp_path / "run.html"
    assert result.stdout.strip().endswith("timeline: %s" % html_path)
    assert html_path.read_text().count('<rect class="act ') == len(trace["activities"])


@pytest.mark.parametrize("case", ["missing", "bad_json", "bad_sort"])
def test_cli_errors_are_one_line(tmp_path, case):
    good = tmp_path / "good.json"
    good.write_text(json.dumps(make_trace()))
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    args = {"missing": [tmp_path / "nope.json"], "bad_json": [bad],
            "bad_sort": [good, "--sort", "nonsense"]}[case]
    result = _cli(*args)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert result.stdout == ""
