"""Upsampling, padding, prelu, unfold_backward and adaptive_avg_pool3d compositions (ops_upsample.py and
siblings) against PyTorch's CPU device: shapes, scale factors, non-contiguous inputs, backward,
errors, and that float32 runs without the CPU fallback."""
import pytest
import torch
import torch.nn.functional as F


def _randn(*shape, seed=0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed))


def _forward_backward(fn, x, device):
    """fn's output and input gradient on the CPU and on the device, for the same cotangent."""
    results = []
    for dev in ("cpu", device):
        leaf = x.detach().to(dev).requires_grad_()
        out = fn(leaf)
        cotangent = _randn(*out.shape, seed=1).to(dev)
        (grad,) = torch.autograd.grad(out, leaf, cotangent)
        results.append((out.detach().cpu(), grad.cpu()))
    return results


def _assert_native(fallbacks):
    assert not fallbacks(), f"unexpected CPU fallbacks: {fallbacks()}"


# Nearest copies values and its backward sums at most ceil(out/in) products per input element per
# dimension; the device sums in another order, so the bound is float32 rounding of such a sum.
NEAREST_CASES = [
    ((2, 3, 5), dict(size=8)), ((2, 3, 5), dict(size=10)), ((2, 3, 5), dict(size=3)),
    ((2, 3, 5), dict(scale_factor=1.7)), ((1, 2, 4, 5), dict(size=(7, 3))),
    ((1, 2, 4, 5), dict(scale_factor=(2.0, 0.6))), ((1, 2, 3, 4, 2), dict(size=(5, 4, 3))),
    ((1, 2, 3, 4, 2), dict(scale_factor=1.5)), ((0, 2, 4), dict(size=6)),
]


@pytest.mark.parametrize("shape,kwargs", NEAREST_CASES)
def test_nearest_matches_cpu(shape, kwargs, device, fallbacks):
    x = _randn(*shape)
    (out_cpu, grad_cpu), (out_dev, grad_dev) = _forward_backward(
        lambda t: F.interpolate(t, mode="nearest", **kwargs), x, device)
    torch.testing.assert_close(out_dev, out_cpu, rtol=0, atol=0)
    torch.testing.assert_close(grad_dev, grad_cpu, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


def test_nearest_non_contiguous_and_out(device, fallbacks):
    x = _randn(2, 6, 5, 4).transpose(2, 3)
    expected = torch.ops.aten.upsample_nearest2d(x, [9, 7], None, None)
    out = torch.empty(0, device=device)
    torch.ops.aten.upsample_nearest2d.out(x.to(device), [9, 7], None, None, out=out)
    torch.testing.assert_close(out.cpu(), expected, rtol=0, atol=0)
    _assert_native(fallbacks)


def test_nearest_errors_match_cpu(device):
    for args in (([1, 2, 0], [4]), ([1, 2, 3], [0])):
        with pytest.raises(RuntimeError) as cpu_error:
            torch.ops.aten.upsample_nearest1d(torch.zeros(args[0]), args[1])
        with pytest.raises(RuntimeError) as device_error:
            torch.ops.aten.upsample_nearest1d(torch.zeros(args[0], device=device), args[1])
        assert str(device_error.value) == str(cpu_error.value)


def test_nearest_float64_falls_back(device, fallbacks):
    x = _randn(1, 2, 3).double()
    out = F.interpolate(x.to(device), size=5, mode="nearest")
    torch.testing.assert_close(out.cpu(), F.interpolate(x, size=5, mode="nearest"), rtol=0, atol=0)
    assert fallbacks(), "float64 computes on the CPU"


# prelu's weight gradient sums up to N products per channel in another order than the CPU: the
# bound is float32 rounding of that sum (N u sum |x g|), well under 1e-4 for these sizes.
PRELU_CASES = [((2, 3, 4), (3,)), ((2, 3, 4), (1,)), ((2, 3, 4, 5), ()), ((5,), (1,)), ((), ()),
               ((0, 3, 2), (3,)), ((4, 6), (6,))]


@pytest.mark.parametrize("shape,weight_shape", PRELU_CASES)
def test_prelu_matches_cpu(shape, weight_shape, device, fallbacks):
    x, w = _randn(*shape), _randn(*weight_shape, seed=2)
    outputs = []
    for dev in ("cpu", device):
        xl, wl = x.to(dev).requires_grad_(), w.to(dev).requires_grad_()
        out = F.prelu(xl, wl)
        grads = torch.autograd.grad(out, (xl, wl), _randn(*out.shape, seed=1).to(dev))
        outputs.append([out.detach().cpu()] + [g.cpu() for g in grads])
    for actual, expected in zip(outputs[1], outputs[0]):
        torch.testing.assert_close(actual, expected, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


@pytest.mark.parametrize("shape,weight_shape", [((2, 3), (4,)), ((), (3,)), ((2, 3), (1, 1)), ((3,), (3,))])
def test_prelu_errors_match_cpu(shape, weight_shape, device):
    with pytest.raises(RuntimeError) as cpu_error:
        torch.ops.aten.prelu(torch.zeros(shape), torch.zeros(weight_shape))
    with pytest.raises(RuntimeError) as device_error:
        torch.ops.aten.prelu(torch.zeros(shape, device=device), torch.zeros(weight_shape, device=device))
    assert str(device_error.value) == str(cpu_error.value)


# Each input element sums at most ceil(size / step) window elements: float32 rounding of that sum.
@pytest.mark.parametrize("shape,dim,size,step", [((7,), 0, 3, 2), ((4, 9), 1, 4, 1), ((4, 9), -2, 2, 3),
                                                 ((3, 5, 6), 2, 6, 1), ((), 0, 1, 1), ((0, 5), 1, 2, 2),
                                                 ((5, 4), 0, 1, 7)])
def test_unfold_backward_matches_cpu(shape, dim, size, step, device, fallbacks):
    x = _randn(*shape)
    (out_cpu, grad_cpu), (out_dev, grad_dev) = _forward_backward(lambda t: t.unfold(dim, size, step), x, device)
    torch.testing.assert_close(out_dev, out_cpu, rtol=0, atol=0)
    torch.testing.assert_close(grad_dev, grad_cpu, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


def test_unfold_backward_non_contiguous_gradient(device, fallbacks):
    grad = _randn(3, 5, 4).transpose(0, 1)
    expected = torch.ops.aten.unfold_backward(grad, [5, 6], 1, 4, 1)
    actual = torch.ops.aten.unfold_backward(grad.to(device), [5, 6], 1, 4, 1)
    torch.testing.assert_close(actual.cpu(), expected, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


# The backward sums at most 1 + 2 pad / size gradient elements per input element: float32 rounding.
PAD_CASES = [("reflect", (2, 3, 5), (2, 3)), ("reflect", (3, 5), (4, 0)), ("reflect", (2, 3, 5), (-1, 2)),
             ("reflect", (1, 2, 4, 5), (1, 2, 3, 0)), ("reflect", (1, 2, 3, 4, 5), (1, 1, 2, 0, 2, 1)),
             ("replicate", (2, 3, 5), (7, 1)), ("replicate", (2, 3, 5), (-2, 3)),
             ("replicate", (1, 2, 4, 5), (3, 2, 0, 4)), ("replicate", (2, 3, 4, 5), (1, 2, 1, 0, 2, 2)),
             ("reflect", (0, 3, 5), (2, 1))]


@pytest.mark.parametrize("mode,shape,padding", PAD_CASES)
def test_pad_matches_cpu(mode, shape, padding, device, fallbacks):
    x = _randn(*shape)
    (out_cpu, grad_cpu), (out_dev, grad_dev) = _forward_backward(lambda t: F.pad(t, padding, mode=mode), x, device)
    torch.testing.assert_close(out_dev, out_cpu, rtol=0, atol=0)
    torch.testing.assert_close(grad_dev, grad_cpu, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


def test_pad_non_contiguous_and_out(device, fallbacks):
    x = _randn(3, 2, 6, 5).transpose(2, 3)
    expected = torch.ops.aten.reflection_pad2d(x, [2, 1, 3, 3])
    out = torch.empty(0, device=device)
    torch.ops.aten.reflection_pad2d.out(x.to(device), [2, 1, 3, 3], out=out)
    torch.testing.assert_close(out.cpu(), expected, rtol=0, atol=0)
    _assert_native(fallbacks)


@pytest.mark.parametrize("name,shape,padding", [("reflection_pad1d", (2, 3, 5), [5, 0]),
                                                ("reflection_pad2d", (3,), [1, 1, 1, 1]),
                                                ("replication_pad1d", (2, 3, 5), [1]),
                                                ("replication_pad2d", (1, 2, 0, 4), [1, 1, 1, 1])])
def test_pad_errors_match_cpu(name, shape, padding, device):
    op = getattr(torch.ops.aten, name)
    with pytest.raises((RuntimeError, IndexError)) as cpu_error:
        op(torch.zeros(shape), padding)
    with pytest.raises((RuntimeError, IndexError)) as device_error:
        op(torch.zeros(shape, device=device), padding)
    assert device_error.type is cpu_error.type
    assert str(device_error.value) == str(cpu_error.value)


def test_pad_backward_wrong_gradient_shape_as_cpu(device):
    with pytest.raises(RuntimeError) as cpu_error:
        torch.ops.aten.reflection_pad2d_backward(torch.zeros(1, 2, 4, 4), torch.zeros(1, 2, 3, 3), [1, 1, 1, 1])
    with pytest.raises(RuntimeError) as device_error:
        torch.ops.aten.reflection_pad2d_backward(torch.zeros(1, 2, 4, 4, device=device),
                                                 torch.zeros(1, 2, 3, 3, device=device), [1, 1, 1, 1])
    assert str(cpu_error.value) in str(device_error.value)


# Linear modes: each output is a combination of 2^k (bicubic: 16) inputs with weights of total
# magnitude at most 1.3^k; the device rounds the same per-dimension sums and its backward sums the
# same weighted terms per input in another order: a few float32 roundings of values ~|x|, under
# 1e-5 here.
LINEAR_CASES = [("linear", (2, 3, 5), dict(size=9)), ("linear", (2, 3, 9), dict(size=4)),
                ("linear", (2, 3, 5), dict(scale_factor=1.7)), ("linear", (1, 1, 4), dict(size=1)),
                ("linear", (1, 2, 6), dict(size=6)), ("bilinear", (1, 2, 4, 5), dict(size=(7, 3))),
                ("bilinear", (2, 2, 5, 4), dict(scale_factor=(2.3, 0.7))),
                ("bilinear", (1, 1, 1, 3), dict(size=(3, 1))),
                ("trilinear", (1, 2, 3, 4, 2), dict(size=(5, 3, 4))),
                ("trilinear", (1, 1, 2, 3, 4), dict(scale_factor=1.5)),
                ("bicubic", (1, 2, 4, 5), dict(size=(9, 3))), ("bicubic", (2, 1, 6, 6), dict(scale_factor=0.6)),
                ("bicubic", (1, 1, 3, 4), dict(size=(3, 4))), ("bicubic", (1, 1, 2, 2), dict(size=(1, 5)))]


@pytest.mark.parametrize("align_corners", [False, True])
@pytest.mark.parametrize("mode,shape,kwargs", LINEAR_CASES)
def test_linear_modes_match_cpu(mode, shape, kwargs, align_corners, device, fallbacks):
    x = _randn(*shape)
    (out_cpu, grad_cpu), (out_dev, grad_dev) = _forward_backward(
        lambda t: F.interpolate(t, mode=mode, align_corners=align_corners, **kwargs), x, device)
    torch.testing.assert_close(out_dev, out_cpu, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grad_dev, grad_cpu, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


def test_bilinear_channels_last_and_out(device, fallbacks):
    x = _randn(2, 3, 5, 4).contiguous(memory_format=torch.channels_last)
    expected = torch.ops.aten.upsample_bilinear2d(x, [8, 7], False, None, None)
    out = torch.empty(0, device=device)
    torch.ops.aten.upsample_bilinear2d.out(x.to(device), [8, 7], False, None, None, out=out)
    torch.testing.assert_close(out.cpu(), expected, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


def test_bilinear_errors_match_cpu(device):
    with pytest.raises(RuntimeError) as cpu_error:
        torch.ops.aten.upsample_bilinear2d(torch.zeros(1, 2, 0, 3), [4, 4], False)
    with pytest.raises(RuntimeError) as device_error:
        torch.ops.aten.upsample_bilinear2d(torch.zeros(1, 2, 0, 3, device=device), [4, 4], False)
    assert str(device_error.value) == str(cpu_error.value)


# Adaptive average pooling: the device averages dimension by dimension (GEMMs), the CPU sums the
# box and divides: a few float32 roundings of an average of values ~|x|, under 1e-5 here.
@pytest.mark.parametrize("shape,output_size", [((2, 3, 5, 6, 7), (2, 3, 4)), ((3, 4, 4, 5), (4, 4, 5)),
                                               ((1, 2, 7, 3, 5), (3, 1, 8)), ((0, 2, 3, 3, 3), (2, 2, 2)),
                                               ((1, 1, 4, 4, 4), (1, 1, 1))])
def test_adaptive_avg_pool3d_matches_cpu(shape, output_size, device, fallbacks):
    x = _randn(*shape)
    (out_cpu, grad_cpu), (out_dev, grad_dev) = _forward_backward(
        lambda t: F.adaptive_avg_pool3d(t, output_size), x, device)
    torch.testing.assert_close(out_dev, out_cpu, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grad_dev, grad_cpu, rtol=1e-5, atol=1e-5)
    _assert_native(fallbacks)


@pytest.mark.parametrize("shape,output_size", [((2, 3, 0, 4, 4), [2, 2, 2]), ((3, 4), [2, 2, 2]),
                                               ((1, 2, 3, 3, 3), [2, 2])])
def test_adaptive_avg_pool3d_errors_match_cpu(shape, output_size, device):
    with pytest.raises(RuntimeError) as cpu_error:
        torch.ops.aten._adaptive_avg_pool3d(torch.zeros(shape), output_size)
    with pytest.raises(RuntimeError) as device_error:
        torch.ops.aten._adaptive_avg_pool3d(torch.zeros(shape, device=device), output_size)
    assert str(device_error.value) == str(cpu_error.value)
