"""Device kernels named by the torch_mimic.compile kernel that launched them.

A compiled graph's kernel (torch_mimic._compile_graph.Kernel) launches its device work through a
generic primitive ("elementwise"), so the driver names the work by that primitive. While the
profiler records, each Kernel call runs inside a host range named by its label
("mimic_pointwise_3 [aten.add+aten.relu]"); the device work it queues carries that range's
correlation id, which is how the trace gives it the label. Outside profiling kernels run
unwrapped.
"""
from .._compile_graph import Kernel


def start():
    Kernel.label_calls(True)


def stop():
    """The labels of the kernels called since start()."""
    return Kernel.label_calls(False)


def rename(activities, host_ops, labels):
    """Names each kernel activity launched inside a labelled range by the label; its original
    (op layer) name moves to "op_kernel"."""
    ranges = {op["id"]: op["name"] for op in host_ops if op["name"] in labels}
    if not ranges:
        return
    for act in activities:
        label = ranges.get(act.get("correlation"))
        if label is not None and act["kind"] == "kernel":
            act["op_kernel"] = act["name"]
            act["name"] = label
