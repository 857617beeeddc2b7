"""hardswish, hardsigmoid, softplus, softshrink, hardshrink and mish on the device
(torch_mimic/ops_activation.py) against PyTorch's CPU kernels: values, in-place and out= forms,
shapes, dtypes the CPU refuses, and backward."""
import pytest
import torch
import torch.nn.functional as F

F32_EPS = torch.finfo(torch.float32).eps

OPS = {
    "hardswish": F.hardswish,
    "hardsigmoid": F.hardsigmoid,
    "softplus": F.softplus,
    "softplus-beta-threshold": lambda x: F.softplus(x, beta=2, threshold=3),
    "softshrink": F.softshrink,
    "softshrink-lambda": lambda x: F.softshrink(x, 1.5),
    "hardshrink": F.hardshrink,
    "mish": F.mish,
}
BF16_OPS = [name for name in OPS if name != "mish"]  # the CPU's mish takes no bfloat16


def _inputs():
    """Values on both sides of every branch point (0, +-0.5, +-1.5, +-3, the thresholds), large
    ones where exp overflows, and NaN."""
    x = torch.randn(257, generator=torch.Generator().manual_seed(0)) * 5
    special = [float("nan"), 0.0, 0.5, -0.5, 1.5, -1.5, 3.0, -3.0, 1.4, 1.6, 30.0, -30.0, 100.0]
    x[:len(special)] = torch.tensor(special)
    return x


def _check(expected, actual, dtype):
    """Each program is a handful of float32 operations on either side, the transcendental ones
    within 2 ulps: 16 ulps of max(1, |value|) cover them (the 1 for log(1 + e^x) at e^x << 1,
    where the device's log of a rounded sum and the CPU's log1p differ absolutely by an ulp of
    1). bfloat16 results round once from those: one bfloat16 ulp apart at most, 2 allowed."""
    actual = actual.cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    tolerance = 16 * F32_EPS if dtype == torch.float32 else 2 * torch.finfo(dtype).eps
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance, equal_nan=True)


@pytest.mark.parametrize("name,dtype", [(name, torch.float32) for name in OPS] +
                         [(name, torch.bfloat16) for name in BF16_OPS])
def test_values_as_on_the_cpu(name, dtype, device, fallbacks):
    op = OPS[name]
    x = _inputs().to(dtype)
    _check(op(x), op(x.to(device)), dtype)
    grid = x[:256].reshape(16, 16)
    _check(op(grid.t()), op(grid.to(device).t()), dtype)  # non-contiguous
    _check(op(x[3]), op(x[3].to(device)), dtype)  # 0-dim
    _check(op(x[:0]), op(x[:0].to(device)), dtype)  # empty
    assert not fallbacks()


INPLACE = {"hardswish": lambda x: F.hardswish(x, inplace=True),
           "hardsigmoid": lambda x: F.hardsigmoid(x, inplace=True),
           "mish": lambda x: F.mish(x, inplace=True)}
OUT = {"hardswish": torch._C._nn.hardswish, "hardsigmoid": torch._C._nn.hardsigmoid,
       "softplus": torch._C._nn.softplus, "softshrink": torch._C._nn.softshrink,
       "hardshrink": torch.hardshrink, "mish": torch._C._nn.mish}


@pytest.mark.parametrize("name", INPLACE)
def test_in_place(name, device, fallbacks):
    x = _inputs()
    on_device = x.to(device)
    result = INPLACE[name](on_device)
    assert result.data_ptr() == on_device.data_ptr()
    _check(INPLACE[name](x.clone()), on_device, torch.float32)
    assert not fallbacks()


@pytest.mark.parametrize("name", OUT)
def test_out_resizes_an_empty_out(name, device, fallbacks):
    x = _inputs()
    out = torch.empty(0, device=device)
    OUT[name](x.to(device), out=out)
    _check(OUT[name](x), out, torch.float32)
    assert not fallbacks()


@pytest.mark.parametrize("name", ["hardswish", "softplus", "mish"])
def test_float16_and_integers_raise_the_cpus_error(name, device):
    for dtype in (torch.float16, torch.int64):
        x = torch.ones(3, dtype=dtype)
        with pytest.raises(RuntimeError) as cpu:
            OPS[name](x)
        with pytest.raises(RuntimeError) as on_device:
            OPS[name](x.to(device))
        assert str(on_device.value) == str(cpu.value)


@pytest.mark.parametrize("name", OPS)
def test_backward(name, device):
    x = _inputs()[1:]  # no NaN: its gradient is NaN on both sides
    x_cpu = x.clone().requires_grad_()
    x_device = x.to(device).requires_grad_()
    grad = torch.linspace(-1, 1, x.numel())
    OPS[name](x_cpu).backward(grad)
    OPS[name](x_device).backward(grad.to(device))
    _check(x_cpu.grad, x_device.grad, torch.float32)
