"""LU factorisation with partial pivoting and what is built on it (lu_solve, lu_unpack, solve,
det, slogdet) on the device.

The factorisation is LAPACK's right-looking blocked getrf: a panel of ``PANEL`` columns one
column at a time (the pivot by a device argmax over the column, the row swap by gather and
scatter with that index over the whole row, the scaling and the rank-1 update of the panel, one
launch each for the whole batch), then the panel's rows to the right by a unit-lower triangular
solve and the trailing matrix by one batched GEMM. No value comes back to the host. Pivots are
LAPACK's 1-based int32 row interchanges; ``info`` is the first zero of U's diagonal, 1-based.
The factorisation, solve, lu_solve and lu_unpack also take complex64: pivots by |re| + |im| as
LAPACK's cgetrf, updates as the device's complex mul and bmm.

Argument checks and output shapes come from PyTorch's own meta functions (the call on meta
tensors raises the CPU's errors), so that the errors are the same as on the CPU."""
import math

import torch

from ._lib import Unsupported, impl
from .ops_complex import real_parts
from .ops_linalg_triangular import (F32, PANEL, batched, flat, identity_like, like_meta, meta,
                                    require_solvable, solve_lower_upper_, write_out)
from .ops_scan import complex_cumprod

_aten = torch.ops.aten


def _magnitude(column):
    """What getrf's pivot search compares: |x|, and for complex |re| + |im| (LAPACK's icamax)."""
    if not column.is_complex():
        return column.abs()
    real, imag = real_parts(column)
    return real.abs() + imag.abs()


def lu_factor_(a):
    """Factors ``a`` [batch, m, n] (contiguous, overwritten with L below and U on and above the
    diagonal) and returns the pivots [batch, min(m, n)] as 1-based int32 and info [batch]."""
    batch, m, n = a.shape
    k = min(m, n)
    # Each column's pivot as an offset from its diagonal row: the swap indexes the rows from
    # the diagonal down, and the offsets become row numbers in one launch at the end.
    offsets = []
    for start in range(0, k, PANEL):
        end = min(start + PANEL, k)
        for j in range(start, end):
            below = a[:, j:, :]
            offset = _magnitude(below[:, :, j]).argmax(dim=-1, keepdim=True)
            offsets.append(offset)
            rows = offset.unsqueeze(-1).expand(batch, 1, n)
            pivot_row = below.gather(1, rows)
            below.scatter_(1, rows, below[:, :1, :].clone())
            below[:, :1, :].copy_(pivot_row)
            if j + 1 < m:
                head = a[:, j:j + 1, j:j + 1]
                # A zero pivot leaves its column (all zeros) as it is, as getrf does.
                a[:, j + 1:, j:j + 1].div_(head.masked_fill(head == 0, 1))
                if j + 1 < end:
                    column, row = a[:, j + 1:, j:j + 1], a[:, j:j + 1, j + 1:end]
                    if a.is_complex():
                        a[:, j + 1:, j + 1:end].sub_(column * row)
                    else:
                        a[:, j + 1:, j + 1:end].addcmul_(column, row, value=-1)
        if end < n:
            solve_lower_upper_(a[:, start:end, start:end], a[:, start:end, end:], upper=False, unit=True)
            if end < m:
                if a.is_complex():
                    a[:, end:, end:].sub_(torch.bmm(a[:, end:, start:end], a[:, start:end, end:]))
                else:
                    a[:, end:, end:].baddbmm_(a[:, end:, start:end], a[:, start:end, end:], alpha=-1)
    if not k:
        pivots = torch.empty(batch, 0, dtype=torch.int32, device=a.device)
    else:
        pivots = (torch.cat(offsets, dim=1) + torch.arange(1, k + 1, device=a.device)).to(torch.int32)
    return pivots, first_zero_diagonal(a, k)


def first_zero_diagonal(a, k):
    """info: 1 + the index of the first zero on the diagonal of a [batch, *, *], 0 if none."""
    zero = a.diagonal(dim1=-2, dim2=-1)[:, :k] == 0
    if k == 0:
        return torch.zeros(a.shape[0], dtype=torch.int32, device=a.device)
    first = zero.to(torch.int32).argmax(dim=-1)
    return torch.where(zero.any(dim=-1), first + 1, torch.zeros_like(first)).to(torch.int32)


def permutation(pivots, m):
    """The row permutation [batch, m] (int64) the interchanges ``pivots`` [batch, k] make:
    row i of P^T A is row perm[i] of A. The interchanges are sequential, one step each."""
    batch, k = pivots.shape
    perm = torch.arange(m, device=pivots.device).expand(batch, m).contiguous()
    target = pivots.to(torch.int64).sub_(1)
    for i in range(k):
        other = target[:, i:i + 1]
        moved = perm.gather(1, other)
        perm.scatter_(1, other, perm[:, i:i + 1].clone())
        perm[:, i:i + 1].copy_(moved)
    return perm


def conj_transpose(t):
    """t^H in memory (t^T for real dtypes)."""
    return t.mT.conj().resolve_conj() if t.is_complex() else t.mT


def lu_solve(lu, pivots, b, left, adjoint):
    """X with A X = B (or A^H X = B with ``adjoint``; X A = B without ``left``), A = P L U given
    by ``lu`` [*, n, n] and ``pivots``; batch dimensions broadcast. Returns [batch..., n, k]."""
    if not left:
        return conj_transpose(lu_solve(lu, pivots, conj_transpose(b), True, not adjoint))
    batch = torch.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    n, k = b.shape[-2], b.shape[-1]
    a = flat(lu.expand(*batch, n, n))
    piv = flat(pivots.expand(*batch, n), 1)
    x = batched(b.expand(*batch, n, k))
    rows = permutation(piv, n).unsqueeze(-1).expand(-1, n, k)
    if adjoint:
        a = conj_transpose(a)
        solve_lower_upper_(a, x, upper=False, unit=False)
        solve_lower_upper_(a, x, upper=True, unit=True)
        x = torch.empty_like(x).scatter_(1, rows, x)
    else:
        x = x.gather(1, rows)
        solve_lower_upper_(a, x, upper=False, unit=True)
        solve_lower_upper_(a, x, upper=True, unit=False)
    return x.reshape(*batch, n, k)


def lu_factor(A):
    """(LU, pivots, info) of A [*, m, n] as contiguous device tensors of A's batch shape."""
    m, n = A.shape[-2], A.shape[-1]
    a = batched(A)
    pivots, info = lu_factor_(a)
    batch = A.shape[:-2]
    return a.reshape(*batch, m, n), pivots.reshape(*batch, min(m, n)), info.reshape(batch)


def check_errors_of(info, api, is_matrix):
    """Raises PyTorch's error for a failed factorisation: one host read, only when asked for."""
    _aten._linalg_check_errors(info.cpu(), api, is_matrix=is_matrix)


def _lu_factor_ex(A, pivot, check_errors):
    require_solvable(A)
    shapes = _aten.linalg_lu_factor_ex(meta(A), pivot=pivot, check_errors=False)
    if not pivot:
        raise Unsupported()  # the CPU raises its own error: it has no LU without pivoting
    lu, pivots, info = lu_factor(A)
    if check_errors:
        check_errors_of(info, "torch.linalg.lu_factor_ex", A.dim() == 2)
    return like_meta(lu, shapes[0], A.device), pivots, info


@impl("linalg_lu_factor_ex")
def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    return _lu_factor_ex(A, pivot, check_errors)


@impl("linalg_lu_factor_ex.out")
def linalg_lu_factor_ex_out(A, *, pivot=True, check_errors=False, LU, pivots, info):
    require_solvable(LU)
    results = _lu_factor_ex(A, pivot, check_errors)
    return tuple(write_out(o, r) for o, r in zip((LU, pivots, info), results))


def _lu_solve(LU, pivots, B, left, adjoint):
    require_solvable(LU, B)
    if pivots.dtype != torch.int32:
        raise Unsupported()
    shape = _aten.linalg_lu_solve(meta(LU), meta(pivots), meta(B), left=left, adjoint=adjoint)
    return like_meta(lu_solve(LU, pivots, B, left, adjoint), shape, B.device)


@impl("linalg_lu_solve")
def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    return _lu_solve(LU, pivots, B, left, adjoint)


@impl("linalg_lu_solve.out")
def linalg_lu_solve_out(LU, pivots, B, *, left=True, adjoint=False, out):
    require_solvable(out)
    return write_out(out, _lu_solve(LU, pivots, B, left, adjoint))


def _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots):
    require_solvable(LU_data)
    if LU_pivots.dtype != torch.int32:
        raise Unsupported()
    shapes = _aten.lu_unpack(meta(LU_data), meta(LU_pivots), unpack_data, unpack_pivots)
    device = LU_data.device
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = min(m, n)
    P, L, U = (torch.empty_strided(s.shape, s.stride(), dtype=s.dtype, device=device) for s in shapes)
    if unpack_data:
        L.copy_(LU_data[..., :, :k].tril(-1))
        L.diagonal(dim1=-2, dim2=-1).fill_(1)
        U.copy_(LU_data[..., :k, :].triu())
    if unpack_pivots and P.numel():
        batch = LU_pivots.shape[:-1]
        perm = permutation(flat(LU_pivots, 1), m)
        ones = torch.ones(perm.shape[0], 1, m, dtype=P.dtype, device=device)
        P.copy_(torch.zeros(perm.shape[0], m, m, dtype=P.dtype, device=device)
                .scatter_(1, perm.unsqueeze(1), ones).reshape(*batch, m, m))
    return P, L, U


@impl("lu_unpack")
def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    return _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)


@impl("lu_unpack.out")
def lu_unpack_out(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, P, L, U):
    require_solvable(P, L, U)
    results = _lu_unpack(LU_data, LU_pivots, unpack_data, unpack_pivots)
    return tuple(write_out(o, r) for o, r in zip((P, L, U), results))


def _solve_ex(A, B, left, check_errors):
    require_solvable(A, B)
    shapes = _aten._linalg_solve_ex(meta(A), meta(B), left=left, check_errors=False)
    # As PyTorch's kernel: a contiguous A is factored as A^T (then solved with adjoint), and
    # autograd's formula relies on which one the LU holds.
    use_transpose = A.is_contiguous() and not A.is_complex()
    lu, pivots, info = lu_factor(A.mT if use_transpose else A)
    if check_errors:
        check_errors_of(info, "torch.linalg.solve_ex", A.dim() == 2)
    vector = B.dim() == 1 or (A.dim() - 1 == B.dim() and B.shape == A.shape[:-1])
    x = lu_solve(lu, pivots, B.unsqueeze(-1) if vector else B, left, use_transpose)
    return (like_meta(x, shapes[0], A.device), like_meta(lu, shapes[1], A.device),
            pivots.reshape(shapes[2].shape), info.reshape(shapes[3].shape))


@impl("_linalg_solve_ex")
def linalg_solve_ex(A, B, *, left=True, check_errors=False):
    return _solve_ex(A, B, left, check_errors)


@impl("_linalg_solve_ex.result")
def linalg_solve_ex_out(A, B, *, left=True, check_errors=False, result, LU, pivots, info):
    require_solvable(result, LU)
    results = _solve_ex(A, B, left, check_errors)
    return tuple(write_out(o, r) for o, r in zip((result, LU, pivots, info), results))


def permutation_sign(pivots):
    """det(P) of the interchanges: -1 to the number of rows that moved."""
    n = pivots.shape[-1]
    moved = (pivots != torch.arange(1, n + 1, dtype=torch.int32, device=pivots.device)).sum(-1)
    return (moved % 2).to(F32).mul_(-2).add_(1)


def _factor_for_det(A):
    # det(A^T) = det(A): a contiguous real A is factored transposed, as PyTorch's kernel does,
    # so that LU and pivots (which autograd reuses) are the same.
    lu, pivots, _ = lu_factor(A.mT if A.is_contiguous() and not A.is_complex() else A)
    return lu, pivots


def _diagonal_product(diagonal):
    """The product over the last dim; complex64 by the device's running complex products."""
    if not diagonal.is_complex():
        return diagonal.prod(-1)
    if diagonal.shape[-1] == 0:
        return torch.ones(diagonal.shape[:-1], dtype=diagonal.dtype, device=diagonal.device)
    return complex_cumprod(diagonal, diagonal.dim() - 1).select(-1, -1)


@impl("_linalg_det")
def linalg_det(A):
    require_solvable(A)
    shapes = _aten._linalg_det(meta(A))
    lu, pivots = _factor_for_det(A)
    det = permutation_sign(pivots) * _diagonal_product(lu.diagonal(dim1=-2, dim2=-1))
    return det, like_meta(lu, shapes[1], A.device), pivots


@impl("_linalg_det.result")
def linalg_det_out(A, *, result, LU, pivots):
    require_solvable(result, LU)
    return tuple(write_out(o, r) for o, r in zip((result, LU, pivots), linalg_det(A)))


@impl("_linalg_slogdet")
def linalg_slogdet(A):
    require_solvable(A)
    shapes = _aten._linalg_slogdet(meta(A))
    lu, pivots = _factor_for_det(A)
    diagonal = lu.diagonal(dim1=-2, dim2=-1)
    sign = permutation_sign(pivots) * _diagonal_product(diagonal.sgn())
    logabsdet = diagonal.abs().log().sum(-1)
    return sign, logabsdet, like_meta(lu, shapes[2], A.device), pivots


@impl("_linalg_slogdet.sign")
def linalg_slogdet_out(A, *, sign, logabsdet, LU, pivots):
    require_solvable(sign, LU)
    if logabsdet.dtype != torch.float32:
        raise Unsupported()
    return tuple(write_out(o, r) for o, r in zip((sign, logabsdet, LU, pivots), linalg_slogdet(A)))


def _lu(A, pivot):
    require_solvable(A)
    shapes = _aten.linalg_lu(meta(A), pivot=pivot)
    if not pivot:
        raise Unsupported()  # the CPU raises its own error: it has no LU without pivoting
    lu, pivots, _ = lu_factor(A)
    P, L, U = _lu_unpack(lu, pivots, True, True)
    return tuple(like_meta(r, s, A.device) for r, s in zip((P, L, U), shapes))


@impl("linalg_lu")
def linalg_lu(A, *, pivot=True):
    return _lu(A, pivot)


@impl("linalg_lu.out")
def linalg_lu_out(A, *, pivot=True, P, L, U):
    require_solvable(P, L, U)
    return tuple(write_out(o, r) for o, r in zip((P, L, U), _lu(A, pivot)))


def _inv_ex(A, check_errors):
    """The inverse as PyTorch computes it: solve_ex with the identity on the right."""
    require_solvable(A)
    shapes = _aten.linalg_inv_ex(meta(A), check_errors=False)
    n = A.shape[-1]
    batch = A.shape[:-2]
    if A.is_complex():
        eye = torch.eye(n, dtype=A.dtype, device=A.device).expand(*batch, n, n).contiguous()
    else:
        eye = identity_like(math.prod(batch), n, A.device).reshape(*batch, n, n)
    inverse, _, _, info = _solve_ex(A, eye, True, False)
    if check_errors:
        check_errors_of(info, "linalg.inv_ex", A.dim() == 2)
    return like_meta(inverse, shapes[0], A.device), info


@impl("linalg_inv_ex")
def linalg_inv_ex(A, *, check_errors=False):
    return _inv_ex(A, check_errors)


@impl("linalg_inv_ex.inverse")
def linalg_inv_ex_out(A, *, check_errors=False, inverse, info):
    require_solvable(inverse)
    return tuple(write_out(o, r) for o, r in zip((inverse, info), _inv_ex(A, check_errors)))
