"""Fake and meta tensors of the mimic device never reach the device.

A fake mimic tensor reports the mimic device but computes shapes only: ops run their meta
kernels, the torch.ops.mimic primitives their shape-only Meta kernels, and nothing is launched.
An op without a meta kernel takes fake mode's own fallback (real zeros on the device)."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx

import torch_mimic
from kernel_launches import launches

DEVICE = torch_mimic.DEVICE_TYPE


def test_a_fake_tensor_reports_the_mimic_device_with_the_current_index():
    with FakeTensorMode():
        x = torch.empty(4, 5, device=DEVICE)
    assert isinstance(x, FakeTensor)
    assert x.device == torch.device(DEVICE, torch_mimic.current_device())


def test_ops_on_fake_tensors_launch_nothing():
    real = torch.randn(4, 5, device=DEVICE)
    mode = FakeTensorMode()
    before = launches()
    with mode:
        x = mode.from_tensor(real)
        y = torch.nn.functional.layer_norm(x, (5,)).relu() @ x.t()
        picked = x[torch.zeros(3, dtype=torch.long, device=DEVICE)]
        results = [y, x.softmax(1), x.sum(0), torch.cat([x, x]), x.view(20), picked, x + 1]
    assert launches() == before
    assert [tuple(r.shape) for r in results] == [(4, 4), (4, 5), (5,), (8, 5), (20,), (3, 5),
                                                  (4, 5)]
    assert all(r.device == real.device for r in results)


@pytest.mark.parametrize("call", [
    lambda y: torch.ops.mimic.elementwise(y, [y], "x0 1 +", torch.float32, []),
    lambda y: torch.ops.mimic.reduce(y[:1], y, [0], "sum"),
    lambda y: torch.ops.mimic.gemm(y, y, y, 1.0, 0.0),
    lambda y: torch.ops.mimic.softmax(y, y, False),
], ids=["elementwise", "reduce", "gemm", "softmax"])
def test_primitives_on_fake_tensors_launch_nothing(call):
    mode = FakeTensorMode()
    before = launches()
    with mode:
        call(torch.empty(4, 4, device=DEVICE))
    assert launches() == before


def test_primitives_on_meta_tensors_launch_nothing():
    y = torch.empty(4, 4, device="meta")
    before = launches()
    torch.ops.mimic.elementwise(y, [y], "x0 1 +", torch.float32, [])
    assert launches() == before


def test_an_op_without_a_meta_kernel_runs_on_zeros_in_fake_mode():
    """multi_margin_loss has no meta kernel in 1.13: fake mode runs it on zero tensors of the
    device (its own fallback) and fakes the result."""
    mode = FakeTensorMode()
    with mode:
        x = torch.empty(4, 5, device=DEVICE)
        target = torch.zeros(4, dtype=torch.long, device=DEVICE)
        loss = torch.nn.functional.multi_margin_loss(x, target)
    assert isinstance(loss, FakeTensor) and loss.shape == () and loss.device == x.device


def test_make_fx_traces_a_device_function_with_fake_tensors():
    a = torch.randn(4, 5, device=DEVICE)
    w = torch.randn(5, 3, device=DEVICE)
    before = launches()
    graph = make_fx(lambda a, w: (a @ w).relu().sum(1), tracing_mode="fake")(a, w)
    assert launches() == before
    targets = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.mm.default", "aten.relu.default", "aten.sum.dim_IntList"]
    torch.testing.assert_close(graph(a, w).cpu(), (a.cpu() @ w.cpu()).relu().sum(1))
