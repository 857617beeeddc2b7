"""Triangular solves on the device, and what the other linalg families share with them.

A solve is blocked like LAPACK's trsm: inside a panel of ``PANEL`` rows, one row of X at a time
(a divide by the diagonal, then a rank-1 update of the panel's remaining rows, each one launch
for the whole batch); below the panel, one batched GEMM (baddbmm) subtracts the panel's
contribution from every remaining row. Upper-triangular systems run the same steps from the
last row up. float32 and complex64 (whose updates are the device's complex mul and bmm) compute
here: PyTorch's CPU kernels have no half-precision linalg, and float64 and complex128 stay on the
counted fallback."""
import math
import warnings

import torch

from ._lib import Unsupported, impl

F32 = torch.float32
# Rows per panel: the panel's row-at-a-time steps cost one launch each, the rest of the work
# goes to the GEMM; 32 keeps the GEMM's share high for matrices of a few hundred rows.
PANEL = 32


def require_float32(*tensors):
    """Sends the call to the CPU fallback unless every tensor is float32 (the fallback then
    computes float64/complex, and raises PyTorch's own errors for the other dtypes)."""
    for t in tensors:
        if t.dtype != F32:
            raise Unsupported()


def require_solvable(*tensors):
    """As require_float32, but the triangular solves also take complex64 (all tensors alike)."""
    if tensors[0].dtype == torch.complex64 and all(t.dtype == torch.complex64 for t in tensors):
        return
    require_float32(*tensors)


def flat(t, dims=2):
    """``t`` [*, trailing ``dims``] as [batch, trailing] (a view where the strides allow)."""
    return t.reshape(math.prod(t.shape[:-dims]), *t.shape[t.dim() - dims:])


def batched(t):
    """``t`` [*, r, c] as a contiguous [batch, r, c] copy the kernels may overwrite."""
    return flat(t).clone(memory_format=torch.contiguous_format)


def identity_like(batch, n, device):
    """[batch, n, n] float32 identity matrices on the device."""
    return torch.eye(n, dtype=F32, device=device).expand(batch, n, n).contiguous()


def solve_lower_upper_(a, b, upper, unit):
    """Overwrites ``b`` [batch, n, k] with the solution X of A X = B, A [batch, n, n] lower or
    upper triangular (only that triangle is read), and returns it."""
    n = a.shape[-1]
    if n == 0 or b.shape[-1] == 0 or b.shape[0] == 0:
        return b
    starts = range(0, n, PANEL)
    panels = [(s, min(s + PANEL, n)) for s in starts]
    if upper:
        panels.reverse()
    diagonal = a.diagonal(dim1=-2, dim2=-1).unsqueeze(-1)
    # complex64 updates with the device's complex mul, sub and bmm (pairs of float32).
    complex_ = b.dtype == torch.complex64
    for start, end in panels:
        rows = range(end - 1, start - 1, -1) if upper else range(start, end)
        for j in rows:
            x = b[:, j:j + 1, :]
            if not unit:
                x.div_(diagonal[:, j:j + 1])
            low, high = (start, j) if upper else (j + 1, end)
            if high > low:
                if complex_:
                    b[:, low:high, :].sub_(a[:, low:high, j:j + 1] * x)
                else:
                    b[:, low:high, :].addcmul_(a[:, low:high, j:j + 1], x, value=-1)
        low, high = (0, start) if upper else (end, n)
        if high > low:
            if complex_:
                b[:, low:high, :].sub_(torch.bmm(a[:, low:high, start:end], b[:, start:end, :]))
            else:
                b[:, low:high, :].baddbmm_(a[:, low:high, start:end], b[:, start:end, :], alpha=-1)
    return b


def solve_triangular(a, b, upper, left, unit):
    """X with A X = B (``left``) or X A = B, A and B [*, n, n] and [*, n, k] with broadcast
    batch dimensions; the result has their broadcast batch shape and, as on the CPU, batched
    column-major strides."""
    batch = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if not left:
        a, b, upper = a.mT, b.mT, not upper
    n, k = b.shape[-2], b.shape[-1]
    count = math.prod(batch)
    # X A = B is solved as A^T X^T = B^T: a row-major X^T is the column-major X.
    x = torch.empty(count, k, n, dtype=b.dtype, device=b.device).mT if left else \
        torch.empty(count, n, k, dtype=b.dtype, device=b.device)
    x.copy_(flat(b.expand(*batch, n, k)))
    solve_lower_upper_(flat(a.expand(*batch, n, n)), x, upper, unit)
    x = x.reshape(*batch, n, k)
    return x if left else x.mT


def meta(t):
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device="meta")


def like_meta(result, template, device):
    """``result``'s values in a new device tensor with the meta result's shape and strides (the
    CPU kernels return column-major matrices; autograd and out= callers see the same layout)."""
    out = torch.empty_strided(template.shape, template.stride(), dtype=template.dtype, device=device)
    out.copy_(result.reshape(template.shape))
    return out


def write_out(out, result):
    """Copies ``result`` into an out= tensor, resized (with PyTorch's warning when it held
    elements) as PyTorch's resize_output does. An out= tensor of another dtype sends the call
    to the CPU, which casts or raises its own error."""
    if out.dtype != result.dtype:
        raise Unsupported()
    if tuple(out.shape) != tuple(result.shape):
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(result.shape)}. This behavior "
                          "is deprecated, and in a future PyTorch release outputs will not be resized unless "
                          "they have zero elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).")
        out.resize_(result.shape)
    out.copy_(result)
    return out


def _check_solve_triangular(a, b, left):
    name = "linalg.solve_triangular"
    if a.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if b.dim() < 2:
        raise RuntimeError(f"{name}: The input tensor B must have at least 2 dimensions.")
    if (a.shape[-2] != b.shape[-2]) if left else (a.shape[-1] != b.shape[-1]):
        raise RuntimeError(f"{name}: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({a.shape[-2]}x{a.shape[-1]} and "
                           f"{b.shape[-2]}x{b.shape[-1]})")
    try:
        torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise Unsupported() from None  # PyTorch's message names the operands' sizes.


@impl("linalg_solve_triangular")
def linalg_solve_triangular(self, B, *, upper, left=True, unitriangular=False):
    require_solvable(self, B)
    _check_solve_triangular(self, B, left)
    return solve_triangular(self, B, upper, left, unitriangular)


@impl("linalg_solve_triangular.out")
def linalg_solve_triangular_out(self, B, *, upper, left=True, unitriangular=False, out):
    require_solvable(self, B, out)
    _check_solve_triangular(self, B, left)
    return write_out(out, solve_triangular(self, B, upper, left, unitriangular))


def _triangular_solve(B, A, upper, transpose, unitriangular):
    """The deprecated torch.triangular_solve: the solution and a copy of A, both broadcast."""
    require_solvable(B, A)
    shapes = torch.ops.aten.triangular_solve(meta(B), meta(A), upper, transpose, unitriangular)
    a = A.mT if transpose else A
    x = solve_triangular(a, B, upper != transpose, True, unitriangular)
    coefficient = A.expand(shapes[1].shape)
    return like_meta(x, shapes[0], B.device), like_meta(coefficient, shapes[1], B.device)


@impl("triangular_solve")
def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
    return _triangular_solve(self, A, upper, transpose, unitriangular)


@impl("triangular_solve.X")
def triangular_solve_out(self, A, upper=True, transpose=False, unitriangular=False, *, X, M):
    require_solvable(X, M)
    results = _triangular_solve(self, A, upper, transpose, unitriangular)
    return tuple(write_out(o, r) for o, r in zip((X, M), results))
