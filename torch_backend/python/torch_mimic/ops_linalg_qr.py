"""Householder QR on the device: geqrf, householder_product (orgqr), ormqr and linalg_qr.

geqrf is LAPACK's geqrf: each reflector as larfg makes it (beta = -sign(alpha) * ||x||,
tau = (beta - alpha) / beta, v = x / (alpha - beta)), a few launches each for the whole batch.
Past LAPACK's crossover it is blocked: a panel of ``PANEL`` columns one reflector at a time,
then the panel's reflectors as one block reflector I - V T V^T (T by larft's recurrence)
applied to the trailing columns with three batched GEMMs; below the crossover each reflector
goes to the whole trailing matrix (two GEMMs). Products with Q (ormqr, householder_product,
linalg_qr's Q) apply the block reflectors panel by panel, or, for up to ``PANEL`` reflectors,
one at a time as LAPACK's unblocked orm2r does.

complex64 follows LAPACK's complex routines (zgeqrf, zungqr, zunmqr): H = I - tau v v^H, with
zlarfg's reflector (beta real, so R's diagonal is real; a column whose tail is zero still gets
a reflector when its diagonal is not real), geqrf applying H^H = I - conj(tau) v v^H to the
trailing columns and ``transpose`` of a product with Q the conjugate transpose. On float32 every
conj is the identity and mH is mT, so both dtypes share the code.

complex64 ormqr stays on the counted fallback: its callers (OpInfo's samples among them) pass
arbitrary reflectors and taus, whose products are far from unitary and cancel most of C; the
result is then decided by the rounding order (LAPACK's zgemv/zgerc against four real GEMMs
here), and although both are as close to the exact product (measured in complex128), they
differ from each other by more than complex64's comparison tolerance."""
import math

import torch

from ._lib import Unsupported, impl
from .ops_linalg_triangular import PANEL, batched, flat, like_meta, meta, require_float32, require_solvable, write_out

_aten = torch.ops.aten
# LAPACK's geqrf factors matrices of up to 128 columns (its crossover, ilaenv's NX) one
# reflector at a time over the whole trailing matrix; so does this, to round as it does.
UNBLOCKED_UP_TO = 128


def _add_product_(c, a, b, alpha):
    """c += alpha a b (batched): baddbmm_ for float32; complex64's in-place baddbmm_ has no
    device kernel, so its out-of-place baddbmm (the same complex GEMM) is copied back."""
    if c.is_complex():
        c.copy_(torch.baddbmm(c, a, b, alpha=alpha))
    else:
        c.baddbmm_(a, b, alpha=alpha)


def _identity(batch, m, n, dtype, device):
    """The first n columns of [batch, m, m] identity matrices, contiguous."""
    return torch.eye(m, dtype=dtype, device=device)[:, :n].expand(batch, m, n).contiguous()


def _reflector_(a, tau, j):
    """Makes the reflector of column j of ``a`` [batch, m, n] below the diagonal: beta on the
    diagonal, v's tail below it (v's head is an implicit 1), tau[:, j]."""
    alpha = a[:, j:j + 1, j:j + 1]
    tail = a[:, j + 1:, j:j + 1]
    if tail.shape[1] == 0 and not a.is_complex():
        tau[:, j:j + 1].zero_()
        return
    norm = torch.linalg.vector_norm(a[:, j:, j:j + 1], dim=1, keepdim=True)
    if tail.shape[1]:
        plain = torch.linalg.vector_norm(tail, dim=1, keepdim=True) == 0
    else:
        plain = torch.ones_like(norm, dtype=torch.bool)
    if a.is_complex():
        plain = plain & (alpha.imag == 0)
    beta = torch.where(plain, alpha, torch.where(alpha.real >= 0, -norm, norm).to(a.dtype))
    one = torch.ones_like(beta)
    tau_j = torch.where(plain, torch.zeros_like(beta), (beta - alpha) / torch.where(plain, one, beta))
    if tail.shape[1]:
        tail.mul_(torch.where(plain, one, (alpha - beta).reciprocal()))
    alpha.copy_(beta)
    tau[:, j:j + 1].copy_(tau_j.squeeze(-1))


def _apply_reflector_(a, tau, j, end):
    """Applies H_j^H = I - conj(tau) v v^H from the left to columns j+1..end of ``a``."""
    if j + 1 >= end:
        return
    head = a[:, j:j + 1, j + 1:end]
    v = a[:, j + 1:, j:j + 1]
    w = torch.baddbmm(head, v.mH, a[:, j + 1:, j + 1:end])
    tw = w.mul_(tau[:, j:j + 1].unsqueeze(-1).conj())
    head.sub_(tw)
    _add_product_(a[:, j + 1:, j + 1:end], v, tw, -1)


def block_reflector(a, tau, start, end):
    """V [batch, m - start, b] (unit lower trapezoidal, explicit) and T [batch, b, b] (upper
    triangular) with H_start ... H_end-1 = I - V T V^H, from the reflectors stored in ``a``."""
    batch = a.shape[0]
    b = end - start
    v = a[:, start:, start:end].tril(-1)
    v.diagonal(dim1=-2, dim2=-1).fill_(1)
    t = torch.zeros(batch, b, b, dtype=a.dtype, device=a.device)
    for j in range(b):
        t[:, j, j] = tau[:, start + j]
        if j:
            w = torch.bmm(v[:, :, :j].mH, v[:, :, j:j + 1])
            t[:, :j, j:j + 1].copy_(torch.bmm(t[:, :j, :j], w).mul_(-tau[:, start + j:start + j + 1].unsqueeze(-1)))
    return v, t


def geqrf_(a):
    """Factors ``a`` [batch, m, n] in place as geqrf does; returns tau [batch, min(m, n)]."""
    batch, m, n = a.shape
    k = min(m, n)
    tau = torch.empty(batch, k, dtype=a.dtype, device=a.device)
    if k <= UNBLOCKED_UP_TO:
        for j in range(k):
            _reflector_(a, tau, j)
            _apply_reflector_(a, tau, j, n)
        return tau
    for start in range(0, k, PANEL):
        end = min(start + PANEL, k)
        for j in range(start, end):
            _reflector_(a, tau, j)
            _apply_reflector_(a, tau, j, end)
        if end < n:
            v, t = block_reflector(a, tau, start, end)
            c = a[:, start:, end:]
            # Q_panel^H C = C - V T^H (V^H C)
            _add_product_(c, v, torch.bmm(t.mH, torch.bmm(v.mH, c)), -1)
    return tau


def apply_q_(reflectors, tau, c, left, transpose):
    """Overwrites ``c`` with op(Q) C (``left``) or C op(Q), Q = H_1 ... H_k from the
    reflectors [batch, m, k'] (k = tau's length) and op the (conjugate) transpose when asked."""
    k = tau.shape[-1]
    # Q^T C and C Q take the reflectors first to last; Q C and C Q^T last to first.
    backwards = left != transpose
    if k <= PANEL:
        for j in reversed(range(k)) if backwards else range(k):
            _apply_one_(reflectors, tau, j, c, left, transpose)
        return c
    panels = [(s, min(s + PANEL, k)) for s in range(0, k, PANEL)]
    if backwards:
        panels.reverse()
    for start, end in panels:
        v, t = block_reflector(reflectors, tau, start, end)
        if left:
            rows = c[:, start:, :]
            _add_product_(rows, v, torch.bmm(t.mH if transpose else t, torch.bmm(v.mH, rows)), -1)
        else:
            cols = c[:, :, start:]
            _add_product_(cols, torch.bmm(torch.bmm(cols, v), t.mH if transpose else t), v.mH, -1)
    return c


def _apply_one_(reflectors, tau, j, c, left, transpose):
    """C = op(H_j) C (``left``) or C op(H_j), as LAPACK's larf: C - tau v (v^H C) or
    C - tau (C v) v^H, with conj(tau) for op = the conjugate transpose."""
    v = reflectors[:, j:, j:j + 1].clone()
    v[:, :1].fill_(1)
    tau_j = tau[:, j:j + 1].unsqueeze(-1)
    minus_tau = (tau_j.conj() if transpose else tau_j).neg()
    if left:
        part = c[:, j:, :]
        _add_product_(part, v, torch.bmm(v.mH, part).mul_(minus_tau), 1)
    else:
        part = c[:, :, j:]
        _add_product_(part, torch.bmm(part, v).mul_(minus_tau), v.mH, 1)


def _geqrf(A):
    require_solvable(A)
    if A.dim() < 2:
        raise Unsupported()  # the CPU kernel raises its own error
    m, n = A.shape[-2], A.shape[-1]
    a = batched(A)
    tau = geqrf_(a)
    batch = A.shape[:-2]
    return a.reshape(A.shape).mT.contiguous().mT, tau.reshape(*batch, min(m, n))


@impl("geqrf")
def geqrf(self):
    return _geqrf(self)


@impl("geqrf.a")
def geqrf_out(self, *, a, tau):
    require_solvable(a, tau)
    return tuple(write_out(o, r) for o, r in zip((a, tau), _geqrf(self)))


def _householder_product(V, tau):
    require_solvable(V, tau)
    if (V.dim() < 2 or tau.dim() != V.dim() - 1 or V.shape[-2] < V.shape[-1] or V.shape[-1] < tau.shape[-1]
            or V.shape[:-2] != tau.shape[:-1]):
        raise Unsupported()  # the CPU kernel raises its own error
    m, n = V.shape[-2], V.shape[-1]
    batch = V.shape[:-2]
    count = math.prod(batch)
    q = _identity(count, m, n, V.dtype, V.device)
    apply_q_(flat(V), flat(tau, 1), q, left=True, transpose=False)
    return q.reshape(V.shape).mT.contiguous().mT


@impl("linalg_householder_product")
def linalg_householder_product(input, tau):
    return _householder_product(input, tau)


@impl("linalg_householder_product.out")
def linalg_householder_product_out(input, tau, *, out):
    require_solvable(out)
    return write_out(out, _householder_product(input, tau))


def _ormqr(V, tau, C, left, transpose):
    require_float32(V, tau, C)
    if V.dim() < 2 or C.dim() != V.dim() or tau.dim() != V.dim() - 1:
        raise Unsupported()  # the CPU kernel raises its own error
    rows = C.shape[-2] if left else C.shape[-1]
    if (V.shape[-2] != rows
            or tau.shape[-1] > V.shape[-1] or V.shape[:-2] != C.shape[:-2] or tau.shape[:-1] != V.shape[:-2]
            or tau.shape[-1] > rows):
        raise Unsupported()  # the CPU kernel raises its own error
    c = batched(C)
    apply_q_(flat(V), flat(tau, 1), c, left, transpose)
    return c.reshape(C.shape).mT.contiguous().mT


@impl("ormqr")
def ormqr(self, input2, input3, left=True, transpose=False):
    return _ormqr(self, input2, input3, left, transpose)


@impl("ormqr.out")
def ormqr_out(self, input2, input3, left=True, transpose=False, *, out):
    require_float32(out)
    return write_out(out, _ormqr(self, input2, input3, left, transpose))


def _qr(A, mode):
    require_solvable(A)
    shapes = _aten.linalg_qr(meta(A), mode)
    m, n = A.shape[-2], A.shape[-1]
    k = min(m, n)
    a = batched(A)
    tau = geqrf_(a)
    batch = A.shape[:-2]
    rows = m if mode == "complete" else k
    r = a[:, :rows, :].triu().reshape(*batch, rows, n)
    if mode == "r":
        return torch.empty(0, dtype=A.dtype, device=A.device), like_meta(r, shapes[1], A.device)
    q = _identity(a.shape[0], m, rows, A.dtype, A.device)
    apply_q_(a, tau, q, left=True, transpose=False)
    return like_meta(q, shapes[0], A.device), like_meta(r, shapes[1], A.device)


@impl("linalg_qr")
def linalg_qr(A, mode="reduced"):
    return _qr(A, mode)


@impl("linalg_qr.out")
def linalg_qr_out(A, mode="reduced", *, Q, R):
    require_solvable(Q, R)
    return tuple(write_out(o, r) for o, r in zip((Q, R), _qr(A, mode)))
