"""complex64 Householder QR on the device (ops_linalg_qr.py: geqrf, householder_product,
linalg_qr) against PyTorch's CPU (LAPACK's zgeqrf, zungqr): batches, wide and tall, empty and
non-contiguous inputs, a last column whose only entry is complex (zlarfg still makes a
reflector there, so that R's diagonal is real), the blocked paths, out=, and backward.

Tolerances come from the backward-error bound of Householder QR, |dA| <= gamma(c m n) |A|
(Higham, Theorem 19.4), as in test_linalg_device.py, doubled for complex arithmetic (a complex
product or sum rounds each part with a few ulps, Higham 3.6): R's rows and Q's columns are each
determined up to that times the condition number, computed in complex128 on the CPU."""
import pytest
import torch


EPS = torch.finfo(torch.float32).eps
C64 = torch.complex64
# Test_linalg_device.py's QR constant, doubled for complex arithmetic.
QR_C = 12.0


def _randn(*shape, seed=0):
    return torch.randn(*shape, dtype=C64, generator=torch.Generator().manual_seed(seed))


def _cond(a):
    if a.numel() == 0:
        return 1.0
    return torch.linalg.cond(a.to(torch.complex128)).max().item()


def _close(actual, expected, cond, n):
    """|actual - expected| <= 2 c n eps cond max|expected| (plus a few ulps for tiny n)."""
    actual = actual.cpu()
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    if expected.numel() == 0:
        return
    scale = expected.abs().max().item() or 1.0
    bound = (2 * QR_C * max(n, 1) * cond + 8) * EPS * scale
    torch.testing.assert_close(actual, expected, rtol=0, atol=bound)


def _both(fn, *inputs, device):
    moved = [t.to(device) for t in inputs]
    return fn(*inputs), fn(*moved)


# (2, 40, 40): products with Q of more than PANEL (32) reflectors take the block reflectors;
# (140, 135): geqrf past LAPACK's crossover (128 columns) factors panel by panel.
@pytest.mark.parametrize("shape", [(5, 5), (2, 6, 4), (3, 7), (2, 40, 40), (140, 135), (0, 3, 3), (4, 0)])
def test_geqrf_householder_product_and_qr(shape, device, fallbacks):
    a = _randn(*shape)
    m, n = shape[-2:]
    cond = _cond(a)
    expected, actual = _both(torch.geqrf, a, device=device)
    _close(actual[0], expected[0], cond, m)
    _close(actual[1], expected[1], cond, m)
    if m >= n:
        expected, actual = _both(torch.linalg.householder_product, *expected, device=device)
        _close(actual, expected, cond, m)
    for mode in ("reduced", "complete", "r"):
        expected, actual = _both(lambda a: torch.linalg.qr(a, mode), a, device=device)
        for got, want in zip(actual, expected):
            _close(got, want, cond, m)
            assert got.stride() == want.stride() or got.numel() == 0
    assert fallbacks() == {}


def test_r_has_a_real_diagonal_where_the_last_reflector_has_no_tail(device, fallbacks):
    # 2 x 3: column 1's reflector has an empty tail; its complex diagonal is still reflected to
    # a real one (zlarfg), with tau != 0.
    a = torch.tensor([[1 + 2j, 3 - 1j, 0.5j], [2 - 1j, -1 + 4j, 2]], dtype=C64)
    expected, actual = _both(torch.geqrf, a, device=device)
    _close(actual[0], expected[0], _cond(a), 2)
    _close(actual[1], expected[1], _cond(a), 2)
    assert actual[1].cpu()[1] != 0
    r = torch.linalg.qr(a.to(device)).R.cpu()
    assert torch.all(r.diagonal().imag == 0)
    # A column that is real with a zero tail gets no reflector (tau 0), as on the CPU.
    real_column = torch.tensor([[2, 1j], [0, 1]], dtype=C64)
    expected, actual = _both(torch.geqrf, real_column, device=device)
    assert actual[1].cpu()[0] == 0 == expected[1][0]
    assert fallbacks() == {}


def test_non_contiguous_and_conjugate_inputs_and_out(device, fallbacks):
    a = _randn(2, 4, 6)
    for view in (a.mT, a[:, ::2].mT, a.mT.conj()):
        expected, actual = _both(torch.linalg.qr, view, device=device)
        for got, want in zip(actual, expected):
            _close(got, want, _cond(view), 6)
    q, r = torch.empty(0, dtype=C64, device=device), torch.empty(0, dtype=C64, device=device)
    torch.linalg.qr(a.mT.to(device), out=(q, r))
    expected = torch.linalg.qr(a.mT)
    _close(q, expected.Q, _cond(a), 6)
    _close(r, expected.R, _cond(a), 6)
    assert fallbacks() == {}


def test_ormqr_of_complex64_stays_on_the_fallback(device, fallbacks):
    # Arbitrary taus make products far from unitary whose values only LAPACK's own rounding
    # order reproduces within complex64's tolerance (ops_linalg_qr.py's docstring).
    reflectors, tau = torch.geqrf(_randn(5, 4))
    c = _randn(5, 3, seed=1)
    expected, actual = _both(lambda v, t, c: torch.ormqr(v, t, c, True, True), reflectors, tau, c, device=device)
    _close(actual, expected, 1.0, 5)
    assert fallbacks() == {"aten::ormqr": 1}


def test_qr_backward(device, fallbacks):
    a = _randn(5, 4) / 2 + 3 * torch.eye(5, 4)
    weights = [_randn(5, 4, seed=7), _randn(4, 4, seed=8)]
    grads = []
    for where in ("cpu", device):
        leaf = a.to(where).requires_grad_()
        q, r = torch.linalg.qr(leaf)
        total = ((q * weights[0].to(where)).sum() + (r * weights[1].to(where)).sum()).real
        grads.append(torch.autograd.grad(total, leaf)[0].cpu())
    # The formula chains a few solves and products: a few times the forward bound, with the
    # condition number squared.
    cond = _cond(a)
    bound = (2 * 2 * QR_C * 4 * cond ** 2 + 8) * EPS * grads[0].abs().max().item()
    torch.testing.assert_close(grads[1], grads[0], rtol=0, atol=bound)
    assert fallbacks() == {}
