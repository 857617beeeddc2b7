"""What ``torch_mimic.compile`` did, for ``torch_mimic.compile_report()``: per compiled callable
its guard keys (one capture each), recompiles, calls run eager past the recompile limit, and per
captured graph the kernels with the FX nodes fused into each, the nodes run as eager aten ops
(by op) and the compile times."""
import threading

_lock = threading.Lock()
_records = []


class GraphRecord:
    """One capture: the forward and backward graphs AOT autograd produced for one guard key."""

    def __init__(self, guard, recompile):
        self.guard = guard
        self.recompile = recompile
        self.graphs = {}  # "forward" / "backward" -> dict
        self.first_call_seconds = None
        self.eager_reason = None  # why this guard key runs eager (.item(), data-dependent shapes)

    def add(self, kind, nodes, kernels, eager, seconds):
        self.graphs[kind] = {
            "nodes": nodes,
            "kernels": [k.describe() for k in kernels],
            "fused_nodes": sum(len(k.nodes) for k in kernels),
            "eager_nodes": eager,
            "lowering_seconds": seconds,
        }

    def describe(self, kind):
        graph = self.graphs[kind]
        lines = [f"==== torch_mimic.compile: {kind} graph, {graph['nodes']} nodes, "
                 f"{len(graph['kernels'])} fused kernels, "
                 f"{sum(graph['eager_nodes'].values())} eager nodes"]
        for kernel in graph["kernels"]:
            shape = f" {list(kernel['shape'])}" if "shape" in kernel else ""
            lines.append(f"{kernel['name']}{shape}: {' '.join(kernel['nodes'])}")
            if "program" in kernel:
                lines.append(f"    {kernel['program']}")
        for op, count in sorted(graph["eager_nodes"].items()):
            lines.append(f"eager {op} x{count}")
        return "\n".join(lines)

    def as_dict(self):
        return {"guard": self.guard, "recompile": self.recompile, "graphs": self.graphs,
                "first_call_seconds": self.first_call_seconds, "eager_reason": self.eager_reason}


class CompileRecord:
    def __init__(self, name, mode, partitioner):
        self.name = name
        self.mode = mode
        self.partitioner = partitioner
        self.captures = []
        self.eager_calls = 0

    def new_graph(self, guard, recompile):
        graph = GraphRecord(guard, recompile)
        with _lock:
            self.captures.append(graph)
        return graph

    def as_dict(self):
        return {"name": self.name, "mode": self.mode, "partitioner": self.partitioner,
                "guards": [c.guard for c in self.captures],
                "recompiles": sum(1 for c in self.captures if c.recompile),
                "eager_calls": self.eager_calls,
                "captures": [c.as_dict() for c in self.captures]}


def record(entry):
    with _lock:
        _records.append(entry)


def compile_report(reset=False):
    """Every ``torch_mimic.compile`` callable made so far, as dicts: name, mode, partitioner,
    guards, recompiles, eager_calls (past the recompile limit) and the captures with their
    graphs' kernels (program and fused FX nodes), eager nodes by op and times. ``reset`` drops
    the records after reading them."""
    with _lock:
        report = [r.as_dict() for r in _records]
        if reset:
            _records.clear()
    return report
