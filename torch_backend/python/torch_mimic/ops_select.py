"""Ops whose output size depends on the data, on the device with one host sync each, as CUDA
does them: nonzero (and through it argwhere and one-argument where), masked_select and
masked_scatter_, plus count_nonzero. A scan of the mask (the scan primitive) gives every
selected element its output slot; the count, the last slot, is read once; the output is then
allocated and filled by the index kernels. Unselected elements are sent to one spare slot past
the end (index_put writes in element order, so the spare's final content is fixed), which the
result leaves out."""
import math
import warnings

import torch

from ._lib import NATIVE_DTYPES, Unsupported, compute_dtype, empty, impl, launch, prepare_out
from .ops_complex import real_parts

_ops = torch.ops.mimic


def _slots(flags):
    """The inclusive running count (int64) of the 1-D bool buffer ``flags``: one scan (long
    masks take the scan's blocked form, a few launches of about sqrt(n) steps)."""
    slots = empty([flags.numel()], torch.int64, flags.device)
    _ops.scan(slots, None, flags, 0, "sum")
    return slots


def _mask_flags(mask, shape):
    """mask (expanded to ``shape``) != 0 as a contiguous 1-D bool buffer, and its length. A byte
    mask selects where it is nonzero, as PyTorch's kernels read it."""
    n = math.prod(shape)
    flags = empty([n], torch.bool, mask.device)
    torch.ne(mask.expand(shape), 0, out=flags.view(shape))
    return flags, n


def _count(slots, n):
    return int(slots[n - 1].item())  # the one host sync


def _gather_selected(values, flags, slots, n, count, shape):
    """A new 1-D tensor of the ``count`` elements of ``values`` (of ``shape``) whose flag is
    set, in row-major order."""
    result = empty([count + 1], values.dtype, values.device)
    target = empty(shape, torch.int64, values.device)
    launch(target, [flags.view(shape), slots.view(shape)], "x0 x1 1 sub s0 where", torch.int64,
           [count])
    _ops.index_put(result, [target], values.expand(shape), False)
    return result[:count]


def _nonzero(self):
    if self.dtype == torch.complex64:
        return _nonzero(self != 0)
    if self.dtype not in NATIVE_DTYPES:
        raise Unsupported()
    shape, rank = list(self.shape), self.dim()
    if self.numel() == 0:
        return empty([0, rank], torch.int64, self.device)
    flags, n = _mask_flags(self, shape)
    slots = _slots(flags)
    count = _count(slots, n)
    if rank == 0:
        return empty([count, 0], torch.int64, self.device)
    if n * rank >= 2 ** 31:
        raise Unsupported()  # the elementwise kernel's element counter is 31 bits
    # Element i's coordinates: (i // stride_d) % size_d, from the counter over [n, rank].
    strides = torch.ones(rank, dtype=torch.int64)
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    geometry = torch.stack([strides, torch.tensor(shape, dtype=torch.int64)]).to(self.device)
    coordinates = empty([n, rank], torch.int64, self.device)
    launch(coordinates, [geometry[0].expand(n, rank), geometry[1].expand(n, rank)], "idx s0 div x0 div x1 rem",
           torch.int64, [rank])
    result = empty([count + 1, rank], torch.int64, self.device)
    target = empty([n], torch.int64, self.device)
    launch(target, [flags, slots], "x0 x1 1 sub s0 where", torch.int64, [count])
    _ops.index_put(result, [target], coordinates, False)
    return result[:count]


@impl("nonzero")
def nonzero(self):
    return _nonzero(self)


@impl("nonzero.out")
def nonzero_out(self, *, out):
    if out.dtype != torch.int64:
        raise Unsupported()  # the CPU kernel's dtype error
    result = _nonzero(self)
    prepare_out(out, result.shape, torch.int64)
    out.copy_(result)
    return out


_DEPRECATED_BYTE_MASK = ("{} received a mask with dtype torch.uint8, this behavior is now deprecated,"
                         "please use a mask with dtype torch.bool instead.")
# masked_select on an accelerator is indexing by the mask, and warns as indexing does (PyTorch's
# test_masked_select expects this message from every device but the CPU).
_DEPRECATED_BYTE_INDEX = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                          "torch.bool instead.")


def _check_mask(mask, message, depth):
    """The deprecated byte masks warn ``message`` (at the caller's line: ``depth`` frames up
    from the registered kernel), and must hold 0 and 1 only: checking that reads the device a
    second time, on this deprecated path alone."""
    if mask.dtype == torch.uint8:
        warnings.warn(message, UserWarning, stacklevel=depth + 4)
        if mask.numel() and bool(torch.gt(mask, 1).any()):
            raise RuntimeError("Mask tensor can take 0 and 1 values only")
    elif mask.dtype != torch.bool:
        raise Unsupported()  # the CPU kernel's error


# Dtypes the index kernels do not move, selected as the bits of a native dtype of their width
# (selecting only moves elements), or as pairs of a native dtype of half their width.
_SAME_WIDTH = {torch.int8: torch.uint8, torch.float64: torch.int64, torch.complex64: torch.int64}
_PAIRS = {torch.int16: torch.uint8, torch.complex128: torch.int64}


def _masked_select(self, mask):
    if mask.dtype not in (torch.bool, torch.uint8):
        raise RuntimeError("masked_select: expected BoolTensor or ByteTensor for mask")
    if self.dtype not in NATIVE_DTYPES and (self.dtype not in _SAME_WIDTH and self.dtype not in _PAIRS
                                            or self.is_conj() or self.is_neg()):
        raise Unsupported()
    _check_mask(mask, _DEPRECATED_BYTE_INDEX, 1)
    mask, values = torch.broadcast_tensors(mask, self)
    shape = list(values.shape)
    if values.numel() == 0:
        return empty([0], self.dtype, self.device)
    if self.dtype in _PAIRS:
        mask = mask.unsqueeze(-1).expand(shape + [2])
        # complex128's parts view without a copy; int16's last dim must first be dense.
        values = torch.view_as_real(values) if values.is_complex() else values.contiguous().unsqueeze(-1)
        values = values.view(_PAIRS[self.dtype])
        shape.append(2)
    elif self.dtype in _SAME_WIDTH:
        values = values.view(_SAME_WIDTH[self.dtype])
    flags, n = _mask_flags(mask, shape)
    slots = _slots(flags)
    return _gather_selected(values, flags, slots, n, _count(slots, n), shape).view(self.dtype)


@impl("masked_select")
def masked_select(self, mask):
    return _masked_select(self, mask)


@impl("masked_select.out")
def masked_select_out(self, mask, *, out):
    if out.dtype != self.dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    result = _masked_select(self, mask)
    prepare_out(out, result.shape, self.dtype)
    out.copy_(result)
    return out


@impl("masked_scatter_")
def masked_scatter_(self, mask, source):
    if self.dtype == torch.complex64 == source.dtype and not self.is_conj() and not self.is_neg():
        # Elements only move: the halves of self are written in place, each by its own.
        for part, source_part in zip(real_parts(self), real_parts(source)):
            masked_scatter_(part, mask, source_part)
        return self
    if self.dtype not in NATIVE_DTYPES or mask.dtype not in (torch.bool, torch.uint8):
        raise Unsupported()
    if source.dtype != self.dtype:
        raise Unsupported()  # the CPU kernel's dtype error
    _check_mask(mask, _DEPRECATED_BYTE_MASK.format("masked_scatter_"), 0)
    shape = list(self.shape)
    mask = mask.expand(shape)
    if self.numel() == 0:
        return self
    flags, n = _mask_flags(mask, shape)
    slots = _slots(flags)
    count = _count(slots, n)
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    if count == 0:
        return self
    # Element i takes source element slots[i] - 1 where it is selected (index 0 elsewhere, a
    # valid index that where() then discards).
    picks = empty(shape, torch.int64, self.device)
    launch(picks, [slots.view(shape)], "x0 1 sub 0 max", torch.int64)
    taken = empty([n], self.dtype, self.device)
    _ops.index_select(taken, source.reshape(-1), 0, picks.view(-1))
    launch(self, [flags.view(shape), taken.view(shape), self], "x0 x1 x2 where", compute_dtype(self.dtype))
    return self


@impl("count_nonzero.dim_IntList")
def count_nonzero(self, dim):
    if self.dtype not in NATIVE_DTYPES and self.dtype != torch.complex64:
        raise Unsupported()
    return torch.sum(torch.ne(self, 0), dim=list(dim))
