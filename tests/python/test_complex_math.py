"""complex64 log, log10, log2 and pow with a scalar operand on the device (complex_pointwise.cpp:
log|z| + i atan2(im, re) with the atan2 of angle(), exp(b log a) for pow) against PyTorch's CPU
(glibc's clogf and cpowf): shapes (empty, 0-dim, non-contiguous, conjugate views), special
values (signed zeros, infinities, NaN, parts near the float range's ends), out= and in place,
and backward; pow with two tensor operands stays on the counted fallback.

Error bounds: log|z| is a hypot within an ulp, then a log within an ulp: 2 ulps of log|z|
plus eps / 2 absolute (log(1 + d) near |z| = 1 inherits |z|'s absolute error); the angle is
Cephes' atanf, a few ulps (4 allowed) of up to pi, plus the octant's subtraction; log10 and
log2 add an ulp. So each part is within 4 eps (|log z| + 1) times 3.2 (> 1 + pi / 2, the
angle's terms) of the CPU's, which is itself within a fraction of that. pow: exp(w), w = b log
a, has the relative error of w's absolute error (|b| times log's error above, plus w's own
rounding, about 6 eps (|w| + 1)) plus exp's, cos's and sin's ulps."""
import math

import pytest
import torch

C64 = torch.complex64
EPS = torch.finfo(torch.float32).eps
BIG = 3e38

SPECIAL = [0.0, -0.0, 1.0, -1.0, 2.5, -3.25, 1e-30, 1e-40, 1e30, BIG, -BIG, math.inf, -math.inf, math.nan]


def _special_grid():
    return torch.tensor([complex(a, b) for a in SPECIAL for b in SPECIAL], dtype=C64)


def _randn(*shape, seed=0, scale=3.0):
    return torch.randn(tuple(shape), dtype=C64, generator=torch.Generator().manual_seed(seed)) * scale


def _assert_parts_close(actual, expected, bound):
    """Each part within ``bound`` (a tensor of the same shape, per element), NaN where NaN,
    infinities equal."""
    actual = actual.cpu()
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    for got, want in ((actual.real, expected.real), (actual.imag, expected.imag)):
        nan = want.isnan()
        assert torch.equal(got.isnan(), nan)
        inf = want.isinf()
        assert torch.equal(got[inf], want[inf])
        finite = ~nan & ~inf
        assert torch.all((got[finite] - want[finite]).abs() <= bound[finite]), \
            (got[finite] - want[finite]).abs().max()


def _log_bound(expected):
    return 4 * EPS * (expected.abs() + 1) * 3.2  # 3.2 > 1 + pi / 2: the angle's terms


@pytest.mark.parametrize("name", ["log", "log10", "log2"])
def test_log_family_over_special_and_random_values(name, device, fallbacks):
    fn = getattr(torch, name)
    z = torch.cat([_special_grid(), _randn(500), _randn(200, seed=1, scale=1e-3) + 1])
    expected = fn(z)
    _assert_parts_close(fn(z.to(device)), expected, _log_bound(expected))
    assert fallbacks() == {}


@pytest.mark.parametrize("name", ["log", "log10", "log2"])
def test_log_family_shapes_views_out_and_in_place(name, device, fallbacks):
    fn = getattr(torch, name)
    x = _randn(3, 4, seed=2)
    for view in (x, x.mT, x[:, ::2], x.conj(), x[0, 0], x[:0]):
        expected = fn(view)
        _assert_parts_close(fn(view.to(device)), expected, _log_bound(expected))
    expected = fn(x)
    out = torch.empty(0, dtype=C64, device=device)
    fn(x.to(device), out=out)
    _assert_parts_close(out, expected, _log_bound(expected))
    inplace = x.to(device)
    getattr(inplace, name + "_")()
    _assert_parts_close(inplace, expected, _log_bound(expected))
    assert fallbacks() == {}


def test_log_backward(device, fallbacks):
    x = _randn(4, 3, seed=3)
    weight = _randn(4, 3, seed=4)
    grads = []
    for where in ("cpu", device):
        leaf = x.to(where).requires_grad_()
        total = (torch.log(leaf) * weight.to(where)).sum().real
        grads.append(torch.autograd.grad(total, leaf)[0].cpu())
    # The gradient is weight / conj(x): a complex division, a few ulps of each part.
    _assert_parts_close(grads[1], grads[0], 8 * EPS * (grads[0].abs() + 1e-30))
    assert fallbacks() == {}


def _pow_bound(base, exponent, expected):
    w = (exponent * torch.log(base.to(torch.complex128))).abs()
    return (6 * (w + 1) + 4 * exponent.abs() * 3.2 + 4) * EPS * (expected.abs() + 1e-30)


@pytest.mark.parametrize("exponent", [2, 3, -1, 0.5, -0.5, -2, 1.7, 2 + 1j, -0.25j])
def test_pow_with_a_scalar_exponent(exponent, device, fallbacks):
    a = torch.cat([_randn(400), _randn(50, seed=1, scale=0.1)])
    expected = torch.pow(a, exponent)
    bound = _pow_bound(a, torch.tensor(exponent, dtype=torch.complex128), expected)
    _assert_parts_close(torch.pow(a.to(device), exponent), expected, bound)
    assert fallbacks() == {}


@pytest.mark.parametrize("base", [2, 0.5, -3, 1 - 2j])
def test_pow_with_a_scalar_base(base, device, fallbacks):
    b = torch.cat([_randn(400, scale=2), _randn(3, 2, seed=1).mT.reshape(-1)])
    expected = torch.pow(base, b)
    bound = _pow_bound(torch.tensor(base, dtype=torch.complex128), b.to(torch.complex128), expected)
    _assert_parts_close(torch.pow(base, b.to(device)), expected, bound)
    assert fallbacks() == {}


def test_pow_of_zero_base_and_special_values(device, fallbacks):
    a = torch.tensor([0, -0.0, 1e-30, 1, -1, 1j, math.inf, complex(math.nan, 0)], dtype=C64)
    for exponent in (2, 0.5, 1 + 1j, -1.5):
        expected = torch.pow(a, exponent)
        bound = _pow_bound(a, torch.tensor(exponent, dtype=torch.complex128), expected)
        actual = torch.pow(a.to(device), exponent)
        # glibc's special cases of cpowf: 0 ** b is 0 for Re b > 0 (cexpf(-inf + i y)).
        if isinstance(exponent, int) or (isinstance(exponent, complex) and exponent.real > 0) or exponent > 0:
            assert actual.cpu()[0] == 0
        finite = torch.isfinite(expected.real) & torch.isfinite(expected.imag) & (a != 0)
        # Infinite bases: the bound is NaN (inf times 0); the values must then be equal.
        _assert_parts_close(actual.cpu()[finite], expected[finite], bound[finite].nan_to_num(0.0))
    assert fallbacks() == {}


def test_pow_out_in_place_empty_and_backward(device, fallbacks):
    a = _randn(3, 4, seed=5)
    expected = torch.pow(a, 2.5)
    bound = _pow_bound(a, torch.tensor(2.5, dtype=torch.complex128), expected)
    out = torch.empty(0, dtype=C64, device=device)
    torch.pow(a.to(device), 2.5, out=out)
    _assert_parts_close(out, expected, bound)
    inplace = a.to(device)
    inplace.pow_(2.5)
    _assert_parts_close(inplace, expected, bound)
    assert torch.pow(a[:0].to(device), 2.5).shape == (0, 4)
    weight = _randn(3, 4, seed=6)
    grads = []
    for where in ("cpu", device):
        leaf = a.to(where).requires_grad_()
        total = (torch.pow(leaf, 2.5) * weight.to(where)).sum().real
        grads.append(torch.autograd.grad(total, leaf)[0].cpu())
    # 2.5 a^1.5 times the weight: pow's bound for exponent 1.5 plus two products' ulps.
    grad_bound = _pow_bound(a, torch.tensor(1.5, dtype=torch.complex128), grads[0]) * 2 + 4 * EPS * grads[0].abs()
    _assert_parts_close(grads[1], grads[0], grad_bound)
    assert fallbacks() == {}


def test_pow_of_two_tensors_takes_the_fallback(device, fallbacks):
    a, b = _randn(5, seed=7), _randn(5, seed=8)
    expected = torch.pow(a, b)
    actual = torch.pow(a.to(device), b.to(device))
    # The fallback is the CPU's kernel: the same values.
    assert torch.equal(actual.cpu(), expected)
    assert fallbacks() == {"aten::pow.Tensor_Tensor": 1}
