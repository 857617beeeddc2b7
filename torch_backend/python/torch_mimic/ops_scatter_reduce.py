"""scatter_reduce and index_reduce with the reductions the scatter-add and index-add kernels
give: sum and mean (a sum divided by the count of values each position received, the count
scatter-added from ones). prod, amax and amin need a scatter kernel that multiplies or takes
the maximum, which the device does not have: they run on the CPU.

Shapes, dtypes and arguments are checked by PyTorch's own meta kernels, so the errors are the
CPU's; index values are checked on the device by the index kernels."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, impl, launch, require_native

_ops = torch.ops.mimic
_F32 = torch.float32
_NATIVE = FLOAT_DTYPES | {torch.int32, torch.int64, torch.uint8}


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
    if reduce not in ("sum", "mean"):
        raise Unsupported()
    require_native(*tensors)
    if any(t.dtype not in _NATIVE for t in tensors):
        raise Unsupported()


def _scatter_into(result, dim, index, src, reduce, include_self):
    """Applies the reduction to ``result`` (self's values, or self itself in place)."""
    if index.numel() == 0:
        return result
    dim %= max(result.dim(), 1)
    part = src[tuple(slice(0, size) for size in index.shape)] if src.dim() else src
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
        out.resize_(self.shape)
    if out is not self:
        out.copy_(self)
    return _scatter_into(out, dim, index, src, reduce, include_self)


def _index_into(result, dim, index, source, reduce, include_self):
    """index_reduce's mean: rows of ``source`` added at ``index`` along ``dim``, divided by the
    number of rows each position received."""
    if index.numel() == 0:
        return result
    dim %= max(result.dim(), 1)
    if not include_self:
        result.index_fill_(dim, index, 0)
    result.index_add_(dim, index, source)
    counts = _counts(result, include_self)
    ones = torch.ones((), dtype=counts.dtype, device=counts.device).expand(source.shape)
    counts.index_add_(dim, index, ones)
    return _divide_by_counts(result, counts)


@impl("index_reduce")
def index_reduce(self, dim, index, source, reduce, *, include_self=True):
    torch.ops.aten.index_reduce(_meta(self), dim, _meta(index), _meta(source), reduce, include_self=include_self)
    _native("sum" if reduce == "mean" else reduce, self, source)
    return _index_into(self.clone(), dim, index, source, reduce, include_self)


@impl("index_reduce_")
def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    torch.ops.aten.index_reduce_(_meta(self), dim, _meta(index), _meta(source), reduce, include_self=include_self)
    _native("sum" if reduce == "mean" else reduce, self, source)
    return _index_into(self, dim, index, source, reduce, include_self)


@impl("index_reduce.out")
def index_reduce_out(self, dim, index, source, reduce, *, include_self=True, out):
    torch.ops.aten.index_reduce.out(_meta(self), dim, _meta(index), _meta(source), reduce,
                                    include_self=include_self, out=_meta(out))
    _native("sum" if reduce == "mean" else reduce, self, source, out)
    if out.shape != self.shape:
        out.resize_(self.shape)
    if out is not self:
        out.copy_(self)
    return _index_into(out, dim, index, source, reduce, include_self)
