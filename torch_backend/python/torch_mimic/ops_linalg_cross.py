"""linalg_cross on the device: c = a[i+1] b[i+2] - a[i+2] b[i+1] along ``dim``, the operands'
components rotated by index_select (the broadcast and the checks are PyTorch's meta
function's). bfloat16 stays on the CPU, whose kernel rounds after each operation."""
import torch

from ._lib import Unsupported, impl
from .ops_linalg_triangular import meta, write_out

_DTYPES = frozenset({torch.float32, torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8})


def _cross(a, b, dim):
    if a.dtype != b.dtype or a.dtype not in _DTYPES:
        raise Unsupported()  # other dtypes compute on the CPU, or fail there with its error
    shape = torch.ops.aten.linalg_cross(meta(a), meta(b), dim=dim).shape
    dim = dim % len(shape)
    a, b = a.expand(shape), b.expand(shape)
    next_ = torch.tensor([1, 2, 0], device=a.device)
    after = torch.tensor([2, 0, 1], device=a.device)
    return (a.index_select(dim, next_) * b.index_select(dim, after)
            - a.index_select(dim, after) * b.index_select(dim, next_))


@impl("linalg_cross")
def linalg_cross(self, other, *, dim=-1):
    return _cross(self, other, dim)


@impl("linalg_cross.out")
def linalg_cross_out(self, other, *, dim=-1, out):
    if out.dtype != self.dtype:
        raise Unsupported()
    return write_out(out, _cross(self, other, dim))
