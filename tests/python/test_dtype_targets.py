"""The per-dtype OpInfo targets' pieces, against PyTorch's CPU:

- the conformance runner's comparison rule (tests/conformance/opinfo_checks.py): results judged
  by their own dtype's tolerances, and a device result that differs from the CPU's passing only
  if it is as accurate as the CPU's against a float64 reference;
- avg_pool2d of int64 and arange of integer dtypes as PyTorch's CPU kernels compute them;
- the binary math of ops_binary_math.py over float, half, integer and bool dtypes, special
  values, errors, out= and in-place variants, and backward;
- complex64 on the device: logspace, the ops linear over the reals taken by float32 halves
  (tril, flip, roll, unfold/fold, cumsum, eye, norms, nonzero) and indexing moving raw words
  or adding halves (index_select, gather, scatter, index_add, index_put, take, put_,
  masked_scatter_), with no CPU fallback.

Tolerances: ops that move or select values, integer results and the halves' adds of one
addend per element must match exactly; float results follow the error bounds named where they
are compared (assert_close's float32 defaults, about 10 ulps, cover one rounding of a few
correctly rounded float32 steps)."""
import math
import os
import sys

import pytest
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "conformance"))
from opinfo_checks import compare_leaves, within_reference_bound  # noqa: E402

C64 = torch.complex64


def _both(fn, *args, device):
    """fn on the CPU and on the device copies of args (CPU result, device result on the CPU)."""
    moved = [a.to(device) if isinstance(a, torch.Tensor) else a for a in args]
    return fn(*args), fn(*moved).cpu()


def _complex(*shape, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return torch.complex(torch.randn(*shape, generator=generator),
                         torch.randn(*shape, generator=generator))


# --- the comparison rule ---------------------------------------------------------------------


def test_float_results_of_integer_inputs_take_their_own_dtype_tolerances():
    expected = torch.tensor([1.0, 2.0])
    actual = expected + expected * 2.0 ** -23  # one float32 ulp away
    compare_leaves(actual, expected, atol=0.0, rtol=0.0)  # an int64 sample's own tolerances
    with pytest.raises(AssertionError):
        compare_leaves(torch.tensor([1, 3]), torch.tensor([1, 2]), atol=0.0, rtol=0.0)


def test_a_device_result_closer_to_float64_than_the_cpus_passes():
    reference = torch.tensor([0.1234567, 7.654321], dtype=torch.float64)
    rounded = reference.to(torch.bfloat16)
    cpu = (rounded.double() + torch.tensor([0.125, 0.25], dtype=torch.float64)).to(torch.bfloat16)
    assert within_reference_bound(rounded, cpu, reference, atol=1e-5, rtol=1.6e-2)


def test_a_device_result_farther_from_float64_than_the_cpus_fails():
    reference = torch.tensor([1.0, 2.0], dtype=torch.float64)
    cpu = reference.to(torch.float32)
    device = cpu + torch.tensor([0.0, 0.01])  # beyond the CPU's error plus the float32 bound
    assert not within_reference_bound(device, cpu, reference, atol=1e-5, rtol=1.3e-6)
    nan = torch.tensor([1.0, float("nan")])
    assert not within_reference_bound(nan, cpu, reference, atol=1e-5, rtol=1.3e-6)


def test_integer_results_must_equal_the_cpus_whatever_the_reference():
    reference = (torch.tensor([1.0], dtype=torch.float64), torch.tensor([3]))
    assert not within_reference_bound((torch.tensor([1.0]), torch.tensor([2])),
                                      (torch.tensor([1.0]), torch.tensor([3])), reference,
                                      atol=1e-5, rtol=1.3e-6)


# --- avg_pool2d of int64, arange of integer dtypes -----------------------------------------


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2), dict(kernel_size=3, stride=2, ceil_mode=True),
    dict(kernel_size=3, padding=1, count_include_pad=False), dict(kernel_size=2, divisor_override=3),
])
def test_avg_pool2d_int64_truncates_as_the_cpu(device, fallbacks, kwargs):
    x = torch.randint(-9, 10, (2, 3, 7, 6), generator=torch.Generator().manual_seed(1))
    expected, actual = _both(lambda t: F.avg_pool2d(t, **kwargs), x, device=device)
    assert torch.equal(actual, expected)
    assert not fallbacks()


def test_avg_pool2d_int32_raises_the_cpus_error(device):
    with pytest.raises(RuntimeError, match="\"avg_pool2d\" not implemented for 'Int'"):
        F.avg_pool2d(torch.ones(1, 1, 2, 2, dtype=torch.int32, device=device), 2)


@pytest.mark.parametrize("dtype", [torch.int64, torch.int32, torch.uint8])
@pytest.mark.parametrize("bounds", [(1.0, 5.0 + 1e-6, 2.0), (-1, 2, 2), (-0.9, 3.1, 1.0),
                                    (2, -3, -1), (0, 10, 3)])
def test_integer_arange_converts_its_bounds_as_the_cpu(device, dtype, bounds):
    expected = torch.arange(*bounds, dtype=dtype)
    actual = torch.arange(*bounds, dtype=dtype, device=device).cpu()
    assert torch.equal(actual, expected)


# --- binary math -----------------------------------------------------------------------------

_SPECIAL = torch.tensor([0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), -float("inf"), 3e-5])
_OTHER = torch.tensor([-0.0, 0.0, -1.0, float("nan"), 2.0, -3.0, 0.5, 1e-7])


@pytest.mark.parametrize("fn", [torch.atan2, torch.copysign, torch.fmax, torch.fmin, torch.xlogy,
                                torch.special.xlog1py, torch.heaviside])
def test_binary_math_special_values(device, fallbacks, fn):
    expected, actual = _both(fn, _SPECIAL, _OTHER, device=device)
    torch.testing.assert_close(actual, expected, equal_nan=True)
    assert not fallbacks()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64,
                                   torch.int32, torch.uint8, torch.bool])
@pytest.mark.parametrize("fn", [torch.atan2, torch.copysign, torch.fmax, torch.fmin, torch.xlogy,
                                torch.special.xlog1py, torch.heaviside, torch.rsub])
def test_binary_math_over_dtypes_and_broadcasts(device, fallbacks, dtype, fn):
    if fn is torch.rsub and dtype == torch.bool:
        pytest.skip("rsub of bool tensors raises on the CPU (checked in the error test)")
    if fn is torch.atan2 and dtype == torch.float16:
        pytest.skip("atan2 of float16 raises on the CPU (checked in the error test)")
    generator = torch.Generator().manual_seed(2)
    a = torch.randint(0 if dtype in (torch.uint8, torch.bool) else -5, 6, (4, 1, 5),
                      generator=generator).to(dtype)
    b = torch.randint(0 if dtype in (torch.uint8, torch.bool) else -5, 6, (3, 1),
                      generator=generator).to(dtype)
    expected, actual = _both(fn, a, b, device=device)
    torch.testing.assert_close(actual, expected, equal_nan=True)
    assert not fallbacks()


@pytest.mark.parametrize("dtype, width", [(torch.int64, 64), (torch.int32, 32), (torch.uint8, 8)])
@pytest.mark.parametrize("fn", [torch.bitwise_left_shift, torch.bitwise_right_shift])
def test_bitwise_shifts_as_the_cpus_scalar_loop(device, fallbacks, dtype, width, fn):
    generator = torch.Generator().manual_seed(3)
    low, high = (0, 256) if dtype == torch.uint8 else (-2 ** (width - 2), 2 ** (width - 2))
    a = torch.randint(low, high, (200,), generator=generator, dtype=torch.int64).to(dtype)
    a[:4] = torch.tensor([0, 1, 255 if dtype == torch.uint8 else -1, 7]).to(dtype)
    counts = (0, 255) if dtype == torch.uint8 else (-70, 70)  # beyond the width too
    b = torch.randint(*counts, (200,), generator=generator).to(dtype)
    # The CPU's scalar loop, one element at a time, defines out-of-range counts (x86 masks them).
    expected = torch.stack([fn(x, y) for x, y in zip(a, b)])
    assert torch.equal(fn(a.to(device), b.to(device)).cpu(), expected)
    assert not fallbacks()
    with pytest.raises(RuntimeError, match="not implemented for 'Float'"):
        fn(torch.ones(2, device=device), torch.ones(2, device=device))


def test_binary_math_out_and_in_place(device):
    a, b = torch.randn(3, 4), torch.randn(4)
    for name in ("atan2", "copysign", "xlogy", "heaviside"):
        expected = getattr(a.clone(), name + "_")(b)
        actual = getattr(a.to(device), name + "_")(b.to(device)).cpu()
        torch.testing.assert_close(actual, expected, equal_nan=True)
    for fn in (torch.atan2, torch.fmax, torch.special.xlog1py):
        out = torch.empty(0, device=device)
        fn(a.to(device), b.to(device), out=out)
        torch.testing.assert_close(out.cpu(), fn(a, b), equal_nan=True)
    scalar = torch.xlogy(2.0, a.abs().to(device)).cpu()
    torch.testing.assert_close(scalar, torch.xlogy(2.0, a.abs()))


def test_hardtanh_and_its_backward(device, fallbacks):
    x = torch.linspace(-3, 3, 25)
    expected, actual = _both(lambda t: F.hardtanh(t, -1.5, 2.0), x, device=device)
    assert torch.equal(actual, expected)
    ints = torch.arange(-4, 5)
    expected, actual = _both(lambda t: F.hardtanh(t, -1.5, 2.9), ints, device=device)
    assert torch.equal(actual, expected)  # integer bounds truncate to -1 and 2
    for where in ("cpu", device):
        leaf = x.to(where).detach().requires_grad_()
        F.relu6(leaf * 3).sum().backward()
        if where == "cpu":
            expected = leaf.grad
        else:
            assert torch.equal(leaf.grad.cpu(), expected)
    assert not fallbacks()


@pytest.mark.parametrize("call, message", [
    (lambda d: torch.heaviside(torch.ones(2, device=d), torch.ones(2, dtype=torch.int64, device=d)),
     "heaviside is not yet implemented for tensors with different dtypes"),
    (lambda d: torch.atan2(torch.ones(2, dtype=torch.float16, device=d), torch.ones(2, device=d).half()),
     "\"atan2_cpu\" not implemented for 'Half'"),
    (lambda d: F.hardtanh(torch.ones(2, dtype=torch.float16, device=d)),
     "\"clamp_scalar_cpu\" not implemented for 'Half'"),
    (lambda d: F.hardtanh(torch.ones(2, dtype=torch.bool, device=d)),
     "Bool inputs not supported for hardtanh"),
    (lambda d: F.hardtanh(torch.ones(2, dtype=torch.uint8, device=d), -1.0, 1.0),
     "cannot do hardtanh on an unsigned type with negative limits"),
    (lambda d: torch.rsub(torch.ones(2, dtype=torch.bool, device=d),
                          torch.ones(2, dtype=torch.bool, device=d)),
     "Subtraction, the `-` operator, with two bool tensors is not supported"),
])
def test_binary_math_errors_as_the_cpu(device, call, message):
    for where in ("cpu", device):
        with pytest.raises(RuntimeError, match=message):
            call(where)


def test_binary_math_backward(device, fallbacks):
    a, b = torch.rand(3, 4) + 0.5, torch.rand(4) + 0.5
    grads = []
    for where in ("cpu", device):
        x, y = a.to(where).detach().requires_grad_(), b.to(where).detach().requires_grad_()
        (torch.atan2(x, y) + torch.xlogy(x, y) + torch.copysign(x, -y)).sum().backward()
        grads.append((x.grad.cpu(), y.grad.cpu()))
    torch.testing.assert_close(grads[1], grads[0])


# --- complex64 ---------------------------------------------------------------------------------


@pytest.mark.parametrize("start, end, steps, base", [
    (-2.0, 4.3, 4, 10.0), (1, -3, 5, 1.1), (1 + 2j, 3 - 1j, 7, 2.0), (0.5j, 2, 1, 3.0), (0, 1, 0, 2.0),
])
def test_complex_logspace(device, fallbacks, start, end, steps, base):
    expected = torch.logspace(start, end, steps, base, dtype=C64)
    actual = torch.logspace(start, end, steps, base, dtype=C64, device=device).cpu()
    # exp(z log b) of float32 parts: a few float32 roundings of |z log b| <= 10 each.
    torch.testing.assert_close(actual, expected)
    assert not fallbacks()


def test_complex_logspace_of_a_negative_base_takes_the_fallback(device, fallbacks):
    expected = torch.logspace(0, 2, 3, -2.0, dtype=C64)
    torch.testing.assert_close(torch.logspace(0, 2, 3, -2.0, dtype=C64, device=device).cpu(),
                               expected)
    assert fallbacks() == {"aten::logspace.out": 1}


_MOVES = {
    "tril": lambda t: torch.tril(t, -1),
    "triu": lambda t: t.triu(1),
    "flip": lambda t: t.flip(0, -1),
    "roll": lambda t: t.roll((2, -1), (0, 2)),
    "cumsum": lambda t: t.cumsum(1),
    "unfold": lambda t: F.unfold(t, (2, 2), padding=1),
    "fold": lambda t: F.fold(t.reshape(3, 4, 4), (3, 3), (2, 2)),
    "index_select": lambda t: t.index_select(1, torch.tensor([2, 0, 2], device=t.device)),
    "gather": lambda t: t.gather(2, torch.tensor([[[2, 0]] * 4] * 3, device=t.device)),
    "getitem": lambda t: t[torch.tensor([1, 0], device=t.device), torch.tensor([2, 3],
                                                                              device=t.device)],
    "take": lambda t: t.take(torch.tensor([0, 5, -1], device=t.device)),
    "nonzero": lambda t: torch.where(t.real > 0, t, 0).nonzero(),
    "count_nonzero": lambda t: torch.where(t.real > 0, t, 0).count_nonzero(1),
}


@pytest.mark.parametrize("name", sorted(_MOVES))
def test_complex_ops_linear_over_the_reals(device, fallbacks, name):
    x = _complex(3, 4, 4)
    for source in (x, x.transpose(0, 2)):  # contiguous and not
        expected, actual = _both(_MOVES[name], source, device=device)
        if name == "cumsum":
            # Sums of at most 4 float32 terms: 4 * 2^-24 of their magnitudes, in assert_close's
            # float32 defaults.
            torch.testing.assert_close(actual, expected)
        else:
            assert torch.equal(actual, expected)
    assert not fallbacks()


def test_complex_sqrt_matches_csqrtf(device, fallbacks):
    generator = torch.Generator().manual_seed(4)
    scale = torch.exp(torch.randn(2, 2000, generator=generator) * 5)
    z = torch.complex(torch.randn(2000, generator=generator) * scale[0],
                      torch.randn(2000, generator=generator) * scale[1])
    special = torch.tensor([0j, complex(-0.0, 0.0), complex(0.0, -0.0), -4 + 0j,
                            complex(-4, -0.0), 3e38 + 3e38j, 1e-40 + 1e-40j, -1e-30 + 1e-35j])
    z = torch.cat([special, z])
    expected, actual = _both(torch.sqrt, z, device=device)
    # Each part is within a few float32 roundings of the root (a modulus correct to an ulp, one
    # square root, one division): assert_close's float32 defaults bound that.
    torch.testing.assert_close(actual, expected)
    assert torch.equal(actual[:8].real.signbit(), expected[:8].real.signbit())
    assert torch.equal(actual[:8].imag.signbit(), expected[:8].imag.signbit())
    assert not fallbacks()


def test_complex_lerp_addcmul_addcdiv(device, fallbacks):
    a, b, c = _complex(4, 5), _complex(4, 5, seed=1), _complex(5, seed=2)
    weights = torch.tensor([0.2, 0.7, 1.0, 0.0, -0.3]) + 0.1j
    cases = [lambda x, y, z, w: torch.lerp(x, y, w), lambda x, y, z, w: torch.lerp(x, y, 0.75),
             lambda x, y, z, w: torch.addcmul(x, y, z, value=2),
             lambda x, y, z, w: torch.addcdiv(x, y, z, value=-0.5)]
    for case in cases:
        expected = case(a, b, c, weights)
        actual = case(a.to(device), b.to(device), c.to(device), weights.to(device)).cpu()
        torch.testing.assert_close(actual, expected)
    assert not fallbacks()


def test_complex_cumprod(device, fallbacks):
    x = _complex(3, 7, 2) * 0.8
    x[1, 3] = 0
    for dim in (0, 1, -1):
        expected, actual = _both(lambda t: torch.cumprod(t, dim), x, device=device)
        # Products of at most 7 factors in another association: each factor's rounding (about
        # 2 eps for a complex multiply) adds up to 14 eps relative, in assert_close's defaults.
        torch.testing.assert_close(actual, expected)
    out = torch.empty(0, dtype=C64, device=device)
    torch.cumprod(x.to(device), 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.cumprod(x, 1))
    assert torch.equal(torch.cumprod(torch.tensor(2 + 1j, device=device), 0).cpu(),
                       torch.tensor(2 + 1j))
    assert not fallbacks()


def test_complex_conjugate_views_resolve_before_moving(device):
    x = _complex(4, 4)
    expected, actual = _both(lambda t: t.conj().flip(0).tril(), x, device=device)
    assert torch.equal(actual, expected)


def test_complex_eye_and_norms(device, fallbacks):
    assert torch.equal(torch.eye(3, 5, dtype=C64, device=device).cpu(), torch.eye(3, 5, dtype=C64))
    x = _complex(5, 6)
    for ord in (2, 1, float("inf"), 0, 3):
        expected, actual = _both(lambda t: torch.linalg.vector_norm(t, ord, dim=1), x, device=device)
        torch.testing.assert_close(actual, expected)
    assert not fallbacks()


def test_complex_accumulating_index_ops(device, fallbacks):
    x, source = _complex(5, 3), _complex(4, 3, seed=1)
    index = torch.tensor([0, 2, 0, 4])
    cases = [
        lambda t, s, i: t.index_add(0, i, s, alpha=2),
        lambda t, s, i: t.scatter_add(0, i.unsqueeze(1).expand(4, 3), s),
        lambda t, s, i: t.scatter(0, i[1:].unsqueeze(1).expand(3, 3), s),
        lambda t, s, i: t.index_put((i,), s, accumulate=True),
        lambda t, s, i: t.clone().put_(i, s[:, 0], accumulate=True),
        lambda t, s, i: t.clone().masked_scatter_(t.real > 0, s),
    ]
    for case in cases:
        expected = case(x, source, index)
        actual = case(x.to(device), source.to(device), index.to(device)).cpu()
        # Each element gains at most two float32 addends, in the order the CPU adds them.
        torch.testing.assert_close(actual, expected, atol=0, rtol=2 * 2.0 ** -24)
    assert not fallbacks()


def test_complex_indexing_backward(device, fallbacks):
    x = _complex(6, 3)
    grads = []
    for where in ("cpu", device):
        leaf = x.to(where).detach().requires_grad_()
        out = leaf[torch.tensor([1, 1, 4], device=where)].flip(0).cumsum(0)
        out.abs().sum().backward()
        grads.append(leaf.grad.cpu())
    torch.testing.assert_close(grads[1], grads[0])
    assert math.isfinite(grads[1].abs().sum().item())


# --- complex64 linear algebra ---------------------------------------------------------------


def _well_conditioned(n, batch=(), seed=5):
    """Complex matrices with a dominant diagonal, and the bound on a backward-stable solve's
    relative error: c n cond(A) eps (c = 8 covers the blocked updates' roundings)."""
    a = _complex(*batch, n, n, seed=seed) + 4 * n * torch.eye(n)
    cond = torch.linalg.cond(a.to(torch.complex128)).max().item()
    return a, 8 * n * cond * 2.0 ** -24


@pytest.mark.parametrize("upper, left", [(False, True), (True, True), (False, False), (True, False)])
def test_complex_triangular_solve(device, fallbacks, upper, left):
    a, rtol = _well_conditioned(6, (2,))
    b = _complex(2, 6, 3, seed=6) if left else _complex(2, 3, 6, seed=6)
    solve = lambda m, r: torch.linalg.solve_triangular(m, r, upper=upper, left=left)  # noqa: E731
    expected, actual = _both(solve, a, b, device=device)
    torch.testing.assert_close(actual, expected, rtol=rtol, atol=rtol * expected.abs().max().item())
    assert not fallbacks()


def test_complex_lu_solve_inverse_and_cholesky(device, fallbacks):
    a, rtol = _well_conditioned(5, (3,))
    hermitian = a @ a.mH  # positive definite: its condition number is cond(a)^2
    b = _complex(3, 5, 2, seed=7)
    cases = [
        (lambda m, r: torch.linalg.solve(m, r), a, rtol),
        (lambda m, r: torch.linalg.lu_solve(*torch.linalg.lu_factor(m), r, adjoint=True), a, rtol),
        (lambda m, r: torch.linalg.inv(m), a, rtol),
        (lambda m, r: torch.linalg.cholesky(m), hermitian, rtol),
        (lambda m, r: torch.cholesky_solve(r, torch.linalg.cholesky(m, upper=True), upper=True),
         hermitian, rtol * rtol / (8 * 5 * 2.0 ** -24)),
    ]
    for fn, matrix, bound in cases:
        expected, actual = _both(fn, matrix, b, device=device)
        torch.testing.assert_close(actual, expected, rtol=bound,
                                   atol=bound * expected.abs().max().item())
    assert not fallbacks()


def test_complex_det_and_slogdet(device, fallbacks):
    a, rtol = _well_conditioned(5, (3,))
    singular = a.clone()
    singular[1, :, 2] = singular[1, :, 0] * (1 - 2j)
    for fn in (torch.linalg.det, lambda m: torch.linalg.slogdet(m)):
        expected, actual = _both(lambda m: torch.stack(list(fn(m))) if isinstance(fn(m), tuple)
                                 else fn(m), a, device=device)
        # A product of n factors of relative error rtol each (the LU's backward error).
        torch.testing.assert_close(actual, expected, rtol=5 * rtol, atol=0)
    expected, actual = _both(torch.linalg.det, singular, device=device)
    assert actual[1].abs() <= 5 * rtol * expected[0].abs()
    assert torch.equal(torch.linalg.det(torch.ones(0, 0, dtype=C64, device=device)).cpu(),
                       torch.tensor(1 + 0j))
    assert not fallbacks()
