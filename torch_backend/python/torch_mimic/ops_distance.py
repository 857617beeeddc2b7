"""Pairwise p-norm distances (the _cdist_forward and _cdist_backward kernels of torch.cdist) on
broadcast views: x1 [..., R1, C] and x2 [..., R2, C] are read as [..., R1, R2, C] through zero
strides, so no pairwise difference is stored for p = 2 (one reduction with the squared
difference map and the square root fused). Other p map the differences in one elementwise
launch and reduce them; the backward maps each pair's contribution to x1's gradient and sums it
over R2, with PyTorch's per-p formulas (torch/aten/src/ATen/native/cpu/DistanceOpsKernel.cpp).
PyTorch's CPU kernels take float32 and float64 only; float64 runs on the CPU."""
import torch

from ._dtype_checks import check_dtype, type_name
from ._lib import empty, impl, launch
from .ops_reduce import reduce_into

_F32 = torch.float32
_INF = float("inf")

_DIFF = "x0 x1 sub"
_SIGN = f"{_DIFF} 0 gt {_DIFF} 0 lt sub"


def _pairs(x1, x2):
    """x1 and x2 broadcast to [*batch, R1, R2, C], and the batch shape."""
    batch = torch.broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    rows1, rows2, cols = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    shape = (*batch, rows1, rows2, cols)
    left = x1.expand(*batch, rows1, cols).unsqueeze(-2).expand(shape)
    right = x2.expand(*batch, rows2, cols).unsqueeze(-3).expand(shape)
    return left, right, batch


def _check(x1, x2, p, compute_mode):
    for name, x in (("X1", x1), ("X2", x2)):
        if x.dim() < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.dim()}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: {type_name(x.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    mode = 0 if compute_mode is None else compute_mode
    if not 0 <= mode <= 2:
        raise RuntimeError(f"possible modes: 0, 1, 2, but was: {mode}")


@impl("_cdist_forward")
def cdist_forward(x1, x2, p, compute_mode):
    _check(x1, x2, p, compute_mode)
    left, right, batch = _pairs(x1, x2)
    shape = (*batch, x1.shape[-2], x2.shape[-2])
    if left.numel() == 0:
        empty_pairs = any(size == 0 for size in shape)
        return (empty if empty_pairs else torch.zeros)(shape, dtype=x1.dtype, device=x1.device)
    check_dtype(x1, "cdist", (_F32,))
    check_dtype(x2, "cdist", (_F32,))
    last = left.dim() - 1
    if p == 2:
        result = reduce_into("sum", left, [last], _F32, map="sqdiff", other=right, sqrt=True)
        return result.view(shape)
    mapped = empty(left.shape, _F32, x1.device)
    if p == 0:
        launch(mapped, [left, right], "x0 x1 ne", _F32)
    elif p in (1, _INF):
        launch(mapped, [left, right], f"{_DIFF} abs", _F32)
    else:
        launch(mapped, [left, right], f"{_DIFF} abs s0 pow", _F32, [p])
    result = reduce_into("max" if p == _INF else "sum", mapped, [last], _F32)
    if p not in (0, 1, _INF):
        launch(result, [result], "x0 s0 pow", _F32, [1.0 / p])
    return result.view(shape)


def _backward_program(p):
    """A pair's term of dcdist/dx1 times the gradient: x0 x1[i], x1 x2[j], x2 grad, x3 cdist."""
    if p == 1:
        return f"{_SIGN} x2 mul", []
    if p == 2:
        return f"x3 0 eq 0 x2 {_DIFF} mul x3 div where", []
    if p == _INF:
        return f"{_SIGN} x2 mul {_DIFF} abs x3 eq mul", []
    if p < 2:
        zero = f"x3 0 eq {_DIFF} 0 eq or" if p < 1 else "x3 0 eq"
        return f"{zero} 0 {_SIGN} {_DIFF} abs s0 pow mul x2 mul x3 s0 pow div where", [p - 1]
    return f"x3 0 eq 0 {_DIFF} {_DIFF} abs s0 pow mul x2 mul x3 s1 pow div where", [p - 2, p - 1]


@impl("_cdist_backward")
def cdist_backward(grad, x1, x2, p, cdist):
    left, right, batch = _pairs(x1, x2)
    shape = (*batch, x1.shape[-2], x1.shape[-1])
    if left.numel() == 0:
        return torch.zeros(x1.shape, dtype=x1.dtype, device=x1.device)
    check_dtype(x1, "cdist", (_F32,))
    if p == 0:
        return torch.zeros(shape, dtype=x1.dtype, device=x1.device)
    program, scalars = _backward_program(p)
    terms = empty(left.shape, _F32, x1.device)
    launch(terms, [left, right, grad.unsqueeze(-1), cdist.unsqueeze(-1)], program, _F32, scalars)
    return reduce_into("sum", terms, [terms.dim() - 2], _F32).view(shape)
