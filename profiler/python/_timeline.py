"""Self-contained HTML timeline of a mimic trace: inline SVG, CSS and a small script for zoom
and pan (_timeline_script.py), no network.

One lane for host ops, then per device that has records one lane per queue that has records
and one for its queue-less records (alloc / free / synchronize) if it has any, and a lane for
the host's waits. Each activity is one <rect class="act ..."> with a <title> tooltip; training
steps (profile.step(), mimic_cli.step()) are dashed lines. The per-kernel table from _table is
printed under the chart.
"""
import html
import math

from . import _table
from ._files import write_atomically
from ._timeline_script import SCRIPT

WIDTH = 1200          # px of the whole SVG
LABEL_W = 230         # px left of the time axis, for lane names
LANE_H = 24
AXIS_H = 30
COLOURS = {  # by activity kind; anything else is grey
    "host_op": "#7f7f7f", "kernel": "#1f77b4", "memcpy": "#2ca02c", "memset": "#98df8a",
    "range": "#d62728", "host_task": "#ff9896", "host_func": "#9467bd", "collective": "#8c564b",
    "event_record": "#e377c2", "event_wait": "#f7b6d2", "synchronize": "#bcbd22",
    "alloc": "#ff7f0e", "free": "#ffbb78"}
OTHER = "#c7c7c7"

CSS = """body{font-family:sans-serif;margin:16px;color:#222}
svg text{font-size:11px;font-family:sans-serif}
rect.act:hover,rect.op:hover{stroke:#000;stroke-width:1}
pre{font-size:12px;background:#f6f6f6;padding:8px;overflow-x:auto}
.legend span{display:inline-block;margin-right:12px;font-size:12px}
.legend i{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
.zoom button{margin-right:4px}.zoom span{font-size:12px;color:#555}
svg#timeline{cursor:grab;user-select:none}
line.step{stroke:#d62728;stroke-dasharray:4 3}text.step{fill:#d62728}"""

ZOOM_BAR = ('<div class="zoom"><button id="zoom-in">+</button><button id="zoom-out">&minus;'
            '</button><button id="zoom-reset">all</button><span>wheel: zoom, drag: pan, '
            'double-click: all</span></div>')


def _lane_label(key, queue_labels):
    device, queue = key
    if device is None or device < 0:
        return "host (waits)"
    if queue is None:
        return "dev %d: device (alloc/free/sync)" % device
    return "dev %d: %s" % (device, queue_labels.get(queue, "queue %d" % queue))


def _lanes(trace):
    """[(label, key)] with key = ("host",) | (device, queue id or None): host ops, then only
    the devices and queues that have records (device order, queue-less records last), then the
    host's waits."""
    used = {(act["device"], act.get("queue")) for act in trace["activities"]}
    queue_labels = {q["id"]: q["label"] for q in trace["queues"]}

    def order(key):
        device, queue = key
        host = device is None or device < 0
        return (host, device if not host else 0, queue is None, queue or 0)

    return [("host ops", ("host",))] + [(_lane_label(key, queue_labels), key)
                                         for key in sorted(used, key=order)]


def _tick_step(span_us, target=10):
    """A 1/2/5 x 10^k step giving at most about `target` ticks over span_us."""
    raw = span_us / target if span_us > 0 else 1.0
    step = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5):
        if step * mult >= raw:
            return step * mult
    return step * 10


def _tooltip(name, kind, duration_ns, nbytes):
    text = "%s\n%s, %.3f us" % (name, kind, duration_ns / 1000.0)
    if nbytes:
        text += "\n%d bytes" % nbytes
    return html.escape(text)


def _svg(trace, lanes, begin, span):
    plot_w = WIDTH - LABEL_W - 30  # room for the last tick label
    scale = plot_w / span if span else 0.0
    height = AXIS_H + LANE_H * len(lanes) + 4
    row_of = {key: i for i, (_, key) in enumerate(lanes)}
    # viewBox + width 100%: scales to the window instead of adding a scroll bar. The data
    # attributes are the script's (zoom and pan).
    out = ['<svg id="timeline" viewBox="0 0 %d %d" style="width:100%%;max-width:%dpx" '
           'data-left="%d" data-plot-width="%d" data-span="%d" data-view-width="%d" '
           'data-height="%d">' % (WIDTH, height, WIDTH, LABEL_W, plot_w, max(span, 1), WIDTH,
                                  height)]

    def x(ns):
        return LABEL_W + (ns - begin) * scale

    # Lane backgrounds and labels.
    for i, (label, _) in enumerate(lanes):
        y = AXIS_H + i * LANE_H
        out.append('<rect class="lane" x="0" y="%d" width="%d" height="%d" fill="%s"/>'
                   % (y, WIDTH, LANE_H, "#f4f4f4" if i % 2 else "#ffffff"))
        out.append('<text x="4" y="%d">%s</text>' % (y + 16, html.escape(label)))
    # Everything at a time is clipped to the plot, so that a zoomed view stays off the labels.
    out.append('<clipPath id="plot"><rect x="%d" y="0" width="%d" height="%d"/></clipPath>'
               '<g clip-path="url(#plot)"><g id="ticks">' % (LABEL_W, WIDTH - LABEL_W, height))
    # Time axis: ticks in us from the first timestamp.
    step = _tick_step(span / 1000.0)
    count = 0
    while count * step * 1000.0 <= span + 1e-6:
        tick = count * step  # multiply, not accumulate, so labels stay round
        tx = x(begin + tick * 1000.0)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ccc"/>'
                   % (tx, AXIS_H - 6, tx, height))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%g us</text>'
                   % (tx, AXIS_H - 10, round(tick, 9)))
        count += 1
    out.append("</g>")

    def rect(cls, key, start, end, colour, tip):
        # Zero-length records (alloc, free) still get a visible 1 px mark.
        y = AXIS_H + row_of[key] * LANE_H + 3
        out.append('<rect class="%s" x="%.2f" y="%d" width="%.2f" height="%d" fill="%s" '
                   'data-s="%d" data-e="%d"><title>%s</title></rect>'
                   % (cls, x(start), y, max((end - start) * scale, 1.0), LANE_H - 6, colour,
                      start - begin, end - begin, tip))

    for op in trace["host_ops"]:
        rect("op", ("host",), op["start_ns"], op["end_ns"], COLOURS["host_op"],
             _tooltip(op["name"], "host op", op["end_ns"] - op["start_ns"], 0))
    for act in trace["activities"]:
        rect("act " + html.escape(act["kind"]), (act["device"], act.get("queue")),
             act["start_ns"], act["end_ns"], COLOURS.get(act["kind"], OTHER),
             _tooltip(act["name"], act["kind"], act["end_ns"] - act["start_ns"],
                      act.get("bytes")))
    for number, ns in enumerate(trace.get("steps", []), 1):
        if begin <= ns <= begin + span:
            out.append('<line class="step" x1="%.2f" y1="%d" x2="%.2f" y2="%d" data-s="%d"/>'
                       '<text class="step" x="%.2f" y="%d" data-s="%d">step %d</text>'
                       % (x(ns), AXIS_H, x(ns), height, ns - begin, x(ns) + 3, AXIS_H + 10,
                          ns - begin, number))
    out.append("</g></svg>")
    return "\n".join(out)


def _legend(trace):
    kinds = ["host_op"] + sorted({a["kind"] for a in trace["activities"]})
    return '<div class="legend">%s</div>' % "".join(
        '<span><i style="background:%s"></i>%s</span>'
        % (COLOURS.get(kind, OTHER), html.escape(kind.replace("_", " "))) for kind in kinds)


def render(trace, title="mimic trace"):
    """The HTML page as a string."""
    head = ('<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>%s</title>'
            '<style>%s</style></head><body><h1>%s</h1>\n'
            % (html.escape(title), CSS, html.escape(title)))
    report = '<pre>%s</pre>' % html.escape(_table.report(trace))
    if not trace["activities"]:
        return head + "<p>The trace is empty: no device activities were recorded.</p>\n" \
            + report + "</body></html>\n"
    t = _table.totals(trace)
    preset = html.escape(str(trace.get("preset", "?")))
    info = ("<p>preset %s, %d devices, %d activities, span %.3f us; "
            "the axis starts at the first record, t = %.3f us</p>") % (
        preset, len(trace["devices"]), len(trace["activities"]), t["span_ns"] / 1000.0,
        t["begin_ns"] / 1000.0)
    lanes = _lanes(trace)
    return (head + info + _legend(trace) + "\n" + ZOOM_BAR + "\n"
            + _svg(trace, lanes, t["begin_ns"], t["span_ns"]) + "\n<h2>Kernels</h2>\n" + report
            + "<script>" + SCRIPT + "</script></body></html>\n")


def save_timeline(trace, path, title="mimic trace"):
    write_atomically(path, lambda out: out.write(render(trace, title)))
