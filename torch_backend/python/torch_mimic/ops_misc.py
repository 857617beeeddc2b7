"""Small ops composed of the elementwise, reduce and index primitives: nansum (NaN mapped to zero,
then the native sum), glu and its backward (one launch per half), take and put_ (the flat
tensor's index_select and index_put, after wrapping negative indices and the CPU's range check,
which reads the indices' range back once)."""
import torch

from ._dtype_checks import check_dtype, type_name
from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch, prepare_out, require_native
from .ops_complex import by_parts, into, real_parts
from .ops_index import index_put_impl_
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32


def _wrap_dim(dim, rank):
    rank = max(rank, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


# --- nansum --------------------------------------------------------------------------------


def _nan_as_zero(self):
    if self.is_complex():
        raise RuntimeError("nansum does not support complex inputs")
    require_native(self)
    if not self.is_floating_point():
        return self
    return launch(empty(self.shape, self.dtype, self.device), [self], "x0 x0 ne 0 x0 where", _F32)


@impl("nansum")
def nansum(self, dim=None, keepdim=False, *, dtype=None):
    return torch.sum(_nan_as_zero(self), dim if dim else [], keepdim, dtype=dtype)


@impl("nansum.out")
def nansum_out(self, dim=None, keepdim=False, *, dtype=None, out):
    return torch.sum(_nan_as_zero(self), dim if dim else [], keepdim, dtype=dtype, out=out)


# --- glu -----------------------------------------------------------------------------------


def _halves(self, dim):
    if self.dim() == 0:
        raise RuntimeError("glu does not support 0-dimensional tensors")
    dim = _wrap_dim(dim, self.dim())
    size = self.shape[dim]
    if size % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {dim} is size {size}")
    check_dtype(self, "glu_cpu", (_F32, torch.bfloat16))
    return self.narrow(dim, 0, size // 2), self.narrow(dim, size // 2, size // 2), dim


@impl("glu")
def glu(self, dim=-1):
    first, second, _ = _halves(self, dim)
    return launch(empty(first.shape, self.dtype, self.device), [first, second], "x0 x1 sigmoid mul", _F32)


@impl("glu.out")
def glu_out(self, dim=-1, *, out):
    first, second, _ = _halves(self, dim)
    prepare_out(out, first.shape, self.dtype)
    return launch(out, [first, second], "x0 x1 sigmoid mul", _F32)


@impl("glu_backward")
def glu_backward(grad_output, self, dim):
    first, second, dim = _halves(self, dim)
    grad_input = empty(self.shape, self.dtype, self.device)
    half = first.shape[dim]
    launch(grad_input.narrow(dim, 0, half), [grad_output, second], "x0 x1 sigmoid mul", _F32)
    launch(grad_input.narrow(dim, half, half), [grad_output, first, second],
           "x0 x1 mul x2 sigmoid mul 1 x2 sigmoid sub mul", _F32)
    return grad_input


# --- take and put_ -------------------------------------------------------------------------


def _flat_indices(index, numel):
    """index as non-negative flat positions into ``numel`` elements, with the CPU's range
    check (one read-back of the smallest and largest index)."""
    flat = index.reshape(-1)
    low = reduce_into("min", flat, [0], torch.int64)
    high = reduce_into("max", flat, [0], torch.int64)
    low, high = torch.cat([low, high]).tolist()
    for bad in (low, high):
        if not -numel <= bad < numel:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {numel} elements.")
    if low >= 0:
        return flat
    return launch(empty(flat.shape, torch.int64, flat.device), [flat], "x0 0 lt x0 s0 add x0 where", torch.int64,
                  [numel])


def _take(self, index, out):
    if index.dtype != torch.int64:
        raise RuntimeError(f"take(): Expected a long tensor for index, but got {type_name(index.dtype)}")
    if self.dtype == torch.complex64 and (out is None or out.dtype == torch.complex64):
        result = by_parts(lambda part: _take(part, index, None), self)
        return result if out is None else into(out, result)
    require_native(self)
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("take(): tried to take from an empty tensor")
    result = empty(index.shape, self.dtype, self.device) if out is None else prepare_out(out, index.shape, self.dtype)
    if index.numel() == 0:
        return result
    positions = _flat_indices(index, self.numel())
    target = result if result.is_contiguous() else empty(index.shape, self.dtype, self.device)
    _ops.index_select(target.view(-1), self.reshape(-1), 0, positions)
    return result if target is result else result.copy_(target)


@impl("take")
def take(self, index):
    return _take(self, index, None)


@impl("take.out")
def take_out(self, index, *, out):
    if out.dtype != self.dtype:
        raise Unsupported()
    return _take(self, index, out)


@impl("put_")
def put_(self, index, source, accumulate=False):
    if index.dtype != torch.int64:
        raise RuntimeError(f"put_(): Expected a long tensor for index, but got {type_name(index.dtype)}")
    if self.dtype != source.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got self.dtype = "
                           f"{type_name(self.dtype)} and source.dtype = {type_name(source.dtype)}")
    if index.numel() != source.numel():
        raise IndexError("put_(): Expected source and index to have the same number of elements, but got "
                         f"source.numel() = {source.numel()}, index.numel() = {index.numel()}")
    if self.numel() == 0 and index.numel() != 0:
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    if self.dtype == torch.complex64 and not self.is_conj() and not self.is_neg():
        # Linear over the reals: the halves of self are written in place, each by its own.
        for part, source_part in zip(real_parts(self), real_parts(source)):
            put_(part, index, source_part, accumulate)
        return self
    require_native(self)
    if self.dtype == torch.bool or (accumulate and self.dtype not in FLOAT_DTYPES | {torch.int32, torch.int64}):
        raise Unsupported()
    if index.numel() == 0:
        return self
    positions = _flat_indices(index, self.numel())
    target = self if self.is_contiguous() else self.contiguous()
    index_put_impl_(target.view(-1), [positions], source.reshape(-1), accumulate)
    return self if target is self else self.copy_(target)
