"""segment_reduce (sum, mean, max, min, prod over segments given by lengths or offsets along an
axis) and its backward.

The segment bounds are read to the host once, as PyTorch's own checks of lengths do (they read
the minimum and the row sums back). Data is viewed as [outer, A, inner] with A the reduced
axis, and extended by one row A holding the reduction's identity. A gather with a host-built
[outer, S * (L + 1)] table of positions (L the longest segment; a short segment's missing positions
read row A) lays every segment out as a row of L + 1, and one reduction over L reduces them all.
The backward gathers each element's segment values with an [outer, A] table of segment numbers
(row S of the gathered tensors is zero, for positions past the last segment)."""
import math

import torch

from ._dtype_checks import check_dtype
from ._lib import FLOAT_DTYPES, empty, impl, launch
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32
_REDUCTIONS = ("max", "mean", "min", "sum", "prod")
_IDENTITY = {"sum": 0.0, "mean": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}
_KIND = {"sum": "sum", "mean": "sum", "prod": "prod", "max": "max", "min": "min"}


def _wrap_axis(axis, rank):
    rank = max(rank, 1)
    if not -rank <= axis < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {axis})")
    return axis % rank


def _bounds(data, lengths, offsets, axis, unsafe, check):
    """Host [outer, S] int64 segment starts and lengths, with PyTorch's checks."""
    if offsets is not None:
        if data.dim() < offsets.dim() or axis != offsets.dim() - 1:
            raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of offsets but got {axis}.")
        host = offsets.cpu().reshape(-1, offsets.shape[-1]).long()
        return host[:, :-1], host[:, 1:] - host[:, :-1]
    if data.dim() < lengths.dim() or axis != lengths.dim() - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of lengths but got {axis}.")
    host = lengths.cpu().reshape(-1, lengths.shape[-1]).long()
    if check and not unsafe and host.numel() > 0:
        if host.min().item() < 0:
            raise RuntimeError("lengths contains negative value!")
        if not bool((host.sum(-1) == data.shape[axis]).all()):
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum to "
                               "data.size(lengths.dim()-1) when !unsafe.")
    return torch.cumsum(host, -1) - host, host


def _layout(data, axis):
    return math.prod(data.shape[:axis]), data.shape[axis], math.prod(data.shape[axis + 1:])


def _segmented(values, starts, lengths, kind, pad, rounding=None, first=None):
    """values [outer, A, inner] reduced over each segment: [outer, S, inner] float32. With a
    ``rounding`` dtype, sum and prod run as PyTorch's CPU kernel runs them for float16 and
    bfloat16: from ``first``, one element at a time, each step rounded to that dtype (one launch
    per position of the longest segment)."""
    outer, size, inner = values.shape
    segments = starts.shape[1]
    # One position more than the longest segment: every row reads the pad at least once (max
    # and min take their initial value from it).
    longest = (int(lengths.max()) if lengths.numel() else 0) + 1
    extended = torch.full((outer, size + 1, inner), pad, dtype=_F32, device=values.device)
    extended[:, :size].copy_(values)
    steps = torch.arange(longest)
    table = torch.where(steps < lengths[..., None], starts[..., None] + steps, torch.full((), size))
    table = table.reshape(outer, segments * longest, 1).to(values.device).expand(outer, segments * longest, inner)
    laid_out = empty((outer, segments * longest, inner), _F32, values.device)
    if laid_out.numel() > 0:
        _ops.gather(laid_out, extended, 1, table)
    laid_out = laid_out.view(outer, segments, longest, inner)
    if rounding is None:
        return reduce_into(kind, laid_out, [2], _F32).view(outer, segments, inner)
    total = torch.full((outer, segments, inner), first, dtype=rounding, device=values.device)
    program = "x0 x1 add" if kind == "sum" else "x0 x1 mul"
    for position in range(longest - 1):
        launch(total, [total, laid_out[:, :, position]], program, _F32)
    return total.to(_F32)


def _finish_program(reduce, initial, initial_counted):
    """x0 the segment's reduction, x1 its length; s0 the initial value, unless the reduction
    already started from it (``initial_counted``)."""
    if reduce == "mean":
        if initial is None:
            return "x1 0 eq 0 0 div x0 x1 div where"
        return "x1 0 eq x0 x0 x1 div where" if initial_counted else "x1 0 eq s0 x0 s0 add x1 div where"
    if initial is None or initial_counted or reduce in ("max", "min"):
        return "x0"
    return {"sum": "x0 s0 add", "prod": "x0 s0 mul"}[reduce]


def _check(data, reduce, lengths, indices, offsets, axis):
    axis = _wrap_axis(axis, data.dim())
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    if reduce not in _REDUCTIONS:
        raise RuntimeError(f"unsupported reduction given! {reduce}")
    return axis


@impl("segment_reduce")
def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0, unsafe=False, initial=None):
    axis = _check(data, reduce, lengths, indices, offsets, axis)
    starts, counts = _bounds(data, lengths, offsets, axis, unsafe, True)
    check_dtype(data, "_segment_reduce_cpu", FLOAT_DTYPES)
    outer, size, inner = _layout(data, axis)
    segments = starts.shape[1]
    shape = (*data.shape[:axis], segments, *data.shape[axis + 1:])
    output = empty(shape, data.dtype, data.device)
    if output.numel() == 0:
        return output
    # max and min are idempotent: the initial value pads every segment and is taken once.
    pad = float(initial) if initial is not None and reduce in ("max", "min") else _IDENTITY[reduce]
    sequential = data.dtype != _F32 and reduce in ("sum", "mean", "prod")
    first = (float(initial) if initial is not None else _IDENTITY[reduce]) if sequential else None
    reduced = _segmented(data.reshape(outer, size, inner), starts, counts, _KIND[reduce], pad,
                         data.dtype if sequential else None, first)
    program = _finish_program(reduce, initial, sequential)
    scalars = [float(initial)] if "s0" in program else []
    lengths_f = counts.to(_F32).view(outer, segments, 1).to(data.device)
    launch(output.view(outer, segments, inner), [reduced, lengths_f], program, _F32, scalars)
    return output


def _per_element(values, segment_of):
    """values [outer, S, inner] gathered to [outer, A, inner] by each position's segment (row S
    of the padded values, zero, for positions in no segment)."""
    outer, segments, inner = values.shape
    padded = torch.zeros((outer, segments + 1, inner), dtype=_F32, device=values.device)
    padded[:, :segments].copy_(values)
    result = empty((outer, segment_of.shape[1], inner), _F32, values.device)
    if result.numel() > 0:
        _ops.gather(result, padded, 1, segment_of.expand(result.shape))
    return result


@impl("_segment_reduce_backward")
def segment_reduce_backward(grad, output, data, reduce, *, lengths=None, offsets=None, axis=0, initial=None):
    axis = _wrap_axis(axis, data.dim())
    starts, counts = _bounds(data, lengths, offsets, axis, True, False)
    check_dtype(data, "_segment_reduce_cpu", FLOAT_DTYPES)
    outer, size, inner = _layout(data, axis)
    segments = starts.shape[1]
    grad_input = torch.zeros(data.shape, dtype=data.dtype, device=data.device)
    if grad_input.numel() == 0 or segments == 0:
        return grad_input
    positions = torch.arange(size)
    inside = (positions >= starts[..., None]) & (positions < (starts + counts)[..., None])  # [outer, S, A]
    segment_of = torch.where(inside.any(1), inside.long().argmax(1), torch.full((), segments))
    segment_of = segment_of.view(outer, size, 1).to(data.device)
    values = data.reshape(outer, size, inner)
    grads = _per_element(grad.reshape(outer, segments, inner).to(_F32), segment_of)
    target = grad_input.view(outer, size, inner)
    if reduce == "sum":
        launch(target, [grads], "x0", _F32)
        return grad_input
    lengths_f = counts.to(_F32).view(outer, segments, 1).expand(outer, segments, inner).to(data.device)
    if reduce == "mean":
        # Positions in no segment (unsafe lengths) read length 0 and keep a zero gradient.
        launch(target, [grads, _per_element(lengths_f, segment_of)], "x1 0 eq 0 x0 x1 div where", _F32)
        return grad_input
    outputs = _per_element(output.reshape(outer, segments, inner).to(_F32), segment_of)
    if reduce in ("max", "min"):
        hits = launch(empty(values.shape, _F32, data.device), [values, outputs], "x0 x0 ne x0 x1 eq or", _F32)
        hit_counts = _per_element(_segmented(hits, starts, counts, "sum", 0.0), segment_of)
        # PyTorch divides only positive gradients among tied elements.
        launch(target, [hits, grads, hit_counts], "x0 x2 2 ge x1 0 gt and x1 x2 div x1 where 0 where", _F32)
        return grad_input
    # prod: grad * output / x, or for a zero or NaN x the product of the segment's other
    # elements (and the initial value): zero when another element is zero, NaN when one is NaN.
    bad = launch(empty(values.shape, _F32, data.device), [values], "x0 0 eq x0 x0 ne or", _F32)
    nan = launch(empty(values.shape, _F32, data.device), [values], "x0 x0 ne", _F32)
    clean = launch(empty(values.shape, _F32, data.device), [values, bad], "x1 1 x0 where", _F32)
    clean_prod = _per_element(_segmented(clean, starts, counts, "prod", 1.0), segment_of)
    bad_count = _per_element(_segmented(bad, starts, counts, "sum", 0.0), segment_of)
    nan_count = _per_element(_segmented(nan, starts, counts, "sum", 0.0), segment_of)
    scale = float(initial) if initial is not None else 1.0
    launch(target, [values, grads, outputs, bad, clean_prod, bad_count, nan_count],
           "x3 x6 x0 x0 ne sub 0 gt 0 0 div x5 x3 sub 0 gt 0 x1 x4 mul s0 mul where where x1 x2 mul x0 div where",
           _F32, [scale])
    return grad_input
