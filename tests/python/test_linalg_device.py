"""Linear algebra on the device (ops_linalg_*.py) against PyTorch's CPU (LAPACK): triangular
solves, LU with partial pivoting and what is built on it, Cholesky, Householder QR; batches,
broadcasting, empty and non-contiguous inputs, singular and non-positive-definite matrices
(info and errors), out=, backward and forward-mode AD; every float32 call without a CPU
fallback.

Tolerances come from the algorithms' backward-error bounds, not from one machine's output:
both sides solve a problem within about c n eps of the given one (c = 3 for LU and triangular
solves, Higham's gamma_3n, a little more for QR's reflectors), so their results differ by at
most twice that times the problem's condition number, relative to the result's size. The
condition numbers are computed in float64 on the CPU."""
import warnings

import pytest
import torch
import torch.autograd.forward_ad as fwAD


aten = torch.ops.aten
EPS = torch.finfo(torch.float32).eps


def _generator(seed=0):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=_generator(seed))


def _well_conditioned(*shape, seed=0):
    """Square matrices with a dominant diagonal: condition numbers of a few units."""
    n = shape[-1]
    return _randn(*shape, seed=seed) / n ** 0.5 + 3 * torch.eye(n)


def _triangular(*shape, upper, seed=0):
    a = _well_conditioned(*shape, seed=seed)
    return a.triu() if upper else a.tril()


def _spd(*shape, seed=0):
    a = _randn(*shape, seed=seed)
    return a @ a.mT / shape[-1] + torch.eye(shape[-1])


def _cond(a):
    if a.numel() == 0:
        return 1.0
    return torch.linalg.cond(a.double()).max().item()


def _close(actual, expected, cond=1.0, n=1, c=3.0):
    """|actual - expected| <= 2 c n eps cond max|expected| (plus a few ulps for tiny n)."""
    actual = actual.cpu()
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if not expected.dtype.is_floating_point:
        assert torch.equal(actual, expected)
        return
    if expected.numel() == 0:
        return
    scale = expected.abs().max().item() or 1.0
    bound = (2 * c * max(n, 1) * cond + 8) * EPS * scale
    torch.testing.assert_close(actual, expected, rtol=0, atol=bound, equal_nan=True)


def _both(fn, *inputs, device):
    """fn on the CPU and on device copies of ``inputs``."""
    moved = [t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs]
    return fn(*inputs), fn(*moved)


def _as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _same_error(fn, inputs, device):
    with pytest.raises(Exception) as on_cpu:
        fn(*inputs)
    with pytest.raises(type(on_cpu.value)) as on_device:
        fn(*[t.to(device) for t in inputs])
    assert str(on_device.value) == str(on_cpu.value)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("unitriangular", [False, True])
def test_solve_triangular_broadcasts_batches(upper, left, unitriangular, device, fallbacks):
    a = _triangular(3, 1, 5, 5, upper=upper)
    b = _randn(4, 5, 2, seed=1) if left else _randn(4, 2, 5, seed=1)
    expected, actual = _both(lambda a, b: torch.linalg.solve_triangular(
        a, b, upper=upper, left=left, unitriangular=unitriangular), a, b, device=device)
    assert actual.shape == (3, 4) + b.shape[-2:]
    assert actual.stride() == expected.stride()
    cond = _cond(a if not unitriangular else (a.triu(1) if upper else a.tril(-1)) + torch.eye(5))
    _close(actual, expected, cond, 5)
    assert fallbacks() == {}


@pytest.mark.parametrize("upper", [False, True])
def test_solve_triangular_over_several_panels(upper, device, fallbacks):
    # 70 rows: two full panels of 32 and a partial one, so the trailing GEMM runs.
    a = _triangular(2, 70, 70, upper=upper)
    b = _randn(2, 70, 3, seed=1)
    expected, actual = _both(lambda a, b: torch.linalg.solve_triangular(a, b, upper=upper), a, b, device=device)
    _close(actual, expected, _cond(a), 70)
    assert fallbacks() == {}


def test_solve_triangular_non_contiguous_empty_and_out(device, fallbacks):
    a = _triangular(4, 4, upper=True).mT  # lower, column-major
    b = _randn(3, 4, seed=1).mT
    expected, actual = _both(lambda a, b: torch.linalg.solve_triangular(a, b, upper=False), a, b, device=device)
    _close(actual, expected, _cond(a), 4)
    out = torch.empty(0, device=device)
    torch.linalg.solve_triangular(a.to(device), b.to(device), upper=False, out=out)
    _close(out, expected, _cond(a), 4)
    for shapes in (((0, 3, 3), (0, 3, 2)), ((3, 3), (3, 0)), ((0, 0), (0, 4))):
        empty_a, empty_b = torch.zeros(shapes[0]), torch.zeros(shapes[1])
        expected, actual = _both(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True), empty_a, empty_b,
                                 device=device)
        assert actual.shape == expected.shape
    assert fallbacks() == {}


def test_out_resize_warning_and_dtype_error_as_on_cpu(device):
    a, b = _triangular(3, 3, upper=True), _randn(3, 2, seed=1)
    with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        torch.linalg.solve_triangular(a.to(device), b.to(device), upper=True, out=torch.empty(2, device=device))
    _same_error(lambda a, b, out: torch.linalg.solve_triangular(a, b, upper=True, out=out),
                (a, b, torch.empty(0, dtype=torch.int32)), device)
    _same_error(lambda a, p, i: torch.linalg.lu_factor_ex(a, out=(torch.empty(0, device=a.device), p, i)),
                (_randn(3, 3), torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int32)), device)


@pytest.mark.parametrize("a_shape,b_shape,left", [((3, 4), (3, 2), True), ((3, 3), (4, 2), True),
                                                  ((3, 3), (3, 2), False), ((3, 3), (3,), True)])
def test_solve_triangular_errors_as_on_cpu(a_shape, b_shape, left, device):
    _same_error(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True, left=left),
                (torch.ones(a_shape), torch.ones(b_shape)), device)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_deprecated_triangular_solve(upper, transpose, device, fallbacks):
    a = _triangular(2, 4, 4, upper=upper)
    b = _randn(4, 3, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, actual = _both(lambda b, a: torch.triangular_solve(b, a, upper, transpose), b, a, device=device)
    _close(actual[0], expected[0], _cond(a), 4)
    _close(actual[1], expected[1])
    assert actual[0].stride() == expected[0].stride()
    assert fallbacks() == {}


@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (6, 4), (4, 7), (2, 70, 70), (40, 90), (0, 3, 3), (0, 0)])
def test_lu_factor_matches_lapack(shape, device, fallbacks):
    a = _randn(*shape)
    expected, actual = _both(torch.linalg.lu_factor_ex, a, device=device)
    # Random normal matrices have no near-ties in their pivot columns: LAPACK's choice.
    assert torch.equal(actual.pivots.cpu(), expected.pivots)
    assert torch.equal(actual.info.cpu(), expected.info)
    assert actual.LU.stride() == expected.LU.stride()
    k = min(shape[-2:])
    # P A = L U: the factors' error, relative to max|L||U|, is within gamma_k of the input's.
    _close(actual.LU, expected.LU, _cond(a[..., :k, :k]) if k else 1.0, k)
    assert fallbacks() == {}


def test_lu_factor_of_singular_matrices_gives_lapacks_info(device, fallbacks):
    a = torch.stack([torch.ones(4, 4),
                     torch.tensor([[1., 2, 3, 4], [2, 4, 6, 8], [0, 0, 1, 1], [1, 1, 1, 1]]),
                     torch.zeros(4, 4),
                     torch.eye(4)])
    expected, actual = _both(torch.linalg.lu_factor_ex, a, device=device)
    for got, want in zip(actual, expected):
        assert torch.equal(got.cpu(), want)
    assert fallbacks() == {}
    _same_error(lambda a: torch.linalg.lu_factor_ex(a, check_errors=True), (a,), device)
    _same_error(lambda a: torch.linalg.lu_factor(a), (a[1],), device)


def test_lu_factor_argument_errors_as_on_cpu(device):
    _same_error(torch.linalg.lu_factor_ex, (torch.ones(3),), device)


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("adjoint", [False, True])
def test_lu_solve_broadcasts(left, adjoint, device, fallbacks):
    a = _randn(3, 1, 6, 6)
    lu, pivots = torch.linalg.lu_factor(a)
    b = _randn(2, 6, 4, seed=1) if left else _randn(2, 4, 6, seed=1)
    expected, actual = _both(lambda lu, p, b: torch.linalg.lu_solve(lu, p, b, left=left, adjoint=adjoint),
                             lu, pivots, b, device=device)
    assert actual.stride() == expected.stride()
    _close(actual, expected, _cond(a), 6)
    assert fallbacks() == {}


def test_lu_solve_over_several_panels_and_out(device, fallbacks):
    a = _randn(70, 70)
    lu, pivots = torch.linalg.lu_factor(a)
    b = _randn(70, 2, seed=1)
    expected = torch.linalg.lu_solve(lu, pivots, b)
    out = torch.empty(0, device=device)
    torch.linalg.lu_solve(lu.to(device), pivots.to(device), b.to(device), out=out)
    _close(out, expected, _cond(a), 70)
    assert fallbacks() == {}


@pytest.mark.parametrize("shape", [(4, 4), (2, 5, 3), (3, 6), (0, 3, 3)])
@pytest.mark.parametrize("unpack_data,unpack_pivots", [(True, True), (False, True), (True, False)])
def test_lu_unpack(shape, unpack_data, unpack_pivots, device, fallbacks):
    lu, pivots = torch.linalg.lu_factor(_randn(*shape))
    expected, actual = _both(lambda lu, p: torch.lu_unpack(lu, p, unpack_data, unpack_pivots), lu, pivots,
                             device=device)
    for got, want in zip(actual, expected):
        assert torch.equal(got.cpu(), want)
    assert fallbacks() == {}


@pytest.mark.parametrize("shape", [(5, 5), (2, 4, 6), (7, 3)])
def test_linalg_lu(shape, device, fallbacks):
    a = _randn(*shape)
    expected, actual = _both(torch.linalg.lu, a, device=device)
    assert torch.equal(actual.P.cpu(), expected.P)
    k = min(shape[-2:])
    _close(actual.L, expected.L, _cond(a[..., :k, :k]), k)
    _close(actual.U, expected.U, _cond(a[..., :k, :k]), k)
    assert fallbacks() == {}


@pytest.mark.parametrize("contiguous", [True, False])
@pytest.mark.parametrize("b_shape", [(2, 5, 3), (5, 3), (2, 5), (5,)])
def test_solve(contiguous, b_shape, device, fallbacks):
    a = _randn(2, 5, 5)
    a = a if contiguous else a.mT.contiguous().mT
    b = _randn(*b_shape, seed=1)
    # A contiguous A is factored transposed (as PyTorch's kernel does): LU and pivots too.
    expected, actual = _both(lambda a, b: aten._linalg_solve_ex(a, b), a, b, device=device)
    _close(actual[0], expected[0], _cond(a), 5)
    _close(actual[1], expected[1], _cond(a), 5)
    assert torch.equal(actual[2].cpu(), expected[2]) and torch.equal(actual[3].cpu(), expected[3])
    assert fallbacks() == {}


def test_solve_of_a_singular_matrix_raises_as_on_cpu(device):
    a = torch.stack([torch.eye(3), torch.ones(3, 3)])
    _same_error(torch.linalg.solve, (a, torch.ones(2, 3, 1)), device)
    _same_error(torch.linalg.inv, (a,), device)


def test_inverse(device, fallbacks):
    a = _randn(3, 6, 6)
    expected, actual = _both(torch.linalg.inv_ex, a, device=device)
    _close(actual.inverse, expected.inverse, _cond(a), 6)
    assert torch.equal(actual.info.cpu(), expected.info)
    assert fallbacks() == {}


def test_det_and_slogdet(device, fallbacks):
    a = torch.cat([_randn(3, 5, 5), torch.ones(1, 5, 5)])
    expected, actual = _both(torch.linalg.det, a, device=device)
    # det is a product of n factors each within the LU's error: n gamma_3n relative to |det|.
    _close(actual[:3], expected[:3], _cond(a[:3]), 5 * 5)
    assert actual[3].item() == 0.0
    expected, actual = _both(torch.linalg.slogdet, a, device=device)
    assert torch.equal(actual.sign.cpu(), expected.sign)
    _close(actual.logabsdet[:3], expected.logabsdet[:3], _cond(a[:3]), 5 * 5)
    assert actual.logabsdet[3].item() == float("-inf")
    assert fallbacks() == {}


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (2, 70, 70), (0, 3, 3)])
def test_cholesky(upper, shape, device, fallbacks):
    a = _spd(*shape)
    expected, actual = _both(lambda a: torch.linalg.cholesky_ex(a, upper=upper), a, device=device)
    assert actual.L.stride() == expected.L.stride()
    # Cholesky is backward stable without pivoting: |dA| <= gamma_(n+1) |L||L^T|.
    _close(actual.L, expected.L, _cond(a) ** 0.5, shape[-1] + 1, c=1.0)
    assert torch.equal(actual.info.cpu(), expected.info)
    assert fallbacks() == {}


def test_cholesky_info_and_errors_of_non_positive_definite_matrices(device, fallbacks):
    a = torch.stack([torch.tensor([[1., 2], [2, 1]]), torch.eye(2), -torch.eye(2)])
    expected, actual = _both(torch.linalg.cholesky_ex, a, device=device)
    assert torch.equal(actual.info.cpu(), expected.info)
    assert fallbacks() == {}
    _same_error(torch.linalg.cholesky, (a,), device)
    _same_error(torch.linalg.cholesky, (a[0],), device)
    _same_error(lambda a: torch.linalg.cholesky_ex(a, check_errors=True), (a,), device)
    _same_error(torch.linalg.cholesky, (torch.ones(3, 4),), device)


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_inverse_and_deprecated_cholesky(upper, device, fallbacks):
    a = _spd(2, 5, 5)
    factor = torch.linalg.cholesky(a, upper=upper)
    b = _randn(2, 5, 3, seed=1)
    expected, actual = _both(lambda b, f: torch.cholesky_solve(b, f, upper=upper), b, factor, device=device)
    _close(actual, expected, _cond(a), 5)
    expected, actual = _both(lambda f: torch.cholesky_inverse(f, upper=upper), factor[0], device=device)
    _close(actual, expected, _cond(a[0]), 5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected, actual = _both(lambda a: torch.cholesky(a, upper=upper), a, device=device)
        _close(actual, expected, _cond(a) ** 0.5, 6, c=1.0)
        _same_error(torch.cholesky, (-torch.eye(3),), device)
    assert fallbacks() == {}


def test_cholesky_inverse_of_a_singular_factor_raises_as_on_cpu(device):
    _same_error(torch.cholesky_inverse, (torch.diag(torch.tensor([1., 2, 0])),), device)
    _same_error(torch.cholesky_inverse, (torch.eye(3).expand(2, 3, 3).tril(-1),), device)


# Householder QR: |dA| <= gamma(c m n) |A| with a small c (Higham, Theorem 19.4); R's rows and
# Q's columns are each determined up to that times the condition number.
QR_C = 6.0


@pytest.mark.parametrize("shape", [(5, 5), (2, 6, 4), (3, 7), (2, 40, 40), (140, 135), (0, 3, 3)])
def test_geqrf_householder_product_and_qr(shape, device, fallbacks):
    a = _randn(*shape)
    m, n = shape[-2:]
    cond = _cond(a)
    expected, actual = _both(torch.geqrf, a, device=device)
    _close(actual[0], expected[0], cond, m, c=QR_C)
    _close(actual[1], expected[1], cond, m, c=QR_C)
    if m >= n:
        expected, actual = _both(torch.linalg.householder_product, *expected, device=device)
        _close(actual, expected, cond, m, c=QR_C)
    for mode in ("reduced", "complete", "r"):
        expected, actual = _both(lambda a: torch.linalg.qr(a, mode), a, device=device)
        for got, want in zip(actual, expected):
            _close(got, want, cond, m, c=QR_C)
            assert got.stride() == want.stride() or got.numel() == 0
    assert fallbacks() == {}


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("m,n", [(6, 4), (50, 40)])
def test_ormqr_applies_q(left, transpose, m, n, device, fallbacks):
    reflectors, tau = torch.geqrf(_randn(2, m, n))
    c = _randn(2, m, 3, seed=1) if left else _randn(2, 3, m, seed=1)
    expected, actual = _both(lambda v, t, c: torch.ormqr(v, t, c, left, transpose), reflectors, tau, c,
                             device=device)
    # Q is orthogonal here: products with it are backward stable, condition 1.
    _close(actual, expected, 1.0, m, c=QR_C)
    assert fallbacks() == {}


def _grads(fn, inputs, device):
    """Gradients of sum(fn(inputs) * w) for fixed random w, on the CPU and the device."""
    results = []
    for where in ("cpu", device):
        leaves = [t.to(where).requires_grad_() for t in inputs]
        outputs = _as_tuple(fn(*leaves))
        weights = [_randn(*o.shape, seed=7 + i).to(where) for i, o in enumerate(outputs)]
        total = sum((o * w).sum() for o, w in zip(outputs, weights))
        results.append([g.cpu() for g in torch.autograd.grad(total, leaves)])
    return results


@pytest.mark.parametrize("name,fn,make", [
    ("solve_triangular", lambda a, b: torch.linalg.solve_triangular(a.triu(), b, upper=True),
     lambda: (_triangular(2, 4, 4, upper=True), _randn(2, 4, 3, seed=1))),
    ("solve", torch.linalg.solve, lambda: (_well_conditioned(2, 4, 4), _randn(2, 4, 3, seed=1))),
    ("lu_factor", lambda a: torch.linalg.lu_factor(a)[0], lambda: (_well_conditioned(4, 4),)),
    ("lu", lambda a: torch.linalg.lu(a)[1:], lambda: (_well_conditioned(4, 4),)),
    ("det", torch.linalg.det, lambda: (_well_conditioned(3, 4, 4),)),
    ("inv", torch.linalg.inv, lambda: (_well_conditioned(4, 4),)),
    ("cholesky", lambda a: torch.linalg.cholesky(a @ a.mT), lambda: (_well_conditioned(4, 4),)),
    ("qr", torch.linalg.qr, lambda: (_randn(5, 4) / 2 + 3 * torch.eye(5, 4),)),
])
def test_backward_through_autograds_formulas(name, fn, make, device, fallbacks):
    inputs = make()
    cpu_grads, device_grads = _grads(fn, inputs, device)
    cond = max(_cond(t) for t in inputs if t.shape[-1] == t.shape[-2] or name == "qr")
    for got, want in zip(device_grads, cpu_grads):
        # The formulas chain a few solves and products: a few times the forward bound each.
        _close(got, want, cond ** 2, 4, c=12.0)
    assert fallbacks() == {}


@pytest.mark.parametrize("dual", ["B", "LU", "both"])
def test_forward_ad_of_lu_solve_and_solve_triangular(dual, device, fallbacks):
    a = _well_conditioned(4, 4)
    lu, pivots = torch.linalg.lu_factor(a)
    b = _randn(4, 2, seed=1)
    tangents = (_randn(4, 4, seed=2), _randn(4, 2, seed=3))
    results = []
    for where in ("cpu", device):
        with fwAD.dual_level():
            lu_d = fwAD.make_dual(lu.to(where), tangents[0].to(where)) if dual != "B" else lu.to(where)
            b_d = fwAD.make_dual(b.to(where), tangents[1].to(where)) if dual != "LU" else b.to(where)
            x = fwAD.unpack_dual(torch.linalg.lu_solve(lu_d, pivots.to(where), b_d))
            y = fwAD.unpack_dual(torch.linalg.solve_triangular(lu_d, b_d, upper=True))
            results.append([t.cpu() for t in (x.primal, x.tangent, y.primal, y.tangent)])
    for got, want in zip(results[1], results[0]):
        _close(got, want, _cond(a) ** 2, 4, c=12.0)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.int32, torch.uint8])
def test_cross_broadcasts(dtype, device, fallbacks):
    a = (_randn(4, 1, 3) * 20).to(dtype)
    b = (_randn(1, 5, 3, seed=1) * 20).to(dtype)
    expected, actual = _both(torch.linalg.cross, a, b, device=device)
    # Each component is one difference of two products: two roundings, 2 ulps of the operands'.
    bound = 2 * EPS * (a.double().abs().max() * b.double().abs().max()).item() if dtype.is_floating_point else 0
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=bound)
    expected, actual = _both(lambda a, b: torch.linalg.cross(a, b, dim=1), a.mT.expand(4, 3, 5), b.mT, device=device)
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=bound)
    out = torch.empty(0, dtype=dtype, device=device)
    torch.linalg.cross(a.to(device), b.to(device), out=out)
    torch.testing.assert_close(out.cpu(), torch.linalg.cross(a, b), rtol=0, atol=bound)
    assert fallbacks() == {}
    _same_error(torch.linalg.cross, (torch.ones(2, 4), torch.ones(2, 4)), device)
    _same_error(torch.linalg.cross, (torch.ones(2, 3), torch.ones(3, 3)), device)


def test_results_are_deterministic(device):
    a = _randn(2, 40, 40).to(device)
    first = [t.cpu() for t in torch.linalg.lu_factor_ex(a)] + [torch.linalg.qr(a).R.cpu()]
    second = [t.cpu() for t in torch.linalg.lu_factor_ex(a)] + [torch.linalg.qr(a).R.cpu()]
    for x, y in zip(first, second):
        assert torch.equal(x, y)


def test_float64_goes_to_the_counted_fallback_and_half_fails_as_on_cpu(device, fallbacks):
    a = _well_conditioned(4, 4).double()
    expected, actual = _both(torch.linalg.lu_factor, a, device=device)
    assert torch.equal(actual[1].cpu(), expected[1])
    torch.testing.assert_close(actual[0].cpu(), expected[0])
    assert "aten::linalg_lu_factor_ex" in fallbacks()
    _same_error(lambda a, b: torch.linalg.solve_triangular(a, b, upper=True),
                (torch.eye(3).half(), torch.ones(3, 2).half()), device)
