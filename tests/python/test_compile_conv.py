"""The convolution pass (_lower_conv): compiled 2-D convolutions and their backward against eager
on the same device, their launch counts, and the convolutions it leaves to eager."""
import pytest
import torch
from torch import nn

import torch_mimic
from kernel_launches import launches

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
    (2, 24, 3, 1, 1, 1, False),  # stride 1 with O > 2*OW: the products dense, then copied
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
    before = launches()
    fn(x, weight).backward(grad)
    return launches() - before


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
    """1x1, stride 1, no padding: the input is the forward GEMM's operand as it is, grad_output's
    rows both backward GEMMs', the weight's transpose a view."""
    torch.manual_seed(0)
    x, weight = torch.randn(2, 4, 5, 5), torch.randn(6, 4, 1, 1)

    def fn(x, weight):
        return nn.functional.conv2d(x, weight)

    grad = torch.randn(2, 6, 5, 5)
    # forward GEMM; backward: the rows, the input GEMM, the input's columns and the weight GEMM.
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


# --- batch norm (_lower_norm) ----------------------------------------------------------------


class _Block(nn.Module):
    """conv -> batch norm -> ReLU, with an optional residual add before the ReLU, as resnet's
    blocks have; or a batch norm without affine parameters or running statistics."""

    def __init__(self, kind):
        super().__init__()
        self.kind = kind
        self.conv = nn.Conv2d(3, 4, 3, padding=1, bias=False)
        affine = kind != "plain"
        self.norm = nn.BatchNorm2d(4, affine=affine, track_running_stats=affine)
        self.skip = nn.Conv2d(3, 4, 1, bias=False)

    def forward(self, x):
        y = self.norm(self.conv(x))
        if self.kind == "residual":
            return (y + self.skip(x)).relu()
        if self.kind == "plain":
            return y * 2.0
        return y.relu()


def _train_block(block, device, x, grad, compiled):
    block = block.to(device)
    runner = torch_mimic.compile(block) if compiled else block
    x = x.to(device).requires_grad_()
    out = runner(x)
    out.backward(grad.to(device))
    return ([out.detach().cpu(), x.grad.cpu()]
            + [p.grad.cpu() for p in block.parameters() if p.grad is not None]
            + [b.cpu() for b in block.buffers()])


@pytest.mark.parametrize("kind", ["relu", "residual", "plain"])
def test_batch_norm_training_matches_eager(device, kind):
    torch.manual_seed(0)
    eager, model = _Block(kind), _Block(kind)
    model.load_state_dict(eager.state_dict())
    x, grad = torch.randn(3, 3, 7, 6), torch.randn(3, 4, 7, 6)
    expected = _train_block(eager, device, x, grad, compiled=False)
    got = _train_block(model, device, x, grad, compiled=True)
    graphs = _graphs()
    forward = next(k for k in graphs["forward"]["kernels"] if k["kind"] == "batch_norm")
    backward = next(k for k in graphs["backward"]["kernels"] if k["kind"] == "batch_norm_backward")
    # The following pointwise kernel is the batch norm's output program.
    assert len(forward["nodes"]) > 1
    assert "aten.native_batch_norm.default" not in graphs["forward"]["eager_nodes"]
    # The input gradient feeds only the convolution's backward: written as its rows.
    assert backward["channels_first"]
    # Eager's float32 operations in eager's order: outputs, gradients and running statistics
    # (after the buffers' write back) are bit-identical.
    assert len(got) == len(expected)
    for ours, theirs in zip(got, expected):
        assert torch.equal(ours, theirs)


def test_batch_norm_launches(device):
    """conv -> batch norm -> ReLU forward: the batch norm and the ReLU in 7 launches (eager: 9).
    Backward: the batch norm's 5 as eager's; the convolution's without its rows copy (the input
    gradient is written as the rows) in 8, eager's in 17 (rows, col2im of KH*KW + 3, weight 4);
    one launch outside the graphs that eager does not make."""
    torch.manual_seed(0)
    block = _Block("relu").to(device)
    x, grad = torch.randn(2, 3, 6, 6).to(device).requires_grad_(), torch.randn(2, 4, 6, 6).to(device)

    def forward_and_backward(runner):
        runner(x).backward(grad)
        x.grad = None
        block.zero_grad(set_to_none=True)
        before = launches()
        out = runner(x)
        middle = launches()
        out.backward(grad)
        return middle - before, launches() - middle

    eager_forward, eager_backward = forward_and_backward(block)
    forward, backward = forward_and_backward(torch_mimic.compile(block))
    # conv: 4 compiled, 5 eager; num_batches_tracked += 1: 1 each.
    assert (eager_forward, forward) == (5 + 1 + 8 + 1, 4 + 1 + 7)
    assert eager_backward == 1 + 5 + 17
    assert backward <= 1 + 5 + 8 + 1


def _refused_norm(kind, device):
    torch.manual_seed(0)
    norm = nn.BatchNorm2d(4)
    x = torch.randn(2, 4, 5, 5)
    if kind == "eval":
        norm.eval()
    if kind == "float64":
        # The device's batch norm pass takes float32 only: float64 stays the eager op.
        x = x.double()
        norm.double()
    return norm.to(device), x.to(device)


@pytest.mark.parametrize("kind", ["eval", "float64"])
def test_refused_batch_norms_run_eager(device, kind):
    eager, x = _refused_norm(kind, device)
    norm, _ = _refused_norm(kind, device)
    compiled = torch_mimic.compile(norm)
    assert torch.equal(compiled(x).detach().cpu(), eager(x).detach().cpu())
    graphs = _graphs()
    assert "batch_norm" not in _kinds(graphs["forward"])
    assert graphs["forward"]["eager_nodes"].get("aten.native_batch_norm.default") == 1


# --- pooling (_lower_pool) -------------------------------------------------------------------


def _pool_pair(device, fn, x, grad):
    results = []
    for runner in (fn, torch_mimic.compile(fn)):
        leaf = x.clone().to(device).requires_grad_()
        out = runner(leaf)
        out.backward(grad.to(device))
        results.append((out.detach().cpu(), leaf.grad.cpu()))
    return results


POOLS = {
    "avg": lambda x: nn.functional.avg_pool2d(x.relu(), 2),
    "avg_3x2_override": lambda x: nn.functional.avg_pool2d(x.relu(), (3, 2), divisor_override=5),
    "max": lambda x: nn.functional.max_pool2d(x.relu(), 2),
}


@pytest.mark.parametrize("name", sorted(POOLS))
def test_tiling_pools_match_eager(device, name):
    torch.manual_seed(0)
    fn = POOLS[name]
    x = torch.randn(2, 3, 6, 8)
    grad = torch.randn(fn(x).shape)
    (eager_out, eager_grad), (out, grad_in) = _pool_pair(device, fn, x, grad)
    graphs = _graphs()
    kinds = _kinds(graphs["forward"]) + _kinds(graphs["backward"])
    kind = "max_pool_backward" if name == "max" else "avg_pool_backward"
    backward = next(k for k in graphs["backward"]["kernels"] if k["kind"] == kind)
    assert "aten.threshold_backward.default" in backward["nodes"]  # the ReLU's, absorbed
    assert name == "max" or "avg_pool" in kinds
    # Eager's float32 operations: bit-identical (relu's zeros make ties for max pooling).
    assert torch.equal(out, eager_out)
    assert torch.equal(grad_in, eager_grad)


@pytest.mark.parametrize("fn", [
    lambda x: nn.functional.avg_pool2d(x, 3, 2),                     # overlapping windows
    lambda x: nn.functional.avg_pool2d(x, 2, padding=1),             # padded
    lambda x: nn.functional.max_pool2d(x, 4),                        # ragged: 6 rows
    lambda x: nn.functional.max_pool2d(x, 2, dilation=2),            # dilated
], ids=["overlapping", "padded", "ragged", "dilated"])
def test_refused_pools_run_eager(device, fn):
    torch.manual_seed(0)
    x = torch.randn(2, 3, 6, 8)
    grad = torch.randn(fn(x).shape)
    (eager_out, eager_grad), (out, grad_in) = _pool_pair(device, fn, x, grad)
    graphs = _graphs()
    assert not {"avg_pool", "avg_pool_backward", "max_pool_backward"} & set(
        _kinds(graphs["forward"]) + _kinds(graphs["backward"]))
    assert torch.equal(out, eager_out)
    assert torch.equal(grad_in, eager_grad)


class _Norm1d(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(5)
        self.register_buffer("scale", torch.randn(5))

    def forward(self, x):
        return torch.sigmoid(self.norm(x) * self.scale)


def test_batch_norm_1d_with_broadcast_epilogue_matches_eager(device):
    """A [N, C] batch norm (its statistics over N only) whose output program also reads a
    per-feature tensor that broadcasts."""
    torch.manual_seed(0)
    eager, model = _Norm1d().to(device), _Norm1d().to(device)
    model.load_state_dict(eager.state_dict())

    def run(module, compiled):
        x = torch.randn(7, 5, generator=torch.Generator().manual_seed(1)).to(device).requires_grad_()
        out = (torch_mimic.compile(module) if compiled else module)(x)
        out.backward(torch.ones_like(out))
        norm = module.norm
        return [out.detach().cpu(), x.grad.cpu(), norm.weight.grad.cpu(), norm.bias.grad.cpu(),
                norm.running_mean.cpu(), norm.running_var.cpu()]

    expected, got = run(eager, False), run(model, True)
    forward = next(k for k in _graphs()["forward"]["kernels"] if k["kind"] == "batch_norm")
    assert "aten.sigmoid.default" in forward["nodes"]
    for ours, theirs in zip(got, expected):
        assert torch.equal(ours, theirs)
