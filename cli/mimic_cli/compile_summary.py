"""What `mimic run --compile` and `mimic demo --compile` say about torch_mimic.compile: per
compiled callable its captures, recompiles and the forward and backward graphs' fused kernels,
and how much of the profiled kernel time the fused kernels took.

Plain Python on plain data, as report.py: `summarize` runs in the child on
torch_mimic.compile_report() and the profiler's trace; `format_compile` runs in the parent.
"""
from .common import format_ns

MODES = ("default", "no-fusion", "debug", "eager")
ENV = "MIMIC_RUN_COMPILE"  # the mode, from the parent to the runner (mimic_cli.runner)


def _graph_totals(captures, kind):
    graphs = [c["graphs"][kind] for c in captures if kind in c["graphs"]]
    return {"graphs": len(graphs), "nodes": sum(g["nodes"] for g in graphs),
            "kernels": sum(len(g["kernels"]) for g in graphs),
            "fused_nodes": sum(g["fused_nodes"] for g in graphs),
            "eager_nodes": sum(sum(g["eager_nodes"].values()) for g in graphs)}


def fused_time(trace):
    """Launches and simulated time of the device kernels a compiled kernel launched (the
    profiler names them by their ops and keeps the op layer's name as op_kernel)."""
    kernels = [a for a in trace["activities"] if a["kind"] == "kernel"] if trace else []
    fused = [a for a in kernels if "op_kernel" in a]
    return {"launches": len(fused), "names": len({a["name"] for a in fused}),
            "fused_ns": sum(a["end_ns"] - a["start_ns"] for a in fused),
            "kernel_ns": sum(a["end_ns"] - a["start_ns"] for a in kernels)}


def summarize(mode, requested, reports, trace=None):
    """mode: the one --compile chose; requested: names of the callables the script gave
    torch_mimic.compile; reports: torch_mimic.compile_report(); trace: the profiler's, if any."""
    callables = []
    for report in reports:
        captures = report["captures"]
        callables.append({
            "name": report["name"], "mode": report["mode"], "guards": len(report["guards"]),
            "recompiles": report["recompiles"], "eager_calls": report["eager_calls"],
            "eager_reasons": sorted({c["eager_reason"] for c in captures if c["eager_reason"]}),
            "forward": _graph_totals(captures, "forward"),
            "backward": _graph_totals(captures, "backward")})
    return {"mode": mode, "requested": list(requested), "callables": callables,
            "fused": fused_time(trace) if trace else None}


def _plural(count, noun, plural=None):
    return f"{count} {noun if count == 1 else plural or noun + 's'}"


def _graph_line(kind, totals):
    if not totals["graphs"]:
        return None
    return (f"    {kind}: {_plural(totals['nodes'], 'node')}, {totals['fused_nodes']} fused into "
            f"{_plural(totals['kernels'], 'kernel')}, {totals['eager_nodes']} run their eager op")


def format_compile(summary, report_path=None):
    mode, requested = summary["mode"], summary["requested"]
    lines = [f"torch_mimic.compile (--compile, mode {mode}):"]
    if not requested:
        lines.append("  the script never called torch_mimic.compile, so nothing was compiled "
                     "(--compile sets the mode of the script's own calls)")
        return "\n".join(lines)
    if mode == "eager":
        lines.append(f"  {_plural(len(requested), 'callable')} ran eager as asked "
                     f"({', '.join(requested)}): compare with another --compile-mode")
        return "\n".join(lines)
    for entry in summary["callables"]:
        if not entry["guards"]:
            lines.append(f"  {entry['name']}: never called")
            continue
        lines.append(f"  {entry['name']}: {_plural(entry['guards'], 'capture')}, "
                     f"{_plural(entry['recompiles'], 'recompile')}"
                     + (f", {entry['eager_calls']} calls eager past the recompile limit"
                        if entry["eager_calls"] else ""))
        for kind in ("forward", "backward"):
            line = _graph_line(kind, entry[kind])
            if line:
                lines.append(line)
        for reason in entry["eager_reasons"]:
            lines.append(f"    ran eager: {reason}")
    fused = summary["fused"]
    if fused is not None:
        share = 100.0 * fused["fused_ns"] / fused["kernel_ns"] if fused["kernel_ns"] else 0.0
        lines.append(f"  profiled: {_plural(fused['launches'], 'launch', 'launches')} of "
                     f"{_plural(fused['names'], 'fused kernel')}, {format_ns(fused['fused_ns'])}"
                     f" = {share:.1f} % of kernel time")
    if report_path:
        lines.append(f"  Compile report: {report_path}  (torch_mimic.compile_report(), JSON)")
    return "\n".join(lines)
