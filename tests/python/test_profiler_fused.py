"""torch_mimic.profiler names the device work of torch_mimic.compile's fused kernels by the ops
they contain (profiler/python/_fused_names.py, the Kernel hook of _compile_graph.py), and the
hook costs nothing when no profiler records."""
import json

import torch

import torch_mimic
from torch_mimic._compile_graph import Kernel
from torch_mimic._lower_pointwise import FusedKernel
from torch_mimic.profiler import load_trace, profile

LABEL = "mimic_pointwise_0 [aten.relu+aten.mul+aten.add+aten.sigmoid]"


def pointwise(x):
    return (x.relu() * 2 + 1).sigmoid()


def kernels_of(trace):
    return [a for a in trace["activities"] if a["kind"] == "kernel"]


def compiled_pointwise(device):
    compiled = torch_mimic.compile(pointwise)
    x = torch.randn(8, 16, device=device)
    compiled(x)  # the capture, outside the profiled block
    return compiled, x


def test_fused_kernel_is_named_by_its_ops_and_keeps_the_op_layer_name(device):
    compiled, x = compiled_pointwise(device)
    with profile() as prof:
        out = compiled(x)
        eager = x + 1
    assert torch.equal(out.cpu(), pointwise(x).cpu())
    kernels = kernels_of(prof.trace)
    fused = [a for a in kernels if a["name"] == LABEL]
    assert len(fused) == 1
    assert fused[0]["op_kernel"] == "elementwise"
    # The host range that launched it carries the same name, so the flow arrow joins them.
    ops = {op["id"]: op["name"] for op in prof.trace["host_ops"]}
    assert ops[fused[0]["correlation"]] == LABEL
    # Eager work keeps the op layer's names and no op_kernel.
    others = [a for a in kernels if a is not fused[0]]
    assert others and all("op_kernel" not in a and not a["name"].startswith("mimic_")
                          for a in others)
    assert ops[others[0]["correlation"]] == "aten::add"
    assert eager.shape == x.shape
    assert LABEL in prof.table()


def test_fused_names_survive_export_and_reload(device, tmp_path):
    compiled, x = compiled_pointwise(device)
    with profile() as prof:
        compiled(x)
    path = prof.export_chrome_trace(str(tmp_path / "fused.json"))
    assert load_trace(path)["activities"] == prof.trace["activities"]
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    kernel = next(e for e in events if e.get("cat") == "kernel" and e["name"] == LABEL)
    assert kernel["args"]["op_kernel"] == "elementwise"


def test_backward_kernels_are_named_too(device):
    model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                                torch.nn.Linear(32, 4)).to(device)
    compiled = torch_mimic.compile(model)
    x = torch.randn(8, 16, device=device)
    compiled(x).sum().backward()
    with profile() as prof:
        compiled(x).sum().backward()
    names = {a["name"] for a in kernels_of(prof.trace)}
    # Which kernel takes an op depends on the passes (the GEMM pass takes the GELU's backward
    # as the epilogue of the mm computing its incoming gradient): look for the ops in labels.
    labels = [n[n.index("[") + 1:-1].split("+") for n in names if n.startswith("mimic_")]
    assert any("aten.gelu" in ops for ops in labels), names
    assert any("aten.gelu_backward" in ops for ops in labels), names


def test_kernel_calls_are_unwrapped_outside_profiling(device):
    """No host cost when no profiler records: the class's own __call__ runs, not a wrapper."""
    plain = FusedKernel.__dict__["__call__"]
    compiled, x = compiled_pointwise(device)
    with profile():
        assert FusedKernel.__dict__["__call__"] is not plain
        assert Kernel.profiled_labels is not None
        compiled(x)
    assert FusedKernel.__dict__["__call__"] is plain
    assert Kernel.profiled_labels is None


def test_a_kernel_class_made_while_profiling_is_labelled(device):
    with profile() as prof:
        class Doubling(Kernel):
            kind = "doubling"

            def __call__(self, x):
                out = torch.empty_like(x)
                torch.ops.mimic.elementwise(out, [x], "x0 x0 add", torch.float32, [], 0, 0)
                return out

        kernel = Doubling(["aten.mul.Tensor"])
        x = torch.ones(4, device=device)
        out = kernel(x)
    assert torch.equal(out.cpu(), torch.full((4,), 2.0))
    assert "mimic_doubling [aten.mul]" in {a["name"] for a in kernels_of(prof.trace)}
    assert "_plain_call" not in Doubling.__dict__


def test_fused_kernels_show_by_name_in_torch_profiler(device):
    compiled, x = compiled_pointwise(device)
    with torch.profiler.profile() as prof:
        compiled(x)
    # The host range, and the device kernel the bridge reports under its name as device work.
    counts = {(event.key, str(event.device_type)): event.count for event in prof.key_averages()}
    assert counts.get((LABEL, "DeviceType.CPU")) == 1, counts
    assert counts.get((LABEL, "DeviceType.CUDA")) == 1, counts
    assert Kernel.profiled_labels is None
