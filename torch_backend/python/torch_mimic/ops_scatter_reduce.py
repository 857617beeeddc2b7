"""scatter_reduce and index_reduce on the index kernels: sum and mean (a sum divided by the
count of values each position received, the count scatter-added from ones); amax and amin by
sorting the values (the negated values for amin; a stable sort puts NaN last) and scattering
them in that order into the flat result, where the index kernel's last write wins, then taking
the elementwise maximum (minimum) with self when it counts; prod by sorting the values by their
target, reading the number of values per target back once, and laying each target's values
out as a row of a [targets, longest] table (padded with ones) for one product reduction.

Shapes, dtypes and arguments are checked by PyTorch's own meta kernels, so the errors are the
CPU's; index values are checked on the device by the index kernels."""
from functools import partial

import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch, require_native
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32
_NATIVE = FLOAT_DTYPES | {torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8}


def _meta(x):
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def _divide_by_counts(result, counts):
    """result / counts where counts > 0, as PyTorch's mean does: true division for floats,
    floor division for integers."""
    if result.dtype in FLOAT_DTYPES:
        return launch(result, [result, counts], "x1 0 eq x0 x0 x1 div where", _F32)
    # counts > 0, so floor division is truncation minus one for a negative, inexact quotient.
    return launch(result, [result, counts], "x1 0 eq x0 x0 x1 div x0 x1 rem 0 ne x0 0 lt and sub where",
                  result.dtype)


def _counts(result, include_self):
    dtype = _F32 if result.dtype in FLOAT_DTYPES else torch.int64
    return (torch.ones if include_self else torch.zeros)(result.shape, dtype=dtype, device=result.device)


def _native(reduce, *tensors):
    if reduce not in ("sum", "mean", "amax", "amin", "prod"):
        raise Unsupported()
    require_native(*tensors)
    if any(t.dtype not in _NATIVE for t in tensors):
        raise Unsupported()


def _flat_targets(target, dim, index):
    """The flat position in contiguous ``target`` that each element of ``index`` writes to."""
    strides = target.stride()
    base = torch.zeros(index.shape, dtype=torch.int64)
    for d, size in enumerate(index.shape):
        if d != dim:
            shape = [1] * index.dim()
            shape[d] = size
            base += torch.arange(size).view(shape) * strides[d]
    return launch(empty(index.shape, torch.int64, index.device), [index, base.to(index.device)], "x0 s0 mul x1 add",
                  torch.int64, [strides[dim]])


def _scatter_extreme(result, dim, index, part, reduce, include_self):
    """amax / amin: the values in ascending order of their key scattered into the flat result,
    so that the largest key at each position is written last."""
    original = result
    if result.dim() == 0 or index.dim() == 0:  # a 0-d tensor counts as one of size 1
        result, index, part, dim = result.view(1), index.reshape(1), part.reshape(1), 0
    target = result if result.is_contiguous() else result.contiguous()
    scattered = target.clone() if include_self else target
    values = part.reshape(-1)
    # amin sorts by -value: in int64 for the integer types, whose own negation wraps (uint8's -0 < -3).
    key_dtype = values.dtype if values.dtype in FLOAT_DTYPES else torch.int64
    keys = values if reduce == "amax" else launch(empty(values.shape, key_dtype, values.device), [values],
                                                  "x0 neg", key_dtype)
    order = torch.sort(keys, stable=True)[1]
    targets = _flat_targets(target, dim, index).view(-1)
    _ops.scatter(scattered.view(-1), 0, targets.index_select(0, order), values.index_select(0, order), False)
    if include_self:
        (torch.maximum if reduce == "amax" else torch.minimum)(target, scattered, out=target)
    if target is not result:
        result.copy_(target)
    return original


def _scatter_product(result, dim, index, part, include_self):
    """prod: each target's values multiplied in one reduction over a padded table."""
    original = result
    if result.dim() == 0 or index.dim() == 0:
        result, index, part, dim = result.view(1), index.reshape(1), part.reshape(1), 0
    target = result if result.is_contiguous() else result.contiguous()
    device, outputs = target.device, target.numel()
    compute = _F32 if target.dtype in FLOAT_DTYPES else torch.int64
    targets = _flat_targets(target, dim, index).view(-1)
    counts = torch.zeros(outputs, dtype=torch.int64, device=device)
    _ops.scatter(counts, 0, targets, torch.ones((), dtype=torch.int64, device=device).expand(targets.shape), True)
    host_counts = counts.cpu()  # the one read-back: the table's shape depends on it
    longest = int(host_counts.max())
    if outputs * longest > 4 * targets.numel() + 4096:
        raise Unsupported()  # a few targets take most values: the padded table would not pay
    order = torch.sort(targets, stable=True)[1]
    values = torch.ones(targets.numel() + 1, dtype=compute, device=device)
    values[:-1].copy_(part.reshape(-1).index_select(0, order))
    starts = torch.cumsum(host_counts, 0) - host_counts
    steps = torch.arange(longest)
    table = torch.where(steps < host_counts[:, None], starts[:, None] + steps, torch.full((), targets.numel()))
    laid_out = values.index_select(0, table.view(-1).to(device)).view(outputs, longest)
    if target.dtype in (torch.float16, torch.bfloat16):
        # As PyTorch's CPU kernel: from self (or one), one factor at a time in index order, each
        # product rounded to the half type.
        products = target.view(-1).clone() if include_self else torch.ones(outputs, dtype=target.dtype, device=device)
        for column in range(longest):
            launch(products, [products, laid_out[:, column]], "x0 x1 mul", _F32)
        launch(target, [counts.view(target.shape), products.view(target.shape), target], "x0 0 gt x1 x2 where", _F32)
    else:
        products = reduce_into("prod", laid_out, [1], compute).view(target.shape)
        program = "x0 x1 mul" if include_self else "x2 0 gt x1 x0 where"
        launch(target, [target, products, counts.view(target.shape)], program, compute)
    if target is not result:
        result.copy_(target)
    return original


def _scatter_into(result, dim, index, src, reduce, include_self):
    """Applies the reduction to ``result`` (self's values, or self itself in place)."""
    if index.numel() == 0:
        return result
    dim %= max(result.dim(), 1)
    part = src[tuple(slice(0, size) for size in index.shape)] if src.dim() else src
    if reduce in ("amax", "amin"):
        return _scatter_extreme(result, dim, index, part, reduce, include_self)
    if reduce == "prod":
        return _scatter_product(result, dim, index, part, include_self)
    if not include_self:
        _ops.scatter(result, dim, index, torch.zeros((), dtype=result.dtype, device=result.device).expand(index.shape),
                     False)
    _ops.scatter(result, dim, index, part, True)
    if reduce == "mean":
        counts = _counts(result, include_self)
        _ops.scatter(counts, dim, index, torch.ones((), dtype=counts.dtype, device=counts.device).expand(index.shape),
                     True)
        _divide_by_counts(result, counts)
    return result


@impl("scatter_reduce.two")
def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
    torch.ops.aten.scatter_reduce.two(_meta(self), dim, _meta(index), _meta(src), reduce, include_self=include_self)
    _native(reduce, self, src)
    return _scatter_into(self.clone(), dim, index, src, reduce, include_self)


@impl("scatter_reduce_.two")
def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    torch.ops.aten.scatter_reduce_.two(_meta(self), dim, _meta(index), _meta(src), reduce, include_self=include_self)
    _native(reduce, self, src)
    return _scatter_into(self, dim, index, src, reduce, include_self)


@impl("scatter_reduce.two_out")
def scatter_reduce_out(self, dim, index, src, reduce, *, include_self=True, out):
    torch.ops.aten.scatter_reduce.two_out(_meta(self), dim, _meta(index), _meta(src), reduce,
                                          include_self=include_self, out=_meta(out))
    _native(reduce, self, src, out)
    if out.shape != self.shape:
        out.resize_(self.shape)  # the meta kernel's check has warned as resize_output does
    if out is not self:
        out.copy_(self)
    return _scatter_into(out, dim, index, src, reduce, include_self)


def _index_into(result, dim, index, source, reduce, include_self):
    """index_reduce: amax, amin and prod as scatter_reduce with the index spread along ``dim``; mean
    as rows of ``source`` added at ``index`` along ``dim``, divided by the number of rows each
    position received."""
    if index.numel() == 0:
        return result
    dim %= max(result.dim(), 1)
    if reduce in ("amax", "amin", "prod"):
        scatter = _scatter_product if reduce == "prod" else partial(_scatter_extreme, reduce=reduce)
        if source.dim() == 0:
            return scatter(result, 0, index.reshape(()), source, include_self=include_self)
        shape = [1] * source.dim()
        shape[dim] = -1
        return scatter(result, dim, index.reshape(shape).expand(source.shape), source, include_self=include_self)
    if not include_self:
        result.index_fill_(dim, index.long(), 0)  # index_fill takes int64 indices only
    result.index_add_(dim, index, source)
    counts = _counts(result, include_self)
    ones = torch.ones((), dtype=counts.dtype, device=counts.device).expand(source.shape)
    counts.index_add_(dim, index, ones)
    return _divide_by_counts(result, counts)


def _index_reduce_checks(op, self, dim, index, source, reduce, include_self, **out):
    """The checks of PyTorch's meta kernel ``op``. Only on meta tensors does it run
    TensorIterator's checks on the first slice of ``source`` along ``dim``, which a source
    empty along ``dim`` does not have: the CPU kernel accepts that source, so it passes."""
    try:
        op(_meta(self), dim, _meta(index), _meta(source), reduce, include_self=include_self,
           **{name: _meta(t) for name, t in out.items()})
    except IndexError:
        rank = source.dim()
        if not (rank and -rank <= dim < rank and source.shape[dim] == 0):
            raise


@impl("index_reduce")
def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    _index_reduce_checks(torch.ops.aten.index_reduce, self, dim, index, source, reduce, include_self)
    _native("sum" if reduce == "mean" else reduce, self, source)
    return _index_into(self.clone(), dim, index, source, reduce, include_self)


@impl("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    _index_reduce_checks(torch.ops.aten.index_reduce_, self, dim, index, source, reduce, include_self)
    _native("sum" if reduce == "mean" else reduce, self, source)
    return _index_into(self, dim, index, source, reduce, include_self)


@impl("index_reduce.out")
def index_reduce_out(self, dim, index, source, reduce, *, include_self=True, out):
    _index_reduce_checks(torch.ops.aten.index_reduce.out, self, dim, index, source, reduce, include_self,
                         out=out)
    _native("sum" if reduce == "mean" else reduce, self, source, out)
    if out.shape != self.shape:
        out.resize_(self.shape)  # the meta kernel's check has warned as resize_output does
    if out is not self:
        out.copy_(self)
    return _index_into(out, dim, index, source, reduce, include_self)
