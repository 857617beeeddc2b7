"""Reductions over any dims: sum, mean, prod, max, min, argmax, argmin, var, std, norms, all
and any, on the reduce primitive (plus elementwise launches for the derived ones)."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch, prepare_out, require_native

_ops = torch.ops.mimic


def _dims(x, dim):
    """Sorted, non-negative reduced dims; None or [] means all dims."""
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    rank = max(x.dim(), 1)
    normalized = sorted({d + rank if d < 0 else d for d in dims})
    for d in normalized:
        if not 0 <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
    return [d for d in normalized if d < x.dim()]


def _kept_shape(x, dims):
    return [1 if d in dims else size for d, size in enumerate(x.shape)]


def _final_shape(x, dims, keepdim):
    return _kept_shape(x, dims) if keepdim else [s for d, s in enumerate(x.shape) if d not in dims]


def reduce_into(kind, x, dims, dtype, map="", other=None, divisor=1.0, sqrt=False):
    """Reduces ``x`` over ``dims`` into a new keepdim-shaped tensor of ``dtype``. ``map`` ("abs",
    "square", or "mul" with ``other``) is applied to each element first; a float sum is then
    divided by ``divisor`` and, with ``sqrt``, rooted (torch_backend/ops/reduce.h)."""
    require_native(x)
    out = empty(_kept_shape(x, dims), dtype, x.device)
    require_native(out)
    if out.numel() > 0:
        _ops.reduce(out, x, dims, kind, map, other, float(divisor), sqrt)
    return out


def _finish(result, x, dims, keepdim, out=None):
    shaped = result if keepdim else result.view(_final_shape(x, dims, False))
    if out is None:
        return shaped
    prepare_out(out, shaped.shape, shaped.dtype)
    out.copy_(shaped)
    return out


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    return torch.int64 if not (x.dtype.is_floating_point or x.dtype.is_complex) else x.dtype


def _sum(self, dim=None, keepdim=False, dtype=None, out=None):
    dims = _dims(self, dim)
    source = self if dtype is None or dtype == self.dtype else self.to(dtype)
    return _finish(reduce_into("sum", source, dims, _sum_dtype(self, dtype)), self, dims, keepdim, out)


@impl("sum")
def sum_all(self, *, dtype=None):
    return _sum(self, None, False, dtype)


@impl("sum.dim_IntList")
def sum_dim(self, dim, keepdim=False, *, dtype=None):
    return _sum(self, dim, keepdim, dtype)


@impl("sum.IntList_out")
def sum_out(self, dim, keepdim=False, *, dtype=None, out):
    return _sum(self, dim, keepdim, dtype, out)


def _count(x, dims):
    count = 1
    for d in dims:
        count *= x.shape[d]
    return count


def _mean(self, dim, keepdim, dtype, out=None):
    dtype = dtype or self.dtype
    if dtype not in FLOAT_DTYPES:
        if dtype == torch.float64 or self.dtype == torch.float64:
            raise Unsupported()
        raise RuntimeError(
            f"mean(): could not infer output dtype. Input dtype must be either a floating point or "
            f"complex dtype. Got: {str(dtype).replace('torch.', '').capitalize()}")
    dims = _dims(self, dim)
    # An empty mean is 0 / 0: NaN.
    total = reduce_into("sum", self, dims, dtype, divisor=_count(self, dims))
    return _finish(total, self, dims, keepdim, out)


@impl("mean")
def mean_all(self, *, dtype=None):
    return _mean(self, None, False, dtype)


@impl("mean.dim")
def mean_dim(self, dim, keepdim=False, *, dtype=None):
    return _mean(self, dim, keepdim, dtype)


@impl("mean.out")
def mean_out(self, dim, keepdim=False, *, dtype=None, out):
    return _mean(self, dim, keepdim, dtype, out)


@impl("prod")
def prod_all(self, *, dtype=None):
    return _finish(reduce_into("prod", self, _dims(self, None), _sum_dtype(self, dtype)), self,
                   _dims(self, None), False)


@impl("prod.dim_int")
def prod_dim(self, dim, keepdim=False, *, dtype=None):
    dims = _dims(self, dim)
    return _finish(reduce_into("prod", self, dims, _sum_dtype(self, dtype)), self, dims, keepdim)


def _check_nonempty(name, x, dims):
    if x.numel() == 0 and (not dims or any(x.shape[d] == 0 for d in dims)):
        raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                         "Specify the reduction dim with the 'dim' argument.")


def _extreme(kind, name):
    def full(self):
        dims = _dims(self, None)
        if self.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0. "
                               "Specify the reduction dim with the 'dim' argument.")
        return _finish(reduce_into(kind, self, dims, self.dtype), self, dims, False)

    def along(self, dim, keepdim=False):
        dims = _dims(self, dim)
        _check_nonempty(name, self, dims)
        values = reduce_into(kind, self, dims, self.dtype)
        indices = reduce_into("arg" + kind, self, dims, torch.int64)
        return _finish(values, self, dims, keepdim), _finish(indices, self, dims, keepdim)

    def amax(self, dim=(), keepdim=False):
        dims = _dims(self, dim)
        _check_nonempty("a" + name, self, dims)
        return _finish(reduce_into(kind, self, dims, self.dtype), self, dims, keepdim)

    impl(name)(full)
    impl(f"{name}.dim")(along)
    impl(f"a{name}")(amax)


_extreme("max", "max")
_extreme("min", "min")


def _arg(kind):
    def fn(self, dim=None, keepdim=False):
        dims = _dims(self, dim)
        _check_nonempty(kind, self, dims)
        result = reduce_into(kind, self if dim is not None else self.reshape(-1), dims if dim is not None else [0],
                             torch.int64)
        if dim is None:
            return result.view([1] * self.dim()) if keepdim else result.view(())
        return _finish(result, self, dims, keepdim)

    impl(kind)(fn)


_arg("argmax")
_arg("argmin")


def _variance(self, dim, correction, keepdim, want_mean=False, take_sqrt=False):
    if self.dtype not in FLOAT_DTYPES:
        raise Unsupported()
    dims = _dims(self, dim)
    count = _count(self, dims)
    correction = 1 if correction is None else correction
    mean = reduce_into("sum", self, dims, torch.float32, divisor=count)
    squares = empty(self.shape, torch.float32, self.device)
    launch(squares, [self, mean], "x0 x1 sub x0 x1 sub mul", torch.float32)
    var = reduce_into("sum", squares, dims, torch.float32)
    divisor = count - correction
    program = "x0 s0 mul sqrt" if take_sqrt else "x0 s0 mul"
    launch(var, [var], program, torch.float32, [1.0 / divisor if divisor > 0 else float("nan")])
    result = _finish(var.to(self.dtype), self, dims, keepdim)
    if want_mean:
        return result, _finish(mean.to(self.dtype), self, dims, keepdim)
    return result


@impl("var.correction")
def var(self, dim=None, *, correction=None, keepdim=False):
    return _variance(self, dim, correction, keepdim)


@impl("std.correction")
def std(self, dim=None, *, correction=None, keepdim=False):
    return _variance(self, dim, correction, keepdim, take_sqrt=True)


@impl("var_mean.correction")
def var_mean(self, dim=None, *, correction=None, keepdim=False):
    return _variance(self, dim, correction, keepdim, want_mean=True)


@impl("std_mean.correction")
def std_mean(self, dim=None, *, correction=None, keepdim=False):
    return _variance(self, dim, correction, keepdim, want_mean=True, take_sqrt=True)


def _vector_norm(self, ord, dim, keepdim, dtype):
    if self.dtype not in FLOAT_DTYPES:
        raise Unsupported()
    ord = float(ord)
    dims = _dims(self, dim)
    dtype = dtype or self.dtype
    # The common norms read the input once: the map and the root are fused into the reduction.
    if ord == float("inf") or ord == float("-inf"):
        result = reduce_into("max" if ord > 0 else "min", self, dims, self.dtype, map="abs")
        return _finish(result.to(dtype), self, dims, keepdim)
    if ord in (1.0, 2.0):
        result = reduce_into("sum", self, dims, dtype, map="abs" if ord == 1 else "square", sqrt=ord == 2)
        return _finish(result, self, dims, keepdim)
    magnitudes = empty(self.shape, torch.float32, self.device)
    if ord == 0:
        launch(magnitudes, [self], "x0 0 ne", torch.float32)
        result = reduce_into("sum", magnitudes, dims, torch.float32)
    else:
        launch(magnitudes, [self], "x0 abs s0 pow", torch.float32, [ord])
        result = reduce_into("sum", magnitudes, dims, torch.float32)
        launch(result, [result], "x0 s0 pow", torch.float32, [1.0 / ord])
    return _finish(result.to(dtype), self, dims, keepdim)


@impl("linalg_vector_norm")
def linalg_vector_norm(self, ord=2, dim=None, keepdim=False, *, dtype=None):
    return _vector_norm(self, ord, dim, keepdim, dtype)


@impl("norm.ScalarOpt_dim")
def norm_dim(self, p, dim, keepdim=False):
    return _vector_norm(self, 2 if p is None else p, dim, keepdim, None)


@impl("norm.Scalar")
def norm_scalar(self, p=2):
    return _vector_norm(self, p, None, False, None)


def _logical_reduce(kind):
    def reduce_bool(self, dim=None, keepdim=False):
        dims = _dims(self, dim)
        flags = empty(self.shape, torch.uint8, self.device)
        launch(flags, [self], "x0 0 ne", self.dtype if self.dtype != torch.bool else torch.uint8)
        result = reduce_into("min" if kind == "all" else "max", flags, dims, torch.uint8) if self.numel() else \
            torch.full(_kept_shape(self, dims), kind == "all", dtype=torch.uint8, device=self.device)
        out_dtype = torch.uint8 if self.dtype == torch.uint8 else torch.bool
        return _finish(result.view(torch.bool) if out_dtype == torch.bool else result, self, dims, keepdim)

    def full(self):
        return reduce_bool(self)

    def along(self, dim, keepdim=False):
        return reduce_bool(self, dim, keepdim)

    impl(kind)(full)
    impl(f"{kind}.dim")(along)


_logical_reduce("all")
_logical_reduce("any")
