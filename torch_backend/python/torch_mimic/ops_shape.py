"""Shape-driven ops built from views, copies and the elementwise and index primitives: tril,
triu, flip, roll, diag, equal and index_fill_."""
import torch

from ._lib import empty, impl, launch, prepare_out, require_native
from .ops_complex import by_parts, into
from .ops_index import index_put_impl_

_ops = torch.ops.mimic


def _triangle(self, diagonal, out, lower):
    if self.dim() < 2:
        raise RuntimeError(f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions")
    if self.dtype == torch.complex64:
        result = by_parts(lambda part: _triangle(part, diagonal, None, lower), self)
        return result if out is None else into(out, result)
    require_native(self)
    rows, cols = self.shape[-2], self.shape[-1]
    keep = empty(self.shape, torch.uint8, self.device)
    # idx is the element's row-major index: column idx % cols, row (idx / cols) % rows.
    launch(keep, [], "idx s0 rem idx s0 div s1 rem sub s2 %s" % ("le" if lower else "ge"), torch.int64,
           [cols, rows, diagonal])
    target = out if out is not None else empty(self.shape, self.dtype, self.device)
    if out is not None:
        prepare_out(out, self.shape, self.dtype)
    compute = torch.uint8 if self.dtype == torch.bool else self.dtype
    return launch(target, [keep, self], "x0 x1 0 where", compute)


@impl("tril")
def tril(self, diagonal=0):
    return _triangle(self, diagonal, None, True)


@impl("tril.out")
def tril_out(self, diagonal=0, *, out):
    return _triangle(self, diagonal, out, True)


@impl("tril_")
def tril_(self, diagonal=0):
    return _triangle(self, diagonal, self, True)


@impl("triu")
def triu(self, diagonal=0):
    return _triangle(self, diagonal, None, False)


@impl("triu.out")
def triu_out(self, diagonal=0, *, out):
    return _triangle(self, diagonal, out, False)


@impl("triu_")
def triu_(self, diagonal=0):
    return _triangle(self, diagonal, self, False)


def _reversed_positions(size, device):
    positions = torch.empty(size, dtype=torch.int64, device=device)
    return launch(positions, [], "s0 idx sub", torch.int64, [size - 1])


def _flip_dims(dims, rank):
    """dims wrapped and checked as the CPU's flip does (at::dim_list_to_bitset)."""
    wrapped = []
    for dim in dims:
        if not -rank <= dim < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, "
                             f"{rank - 1}], but got {dim})")
        dim %= rank
        if dim in wrapped:
            raise RuntimeError(f"dim {dim} appears multiple times in the list of dims")
        wrapped.append(dim)
    return wrapped


@impl("flip")
def flip(self, dims):
    if self.dtype == torch.complex64:
        return by_parts(lambda part: flip(part, dims), self)
    require_native(self)
    result = self
    for dim in _flip_dims(dims, max(self.dim(), 1)):
        if self.dim() and self.shape[dim] > 1:
            result = result.index_select(dim, _reversed_positions(self.shape[dim], self.device))
    return self.clone() if result is self else result


@impl("roll")
def roll(self, shifts, dims=()):
    if self.dtype != torch.complex64:  # copies only: complex64 moves as it is
        require_native(self)
    if not dims:
        return roll(self.reshape(-1), shifts, [0]).view(self.shape)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:{len(dims)}")
    result = self
    for shift, dim in zip(shifts, dims):
        size = result.shape[dim]
        if size == 0 or shift % size == 0:
            result = result.clone() if result is self else result
            continue
        shift %= size
        rolled = torch.empty_like(result, memory_format=torch.contiguous_format)
        rolled.narrow(dim, shift, size - shift).copy_(result.narrow(dim, 0, size - shift))
        rolled.narrow(dim, 0, shift).copy_(result.narrow(dim, size - shift, shift))
        result = rolled
    return result


def _diagonal_view(matrix, diagonal):
    rows, cols = matrix.shape
    length = max(0, min(rows + min(diagonal, 0), cols - max(diagonal, 0)))
    offset = matrix.storage_offset() + (diagonal * matrix.stride(1) if diagonal >= 0 else -diagonal * matrix.stride(0))
    return matrix.as_strided((length,), (matrix.stride(0) + matrix.stride(1),), offset)


def _diag(self, diagonal):
    if self.dim() == 1:
        size = self.shape[0] + abs(diagonal)
        result = torch.zeros((size, size), dtype=self.dtype, device=self.device)
        _diagonal_view(result, diagonal).copy_(self)
        return result
    if self.dim() == 2:
        return _diagonal_view(self, diagonal).clone()
    raise RuntimeError("diag(): Supports 1D or 2D tensors. Got %dD" % self.dim())


@impl("diag")
def diag(self, diagonal=0):
    return _diag(self, diagonal)


@impl("diag.out")
def diag_out(self, diagonal=0, *, out):
    result = _diag(self, diagonal)
    prepare_out(out, result.shape, result.dtype)
    return out.copy_(result)


@impl("equal")
def equal(self, other):
    if self.shape != other.shape or self.dtype != other.dtype:
        return False
    if self.numel() == 0:
        return True
    return not torch.ne(self, other.to(self.device)).any().item()


def _index_fill(self, dim, index, value):
    if isinstance(value, complex) and not self.is_complex():
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is not supported")
    require_native(self)
    dim %= max(self.dim(), 1)
    if index.numel() == 0:
        return self
    moved = self.movedim(dim, 0) if self.dim() else self.view(1)
    values = value if isinstance(value, torch.Tensor) else torch.tensor(value, dtype=self.dtype)
    index_put_impl_(moved, [index.reshape(-1).to(self.device)], values.to(self.device), False)
    return self


@impl("index_fill_.int_Scalar", "index_fill_.int_Tensor")
def index_fill_(self, dim, index, value):
    return _index_fill(self, dim, index, value)
