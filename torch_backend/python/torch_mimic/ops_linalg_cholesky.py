"""Cholesky factorisation and the solves built on it, on the device.

The factorisation is right-looking and blocked like LAPACK's potrf: a panel of ``PANEL``
columns one column at a time (square root of the pivot, the column below divided by it, a rank-1
update of the panel's remaining columns; one launch each for the whole batch), then the trailing
matrix by one batched GEMM. ``info`` is the first pivot that is not positive (or is NaN), 1-based,
found on the device from the recorded pivots: the factorisation runs on to the end, so the
factor past a failed pivot holds NaNs where LAPACK leaves the input's values. complex64 factors
as A = L L^H with the device's complex ops, the pivots the diagonal's real parts."""
import math

import torch

from ._lib import Unsupported, impl
from .ops_complex import real_parts
from .ops_linalg_lu import check_errors_of, conj_transpose, first_zero_diagonal
from .ops_linalg_triangular import (PANEL, batched, flat, identity_like, like_meta, meta, require_solvable,
                                    solve_lower_upper_, write_out)

_aten = torch.ops.aten


def cholesky_lower_(a):
    """Overwrites the lower triangle of ``a`` [batch, n, n] (contiguous; the lower triangle is
    read) with L, A = L L^T, and returns info [batch] (int32). The strict upper triangle is left
    with values of no meaning."""
    batch, n, _ = a.shape
    complex_ = a.is_complex()
    pivots = torch.empty(batch, n, dtype=torch.float32 if complex_ else a.dtype, device=a.device)
    for start in range(0, n, PANEL):
        end = min(start + PANEL, n)
        for j in range(start, end):
            head = a[:, j:j + 1, j:j + 1]
            if complex_:
                # A Hermitian matrix's diagonal is real: cpotrf reads its real part only.
                real, imag = real_parts(head)
                pivots[:, j:j + 1].copy_(real.squeeze(-1))
                real.sqrt_()
                imag.zero_()
            else:
                pivots[:, j:j + 1].copy_(head.squeeze(-1))
                head.sqrt_()
            if j + 1 < n:
                a[:, j + 1:, j:j + 1].div_(head)
                if j + 1 < end:
                    column, row = a[:, j + 1:, j:j + 1], conj_transpose(a[:, j + 1:end, j:j + 1])
                    if complex_:
                        a[:, j + 1:, j + 1:end].sub_(column * row)
                    else:
                        a[:, j + 1:, j + 1:end].addcmul_(column, row, value=-1)
        if end < n:
            panel = a[:, end:, start:end]
            if complex_:
                a[:, end:, end:].sub_(torch.bmm(panel, conj_transpose(panel)))
            else:
                a[:, end:, end:].baddbmm_(panel, panel.mT, alpha=-1)
    if n == 0:
        return torch.zeros(batch, dtype=torch.int32, device=a.device)
    failed = ~(pivots > 0)
    first = failed.to(torch.int32).argmax(dim=-1)
    return torch.where(failed.any(dim=-1), first + 1, torch.zeros_like(first)).to(torch.int32)


def cholesky(A, upper):
    """(factor, info) of A [*, n, n] from its lower triangle (upper: the upper one, U^T U = A),
    with zeros in the other triangle, as contiguous tensors of A's batch shape."""
    a = batched(conj_transpose(A) if upper else A)
    info = cholesky_lower_(a)
    factor = a.tril()
    factor = conj_transpose(factor) if upper else factor
    return factor.reshape(A.shape), info.reshape(A.shape[:-2])


def _cholesky_ex(A, upper, check_errors):
    require_solvable(A)
    shapes = _aten.linalg_cholesky_ex(meta(A), upper=upper, check_errors=False)
    factor, info = cholesky(A, upper)
    if check_errors:
        check_errors_of(info, "linalg.cholesky_ex", A.dim() == 2)
    return like_meta(factor, shapes[0], A.device), info


@impl("linalg_cholesky_ex")
def linalg_cholesky_ex(self, *, upper=False, check_errors=False):
    return _cholesky_ex(self, upper, check_errors)


@impl("linalg_cholesky_ex.L")
def linalg_cholesky_ex_out(self, *, upper=False, check_errors=False, L, info):
    require_solvable(L)
    return tuple(write_out(o, r) for o, r in zip((L, info), _cholesky_ex(self, upper, check_errors)))


def _check_square(A, name):
    if A.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def column_major(t):
    """``t`` copied with batched column-major strides, the layout LAPACK-backed CPU kernels give."""
    return t.mT.contiguous().mT


def _cholesky(A, upper):
    """torch.cholesky (deprecated): always checks for errors, one host read."""
    require_solvable(A)
    if A.numel() == 0:
        return torch.empty_like(A, memory_format=torch.contiguous_format)
    _check_square(A, "cholesky")
    factor, info = cholesky(A, upper)
    check_errors_of(info, "cholesky", A.dim() == 2)
    return column_major(factor)


@impl("cholesky")
def cholesky_legacy(self, upper=False):
    return _cholesky(self, upper)


@impl("cholesky.out")
def cholesky_legacy_out(self, upper=False, *, out):
    require_solvable(out)
    return write_out(out, _cholesky(self, upper))


def cholesky_solve(b, factor, upper):
    """X with A X = B, A = L L^T (L = ``factor``) or U^T U (``upper``); [*, n, k] and [*, n, n]
    of the same batch shape."""
    lower = conj_transpose(factor) if upper else factor
    a = flat(lower)
    x = batched(b)
    solve_lower_upper_(a, x, upper=False, unit=False)
    solve_lower_upper_(conj_transpose(a), x, upper=True, unit=False)
    return x.reshape(b.shape)


@impl("_cholesky_solve_helper")
def cholesky_solve_helper(self, A, upper):
    require_solvable(self, A)
    if self.shape[:-2] != A.shape[:-2] or self.shape[-2] != A.shape[-1] or A.shape[-1] != A.shape[-2]:
        raise Unsupported()  # cholesky_solve broadcasts and checks before it calls the helper
    return column_major(cholesky_solve(self, A, upper))


def _cholesky_inverse(A, upper):
    """(A A^T)^-1 from its factor A, raising the CPU's error for a zero on A's diagonal (potri's
    info; one host read, as the CPU and CUDA kernels check it on every call)."""
    require_solvable(A)
    _check_square(A, "cholesky_inverse")
    n = A.shape[-1]
    batch = A.shape[:-2]
    count = math.prod(batch)
    if count and n:
        check_errors_of(first_zero_diagonal(flat(A), n), "cholesky_inverse", A.dim() == 2)
    if A.is_complex():
        eye = torch.eye(n, dtype=A.dtype, device=A.device).expand(*batch, n, n).contiguous()
    else:
        eye = identity_like(count, n, A.device).reshape(*batch, n, n)
    return column_major(cholesky_solve(eye, A, upper))


@impl("cholesky_inverse")
def cholesky_inverse(self, upper=False):
    return _cholesky_inverse(self, upper)


@impl("cholesky_inverse.out")
def cholesky_inverse_out(self, upper=False, *, out):
    require_solvable(out)
    return write_out(out, _cholesky_inverse(self, upper))
