"""float64 on the device (the ISA's f64): pointwise ops, reductions and copies compute in f64,
never in f32, against the CPU. Values are chosen so that an f32 computation would be far off
(1 + 1e-10 is 1 in f32), so these tests fail if any step narrows.

Bounds: a pointwise op through glibc's f64 functions is within a few units of f64 roundoff
(2^-53) of the CPU's; a sum of n terms differs from the CPU's (another summation order) by at
most n units of roundoff of the sum of magnitudes. Kernels that still compute in f32 (sort,
scans, the row kernels of softmax and norms, GEMM) refuse f64: those ops run through the
counted CPU fallback and are exact."""
import pytest
import torch

U64 = 2.0 ** -53


def _values(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.rand(shape, generator=g, dtype=torch.float64) - 0.5) * 8


def _close(actual, expected, ulps=4):
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype == torch.float64
    actual = actual.cpu()
    bound = ulps * U64 * expected.abs() + 1e-300
    error = (actual - expected).abs()
    ok = (error <= bound) | (actual.isnan() & expected.isnan()) | (actual == expected)
    assert bool(ok.all()), f"error {error.max()} above {ulps} ulps"


def _native(fallbacks):
    assert not fallbacks(), f"CPU fallbacks: {fallbacks()}"


def test_arithmetic_keeps_f64_precision(device, fallbacks):
    x = torch.full((5, 7), 1.0 + 1e-10, dtype=torch.float64)
    d = x.to(device)
    result = (d * d - 1).cpu()
    expected = x * x - 1
    assert torch.equal(result, expected)  # exact: the same IEEE operations
    assert float(result[0, 0]) > 1.9e-10  # f32 would give 0
    a, b = _values((3, 65), 1), _values((3, 65), 2)
    for fn in (torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum):
        assert torch.equal(fn(a.to(device), b.to(device)).cpu(), fn(a, b))
    # addcmul: the CPU may fuse or order its three roundings differently, each within one unit
    # of roundoff of the terms' magnitude.
    got = torch.addcmul(a.to(device), a.to(device), b.to(device), value=0.5).cpu()
    error = (got - torch.addcmul(a, a, b, value=0.5)).abs()
    assert bool((error <= 4 * U64 * (a.abs() + 0.5 * (a * b).abs())).all())
    _native(fallbacks)


@pytest.mark.parametrize("op", ["exp", "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "erf",
                                "rsqrt", "reciprocal", "floor", "round", "abs", "neg"])
def test_unary_ops_are_f64_accurate(device, fallbacks, op):
    x = _values((4, 33), 3)
    if op in ("log", "sqrt", "rsqrt"):
        x = x.abs() + 1e-3
    fn = getattr(torch, op)
    _close(fn(x.to(device)), fn(x))
    _native(fallbacks)


def test_reductions_accumulate_in_f64(device, fallbacks):
    x = _values((6, 1000), 4)
    x[:, 0] = 1e8
    x[:, 1] = -1e8  # their cancellation leaves the small terms, which f32 would have lost
    d = x.to(device)
    n = x.shape[1]
    magnitude = x.abs().sum(1)
    error = (d.sum(1).cpu() - x.sum(1)).abs()
    assert bool((error <= n * U64 * magnitude).all())
    mean_error = (d.mean(1).cpu() - x.mean(1)).abs()
    assert bool((mean_error <= (n + 1) * U64 * magnitude / n).all())
    assert torch.equal(d.amax(1).cpu(), x.amax(1))
    assert torch.equal(d.argmin(1).cpu(), x.argmin(1))
    _native(fallbacks)


def test_casts_both_ways(device, fallbacks):
    x = _values((2, 50), 5) * 1e3
    d = x.to(device)
    for other in (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                  torch.int16):
        assert torch.equal(d.to(other).cpu(), x.to(other))
        y = x.to(other)
        assert torch.equal(y.to(device).to(torch.float64).cpu(), y.to(torch.float64))
    big = torch.tensor([2 ** 53 + 1, -(2 ** 62) - 1], dtype=torch.int64)
    assert torch.equal(big.to(device).double().cpu(), big.double())
    _native(fallbacks)


def test_f32_kernels_refuse_f64(device, fallbacks):
    """sort, cumsum and softmax keep f64 exact by running on the CPU."""
    x = torch.tensor([1.0 + 2e-16 * k for k in range(40)], dtype=torch.float64).flip(0)
    d = x.to(device)
    assert torch.equal(torch.sort(d).values.cpu(), torch.sort(x).values)
    assert torch.equal(torch.cumsum(d, 0).cpu(), torch.cumsum(x, 0))
    assert torch.equal(torch.softmax(d, 0).cpu(), torch.softmax(x, 0))
    assert fallbacks()  # they did go to the CPU
