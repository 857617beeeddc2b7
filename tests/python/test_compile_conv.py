"""The convolution pass (_lower_conv): compiled 2-D convolutions and their backward against eager
on the same device, their launch counts, and the convolutions it leaves to eager."""
import pytest
import torch
from torch import nn

import torch_mimic

def _launches():
    stats = torch_mimic.kernel_cache_stats()
    return stats["hits"] + stats["misses"]


def _graphs():
    return torch_mimic.compile_report()[-1]["captures"][0]["graphs"]


def _kinds(graph):
    return [kernel["kind"] for kernel in graph["kernels"]]


def _run(fn, device, x, weight, bias, grad):
    """fn's output and the gradients of x, weight and bias for ``grad``, on the device."""
    leaves = [t.clone().to(device).requires_grad_() if t is not None else None
              for t in (x, weight, bias)]
    out = fn(*leaves)
    out.backward(grad.to(device))
    return out.detach().cpu(), [t.grad.cpu() if t is not None else None for t in leaves]


# (in channels, out channels, kernel, stride, padding, dilation, bias)
CASES = [
    (3, 8, 3, 1, 1, 1, True),
    (4, 6, 3, 2, 1, 1, False),
    (5, 7, 1, 1, 0, 1, True),
    (6, 5, 1, 2, 0, 1, False),
    (3, 4, (3, 5), (2, 1), (1, 2), (1, 2), True),
    (2, 3, 7, 2, 3, 1, False),
    (3, 2, 1, 1, 1, 1, True),  # padding beyond the kernel's reach: border outputs are the bias
]


@pytest.mark.parametrize("case", CASES)
def test_convolution_matches_eager(device, case):
    channels, out_channels, kernel, stride, padding, dilation, with_bias = case
    torch.manual_seed(0)
    x = torch.randn(2, channels, 11, 10)
    conv = nn.Conv2d(channels, out_channels, kernel, stride, padding, dilation, bias=with_bias)
    weight, bias = conv.weight.detach(), conv.bias.detach() if with_bias else None

    def fn(x, weight, bias):
        return nn.functional.conv2d(x, weight, bias, stride, padding, dilation)

    grad = torch.randn(fn(x, weight, bias).shape)
    eager_out, eager_grads = _run(fn, device, x, weight, bias, grad)
    out, grads = _run(torch_mimic.compile(fn), device, x, weight, bias, grad)
    graphs = _graphs()
    assert _kinds(graphs["forward"]) == ["conv"]
    assert "conv_backward" in _kinds(graphs["backward"])
    assert not any("convolution" in op for g in graphs.values() for op in g["eager_nodes"])

    # Eager's float32 operations in eager's order: bit-identical.
    assert torch.equal(out, eager_out)
    for compiled, eager in zip(grads, eager_grads):
        assert (compiled is None) == (eager is None)
        if compiled is not None:
            assert torch.equal(compiled, eager)


def _step_launches(fn, device, x, weight, grad):
    x, weight = x.to(device).requires_grad_(), weight.to(device).requires_grad_()
    grad = grad.to(device)
    fn(x, weight).backward(grad)  # the first call compiles and builds kernels
    x.grad = weight.grad = None  # no accumulation into earlier gradients
    before = _launches()
    fn(x, weight).backward(grad)
    return _launches() - before


def test_launches_per_convolution(device):
    """A 3x3 convolution with padding: 4 launches forward (pad: fill and copy, im2col, GEMM)
    against eager's 5 (its NCHW copy); backward 9: as eager, grad_output's rows, the input's
    columns (3) and both GEMMs, then the zero plane, the products' copy into it and one
    reduction, against eager's 1 + 4 + (GEMM, zero plane, KH*KW adds, crop) = 17."""
    torch.manual_seed(0)
    x, weight = torch.randn(2, 4, 8, 8), torch.randn(6, 4, 3, 3)

    def fn(x, weight):
        return nn.functional.conv2d(x, weight, None, 1, 1)

    grad = torch.randn(2, 6, 8, 8)
    eager = _step_launches(fn, device, x, weight, grad)
    compiled = _step_launches(torch_mimic.compile(fn), device, x, weight, grad)
    assert compiled == 4 + 9
    assert eager == 5 + 17


def test_pointwise_1x1_convolution_launches_only_gemms(device):
    """1x1, stride 1, no padding: the input and grad_output are the GEMMs' operands as they are,
    the weight's transpose a view."""
    torch.manual_seed(0)
    x, weight = torch.randn(2, 4, 5, 5), torch.randn(6, 4, 1, 1)

    def fn(x, weight):
        return nn.functional.conv2d(x, weight)

    grad = torch.randn(2, 6, 5, 5)
    # forward GEMM; backward: the input GEMM, and the rows, columns and GEMM of the weight.
    assert _step_launches(torch_mimic.compile(fn), device, x, weight, grad) == 1 + 4


@pytest.mark.parametrize("kind", ["groups", "transposed", "conv1d"])
def test_refused_convolutions_run_eager(device, kind):
    torch.manual_seed(0)
    if kind == "groups":
        x, weight = torch.randn(2, 4, 6, 6), torch.randn(6, 2, 3, 3)

        def fn(x, weight, bias):
            return nn.functional.conv2d(x, weight, None, 1, 1, 1, 2)
    elif kind == "transposed":
        x, weight = torch.randn(2, 4, 6, 6), torch.randn(4, 3, 3, 3)

        def fn(x, weight, bias):
            return nn.functional.conv_transpose2d(x, weight, None, 2, 1)
    else:  # the captured graph's convolution is 1-D (eager views it as 2-D)
        x, weight = torch.randn(2, 4, 9), torch.randn(3, 4, 3)

        def fn(x, weight, bias):
            return nn.functional.conv1d(x, weight, None, 1, 1)

    grad = torch.randn(fn(x, weight, None).shape)
    eager_out, eager_grads = _run(fn, device, x, weight, None, grad)
    out, grads = _run(torch_mimic.compile(fn), device, x, weight, None, grad)
    graphs = _graphs()
    assert "conv" not in _kinds(graphs["forward"])
    assert graphs["forward"]["eager_nodes"].get("aten.convolution.default") == 1
    assert graphs["backward"]["eager_nodes"].get("aten.convolution_backward.default") == 1
    assert torch.equal(out, eager_out)
    for compiled, eager in zip(grads, eager_grads):
        assert (compiled is None) == (eager is None)
        if compiled is not None:
            assert torch.equal(compiled, eager)
