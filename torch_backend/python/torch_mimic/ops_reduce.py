"""The reductions that take several launches: var, std and the vector norms, on the reduce
primitive and elementwise launches. sum, mean, prod, amax, max, argmax, all, any and the rest
of the op table's reductions are registered in C++ (torch_backend/aten)."""
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


def _count(x, dims):
    count = 1
    for d in dims:
        count *= x.shape[d]
    return count


def _complex_variance(self, dim, correction, keepdim, want_mean, take_sqrt):
    """|z - mean|^2 is (re - mean re)^2 + (im - mean im)^2: the variance of a complex64 tensor
    is the sum of its parts' float32 variances (conjugation changes neither), and real."""
    plain = self.conj() if self.is_conj() else self
    var = _variance(plain.real, dim, correction, keepdim) + \
        _variance(plain.imag, dim, correction, keepdim)
    result = var.sqrt() if take_sqrt else var
    if want_mean:
        return result, self.mean(_dims(self, dim), keepdim=keepdim)
    return result


def _variance(self, dim, correction, keepdim, want_mean=False, take_sqrt=False):
    if self.dtype == torch.complex64 and not self.is_neg():
        return _complex_variance(self, dim, correction, keepdim, want_mean, take_sqrt)
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
    if self.dtype == torch.complex64 and dtype in (None, torch.complex64):
        return _vector_norm(self.abs(), ord, dim, keepdim, None)  # the norm of the moduli
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
