"""complex64 on the device as pairs of float32: pointwise arithmetic and comparisons, sum/mean,
mm/bmm and the random fills against the CPU, with no fallback; complex128 stays on the counted
fallback.

Tolerances are error bounds in units of float32's unit roundoff U = 2^-24: a part computed with k
roundings is off by at most about k U times the magnitudes it is built from, on each device;
the bound used is the sum of the two sides' bounds."""
import math

import pytest
import torch

import torch_mimic
from kernel_launches import launches

DEVICE = torch_mimic.DEVICE_TYPE
C64 = torch.complex64
U = 2.0 ** -24


def _rand(*shape, seed=0):
    return torch.randn(*shape, dtype=C64, generator=torch.Generator().manual_seed(seed))


def _assert_within(actual, expected, bound):
    """|actual - expected| <= bound element by element (bound broadcasts; a NaN bound where the
    operands give NaN), dtypes and shapes equal; NaN and infinite parts must match exactly."""
    actual = actual.cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    a, e = actual.to(torch.complex128), expected.to(torch.complex128)
    special = torch.zeros(a.shape, dtype=torch.bool)
    for pa, pe in ((a.real, e.real), (a.imag, e.imag)) if a.is_complex() else ((a, e),):
        assert torch.equal(pa.isnan(), pe.isnan()), (actual, expected)
        assert torch.equal(pa[pa.isinf()], pe[pa.isinf()]), (actual, expected)
        special |= ~pe.isfinite()
    bound = torch.as_tensor(bound, dtype=torch.float64).expand(a.shape)
    within = (a - e).abs()[~special] <= bound[~special]
    assert bool(within.all()), (actual, expected)


@pytest.fixture(autouse=True)
def _no_fallback():
    torch_mimic.reset_fallback_report()
    yield


def _native():
    assert torch_mimic.fallback_report() == {}


def _magnitude(x):
    return x.abs().double() if isinstance(x, torch.Tensor) else abs(x)


# name, function, error bound from the operands' magnitudes (both sides' roundings)
_BINARY = [
    ("add", torch.add, lambda a, b: 2 * U * (a + b)),
    ("sub", torch.sub, lambda a, b: 2 * U * (a + b)),
    ("mul", torch.mul, lambda a, b: 8 * U * a * b),
    ("div", torch.div, lambda a, b: 32 * U * a / b),
]


def _operands(kind):
    a, b = _rand(3, 4, seed=1), _rand(4, seed=2)
    if kind == "complex-complex":
        return a, b
    if kind == "complex-real":
        return a, b.real.contiguous()
    if kind == "real-complex":
        return a.real.contiguous(), b
    if kind == "complex-scalar":
        return a, 1.5 - 0.25j
    if kind == "complex-float-scalar":
        return a, -2.5
    if kind == "real-complex-scalar":
        return a.real.contiguous(), 0.5 + 2j
    raise AssertionError(kind)


@pytest.mark.parametrize("name,fn,bound", _BINARY, ids=[b[0] for b in _BINARY])
@pytest.mark.parametrize("kind", ["complex-complex", "complex-real", "real-complex",
                                  "complex-scalar", "complex-float-scalar",
                                  "real-complex-scalar"])
def test_binary_ops_broadcast_promote_and_take_scalars(name, fn, bound, kind):
    a, b = _operands(kind)
    on_device = [x.to(DEVICE) if isinstance(x, torch.Tensor) else x for x in (a, b)]
    before = launches()
    result = fn(*on_device)
    assert launches() - before == 1
    _assert_within(result, fn(a, b), bound(_magnitude(a), _magnitude(b)))
    _native()


@pytest.mark.parametrize("name,fn,bound", _BINARY, ids=[b[0] for b in _BINARY])
def test_binary_ops_read_conjugate_and_strided_views(name, fn, bound):
    a, b = _rand(4, 6, seed=3), _rand(6, 4, seed=4)
    da, db = a.to(DEVICE), b.to(DEVICE)
    expected = fn(a.conj(), b.t())
    result = fn(da.conj(), db.t())
    assert da.conj().is_conj()
    _assert_within(result, expected, bound(a.abs().double(), b.t().abs().double()))
    _assert_within(fn(da[:, ::2], db.t()[:, 1::2]), fn(a[:, ::2], b.t()[:, 1::2]),
                   bound(a[:, ::2].abs().double(), b.t()[:, 1::2].abs().double()))
    _native()


@pytest.mark.parametrize("fn", [torch.add, torch.sub])
def test_alpha_scales_other_as_a_complex_product(fn):
    a, b = _rand(5, seed=5), _rand(5, seed=6)
    alpha = 0.5 - 1.5j
    bound = 2 * U * (a.abs() + 4 * abs(alpha) * b.abs()).double()
    _assert_within(fn(a.to(DEVICE), b.to(DEVICE), alpha=alpha), fn(a, b, alpha=alpha), bound)
    _assert_within(fn(a.to(DEVICE), b.to(DEVICE), alpha=2), fn(a, b, alpha=2), 0)
    _native()


def test_in_place_and_out_variants():
    a, b = _rand(3, 4, seed=7), _rand(4, seed=8)
    x = a.to(DEVICE)
    x.add_(b.to(DEVICE))
    _assert_within(x, a + b, 0)
    x.mul_(2j)
    _assert_within(x, (a + b) * 2j, 0)
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.sub(a.to(DEVICE), b.to(DEVICE), out=out)
    _assert_within(out, a - b, 0)
    eq = torch.empty(0, dtype=torch.bool, device=DEVICE)
    torch.eq(a.to(DEVICE), a.conj().to(DEVICE), out=eq)
    assert torch.equal(eq.cpu(), a == a.conj())
    _native()


def test_complex_result_in_a_real_tensor_raises_as_on_the_cpu():
    real = torch.ones(3)
    with pytest.raises(RuntimeError) as cpu:
        real.add_(torch.ones(3, dtype=C64))
    with pytest.raises(RuntimeError) as device:
        real.to(DEVICE).add_(torch.ones(3, dtype=C64, device=DEVICE))
    assert str(device.value) == str(cpu.value)


def test_empty_operands_give_empty_results_without_launches():
    a = torch.empty(0, 3, dtype=C64, device=DEVICE)
    before = launches()
    assert (a * a).shape == (0, 3) and (a + 1j).dtype == C64
    assert launches() == before
    _native()


_UNARY = [
    ("neg", torch.neg, lambda z: 0 * z),
    ("reciprocal", torch.reciprocal, lambda z: 32 * U / z),
    ("exp", torch.exp, lambda z: 64 * U * z.exp().abs()),  # transcendental parts: a few ulps
    ("sgn", torch.sgn, lambda z: 16 * U * torch.ones_like(z.real)),
    ("abs", torch.abs, lambda z: 8 * U * z.abs()),
]


@pytest.mark.parametrize("name,fn,bound", _UNARY, ids=[u[0] for u in _UNARY])
def test_unary_ops(name, fn, bound):
    z = _rand(4, 5, seed=9)
    z[0, 0] = 0
    bounds = bound(z.to(torch.complex128)).abs()
    _assert_within(fn(z.to(DEVICE)), fn(z), bounds)
    _assert_within(fn(z.to(DEVICE).conj()), fn(z.conj()), bounds)
    _native()


def test_abs_is_hypot_for_large_and_special_values():
    z = torch.tensor([3e30 + 4e30j, 0j, complex(math.inf, 1), 1e-30 + 1e-30j], dtype=C64)
    _assert_within(z.to(DEVICE).abs(), z.abs(), 8 * U * z.abs().double())
    _native()


def test_comparisons_and_isnan():
    a = _rand(6, seed=10)
    b = a.clone()
    b[1] = b[1].conj()
    b[2] = complex(math.nan, 0)
    da, db = a.to(DEVICE), b.to(DEVICE)
    assert torch.equal((da == db).cpu(), a == b)
    assert torch.equal((da != db).cpu(), a != b)
    assert torch.equal((da == a[3].item()).cpu(), a == a[3].item())
    assert torch.equal(db.isnan().cpu(), b.isnan())
    _native()


def test_logical_ops_read_either_part_as_true():
    a = torch.tensor([1j, 0j, 2 + 0j, 0j, complex(0, math.nan), -0.0 + 0j])
    b = torch.tensor([1j, 1j, 0j, 0j, 0j, 3j])
    da, db = a.to(DEVICE), b.to(DEVICE)
    for fn in (torch.logical_and, torch.logical_or, torch.logical_xor):
        assert torch.equal(fn(da, db).cpu(), fn(a, b)), fn
        assert torch.equal(fn(da, db.real).cpu(), fn(a, b.real)), fn
    assert torch.equal(torch.logical_not(da).cpu(), torch.logical_not(a))
    _native()


def test_where_masked_fill_fill_and_zeros():
    a, b = _rand(3, 4, seed=11), _rand(4, seed=12)
    cond = torch.tensor([True, False, True, False])
    _assert_within(torch.where(cond.to(DEVICE), a.to(DEVICE), b.to(DEVICE)),
                   torch.where(cond, a, b), 0)
    x = a.to(DEVICE)
    x.masked_fill_(cond.to(DEVICE), 2 - 3j)
    _assert_within(x, a.masked_fill(cond, 2 - 3j), 0)
    _assert_within(torch.full((2, 3), 1 + 2j, device=DEVICE), torch.full((2, 3), 1 + 2j), 0)
    _assert_within(torch.zeros(2, 3, dtype=C64, device=DEVICE), torch.zeros(2, 3, dtype=C64), 0)
    _native()


def _sum_bound(x, dims):
    terms = 1
    for d in dims:
        terms *= x.shape[d]
    return 2 * terms * U * x.abs().double().sum(dims) * math.sqrt(2)


@pytest.mark.parametrize("dims,keepdim", [((1,), False), ((0, 2), True), ((0, 1, 2), False)])
def test_sum_and_mean(dims, keepdim):
    x = _rand(4, 5, 6, seed=13)
    d = x.to(DEVICE)
    before = launches()
    result = d.sum(dims, keepdim=keepdim)
    assert launches() - before == 1
    bound = _sum_bound(x, dims)
    if keepdim:
        bound = bound.reshape(result.shape)
    _assert_within(result, x.sum(dims, keepdim=keepdim), bound)
    count = math.prod(x.shape[k] for k in dims)
    _assert_within(d.mean(dims, keepdim=keepdim), x.mean(dims, keepdim=keepdim), bound / count)
    _assert_within(d.conj().sum(dims, keepdim=keepdim), x.conj().sum(dims, keepdim=keepdim), bound)
    _assert_within(d.transpose(0, 2).sum(0), x.transpose(0, 2).sum(0), _sum_bound(x, (2,)).t())
    _native()


def test_sum_out_full_and_empty():
    x = _rand(3, 4, seed=14)
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.sum(x.to(DEVICE), 0, out=out)
    _assert_within(out, x.sum(0), _sum_bound(x, (0,)))
    _assert_within(x.to(DEVICE).sum(), x.sum(), _sum_bound(x, (0, 1)))
    empty = torch.empty(0, 3, dtype=C64)
    _assert_within(empty.to(DEVICE).sum(0), empty.sum(0), 0)
    _native()


def _prod_bound(x, dim):
    """Each of the n - 1 complex multiplies of a product rounds within 8 u of its magnitude
    (the multiply's bound above), so the product is within (1 + 8u)^(n - 1) - 1 of the product
    of the magnitudes, whatever order the device multiplies in."""
    return ((1 + 8 * U) ** max(x.shape[dim] - 1, 0) - 1) * x.abs().double().prod(dim)


@pytest.mark.parametrize("shape,dim", [((4, 7, 6), 1), ((9,), 0), ((3, 1), 1), ((2, 16), 1)])
def test_prod_multiplies_by_halves_on_the_device(shape, dim):
    x = _rand(*shape, seed=15)
    exact = x.to(torch.complex128).prod(dim)
    bound = _prod_bound(x, dim)
    _assert_within(x.to(DEVICE).prod(dim).to(torch.complex128), exact, bound)
    _assert_within(x.to(DEVICE).prod(dim, keepdim=True).to(torch.complex128),
                   exact.unsqueeze(dim), bound.unsqueeze(dim))
    _native()


def test_prod_of_all_elements_out_and_empty():
    x = _rand(3, 5, seed=16)
    exact = x.to(torch.complex128).prod()
    bound = ((1 + 8 * U) ** (x.numel() - 1) - 1) * x.abs().double().prod()
    _assert_within(x.to(DEVICE).prod().to(torch.complex128), exact, bound)
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.prod(x.to(DEVICE), 0, out=out)
    _assert_within(out.to(torch.complex128), x.to(torch.complex128).prod(0), _prod_bound(x, 0))
    empty = torch.empty(0, 3, dtype=C64)
    _assert_within(empty.to(DEVICE).prod(0), empty.prod(0), 0)
    _native()


@pytest.mark.parametrize("dims,correction,keepdim", [((1,), 1, False), ((0, 2), 0, True),
                                                      ((0, 1, 2), 1, False)])
def test_var_and_std_are_their_parts_variances(dims, correction, keepdim):
    """var(z) = var(re) + var(im), real. Two-pass float32 variance of n terms is within
    (2n + 8) u of the sum of squares it divides (Chan, Golub and LeVeque's bound, whose
    condition-number term is below u for these normal samples); std within half that, relative."""
    x = _rand(4, 5, 6, seed=17)
    d = x.to(DEVICE)
    count = math.prod(x.shape[k] for k in dims)
    kwargs = dict(dim=dims, correction=correction, keepdim=keepdim)
    exact_var, exact_mean = torch.var_mean(x.to(torch.complex128), **kwargs)
    bound = (2 * count + 8) * U * exact_var
    var, mean = torch.var_mean(d, **kwargs)
    _assert_within(var.double(), exact_var, bound)
    _assert_within(mean.to(torch.complex128), exact_mean,
                   _sum_bound(x, dims).reshape(exact_mean.shape) / count)
    _assert_within(torch.std(d, **kwargs).double(), exact_var.sqrt(), bound / exact_var.sqrt())
    _assert_within(torch.var(d.conj(), **kwargs).double(), exact_var, bound)
    _native()


def _gemm_bound(a, b):
    depth = a.shape[-1]
    return 2 * (2 * depth + 2) * U * (a.abs().double() @ b.abs().double())


@pytest.mark.parametrize("conj_a,conj_b", [(False, False), (True, False), (False, True)])
def test_mm_is_four_float_gemms(conj_a, conj_b):
    a, b = _rand(7, 9, seed=15), _rand(9, 5, seed=16)
    da, db = a.to(DEVICE), b.to(DEVICE)
    if conj_a:
        a, da = a.conj(), da.conj()
    if conj_b:
        b, db = b.conj(), db.conj()
    before = launches()
    result = da @ db
    assert launches() - before == 4
    _assert_within(result, a @ b, _gemm_bound(a, b))
    _native()


def test_bmm_matmul_mh_and_out():
    a, b = _rand(3, 4, 6, seed=17), _rand(3, 6, 2, seed=18)
    da, db = a.to(DEVICE), b.to(DEVICE)
    _assert_within(torch.bmm(da, db), torch.bmm(a, b), _gemm_bound(a, b))
    _assert_within(da @ da.mH, a @ a.mH, _gemm_bound(a, a.mH))
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.mm(da[0], db[0], out=out)
    _assert_within(out, a[0] @ b[0], _gemm_bound(a[0], b[0]))
    _native()


@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.5, 2.0), (0, 1)])
def test_baddbmm_adds_the_scaled_products(beta, alpha):
    c, a, b = _rand(2, 3, 5, seed=18), _rand(2, 3, 4, seed=19), _rand(2, 4, 5, seed=20)
    product = a.abs().double() @ b.abs().double()
    bound = abs(alpha) * _gemm_bound(a, b) + 4 * U * (abs(beta) * c.abs().double() +
                                                       abs(alpha) * product)
    result = torch.baddbmm(c.to(DEVICE), a.to(DEVICE), b.to(DEVICE), beta=beta, alpha=alpha)
    # The exact value, not the CPU's: 1.13's complex CPU baddbmm with beta = 0 sometimes gives
    # NaN (from self when it holds NaN, and from finite operands in one CI run).
    wide = torch.complex128
    exact = beta * c.to(wide) + alpha * (a.to(wide) @ b.to(wide))
    _assert_within(result.to(wide), exact, bound)
    _native()


def test_randn_and_rand_fill_the_pairs_as_the_cpu_does():
    n = 40000
    z = torch.randn(n, dtype=C64, device=DEVICE)
    u = torch.rand(n, dtype=C64, device=DEVICE)
    g = torch.empty(n, dtype=C64, device=DEVICE).normal_(2.0, 3.0)
    _native()
    z, u, g = z.cpu(), u.cpu(), g.cpu()
    # Standard errors: mean sigma/sqrt(n), variance about sigma^2 sqrt(2/n); 6 of them.
    for part in (z.real, z.imag):
        assert abs(part.mean()) < 6 * math.sqrt(0.5 / n)
        assert abs(part.var() - 0.5) < 6 * 0.5 * math.sqrt(2 / n)
    for part in (g.real, g.imag):
        assert abs(part.mean() - 2) < 6 * math.sqrt(4.5 / n)
        assert abs(part.var() - 4.5) < 6 * 4.5 * math.sqrt(2 / n)
    for part in (u.real, u.imag):
        assert part.min() >= 0 and part.max() < 1
        assert abs(part.mean() - 0.5) < 6 * math.sqrt(1 / 12 / n)
    assert abs(torch.corrcoef(torch.stack([z.real, z.imag]))[0, 1]) < 6 / math.sqrt(n)


def test_complex128_stays_on_the_counted_fallback():
    a = torch.ones(3, dtype=torch.complex128)
    assert torch.equal((a.to(DEVICE) * 2j).cpu(), a * 2j)
    assert torch_mimic.fallback_report() == {"aten::mul.Tensor": 1}


@pytest.mark.parametrize("start,end,steps", [(1 + 1j, 10 + 5j, 50), (-100, 100, 401), (2, 0, 3),
                                             (1j, 2, 1), (0, 1, 0)])
def test_linspace_writes_both_parts_in_one_launch(start, end, steps):
    before = launches()
    result = torch.linspace(start, end, steps, dtype=C64, device=DEVICE)
    assert launches() - before == (1 if steps else 0)
    expected = torch.linspace(start, end, steps, dtype=C64)
    # One rounding each of the step's product and sum: the CPU's vector loop adds the step to
    # the first element of each vector instead, an ulp of the largest end apart.
    _assert_within(result, expected, 4 * U * max(abs(start), abs(end)))
    _native()


def test_linspace_into_strided_out():
    out = torch.zeros(2, 3, dtype=C64, device=DEVICE)
    torch.linspace(0, 3 + 3j, 4, out=out.narrow(1, 1, 2))
    expected = torch.zeros(2, 3, dtype=C64)
    torch.linspace(0, 3 + 3j, 4, out=expected.narrow(1, 1, 2))
    _assert_within(out, expected, 0)
    _native()


def test_addmm_linear_and_mv():
    a, b, bias, v = _rand(4, 6, seed=19), _rand(6, 3, seed=20), _rand(3, seed=21), _rand(6, seed=22)
    da, db, dbias, dv = (t.to(DEVICE) for t in (a, b, bias, v))
    bound = _gemm_bound(a, b) + 4 * U * bias.abs().double()
    _assert_within(torch.addmm(dbias, da, db, beta=2, alpha=-0.5),
                   torch.addmm(bias, a, b, beta=2, alpha=-0.5), 2 * bound)
    _assert_within(torch.nn.functional.linear(da, db.t(), dbias),
                   torch.nn.functional.linear(a, b.t(), bias), bound)
    _assert_within(da @ dv, a @ v, _gemm_bound(a, v.unsqueeze(1)).squeeze(1))
    _native()


def test_dot_and_vdot_against_sums_of_products():
    # The host's libtorch 1.13 CPU dot/vdot of complex vectors return 0 (its BLAS call), so the
    # reference is the sum of the products, computed in complex128.
    a, b = _rand(33, seed=23), _rand(33, seed=24)
    da, db = a.to(DEVICE), b.to(DEVICE)
    wide_a, wide_b = a.to(torch.complex128), b.to(torch.complex128)
    bound = 2 * (2 * 33 + 2) * U * (a.abs().double() @ b.abs().double())
    _assert_within(torch.dot(da, db).to(torch.complex128), (wide_a * wide_b).sum(), bound)
    _assert_within(torch.vdot(da, db).to(torch.complex128), (wide_a.conj() * wide_b).sum(), bound)
    _assert_within(torch.vdot(da.conj(), db).to(torch.complex128), (wide_a * wide_b).sum(), bound)
    _native()


def test_conj_physical_functional_out_and_in_place():
    x = _rand(3, 4, seed=25)
    d = x.to(DEVICE)
    _assert_within(torch.conj_physical(d), torch.conj_physical(x), 0)
    _assert_within(torch.conj_physical(d.conj()), torch.conj_physical(x.conj()), 0)
    _assert_within(torch.conj_physical(d.t()), torch.conj_physical(x.t()), 0)
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.conj_physical(d, out=out)
    _assert_within(out, x.conj_physical(), 0)
    d.conj_physical_()
    _assert_within(d, x.conj_physical(), 0)
    _native()


def test_angle_is_atan2_of_the_parts_with_signed_zeros():
    z = _rand(2000, seed=26) * 3
    special = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0), complex(-3, -0.0),
               1j, -1j, 1 + 1j, -1 - 1j, complex(math.nan, 1)]
    z[:len(special)] = torch.tensor(special, dtype=C64)
    d = z.to(DEVICE)
    before = launches()
    result = d.angle()
    assert launches() - before == 1
    # Cephes' atanf is within 2 ulps; the octant's pi - r adds one of pi.
    bound = 4 * U * (z.angle().abs().double() + math.pi)
    _assert_within(result, z.angle(), bound)
    assert torch.equal(result.cpu()[:4].signbit(), z.angle()[:4].signbit())
    _assert_within(d.conj().angle(), z.conj().angle(), bound)
    out = torch.empty(0, device=DEVICE)
    torch.angle(d, out=out)
    _assert_within(out, z.angle(), bound)
    real = torch.tensor([-1.0, 0.0, 2.0, math.nan, -0.5])
    _assert_within(real.to(DEVICE).angle(), real.angle(), 0)
    _native()


def test_complex_and_polar_build_pairs_from_float_tensors():
    r, i = torch.randn(3, 4), torch.randn(4)
    dr, di = r.to(DEVICE), i.to(DEVICE)
    _assert_within(torch.complex(dr, di), torch.complex(r, i), 0)
    # cos and sin of the device within a few ulps of 1, times |r|.
    _assert_within(torch.polar(dr.abs(), di), torch.polar(r.abs(), i), 8 * U * r.abs().double())
    out = torch.empty(0, dtype=C64, device=DEVICE)
    torch.complex(di, dr, out=out)
    _assert_within(out, torch.complex(i, r), 0)
    _native()
    with pytest.raises(RuntimeError, match="Expected object of scalar type Float"):
        torch.complex(dr, di.double())
