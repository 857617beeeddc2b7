"""What the Python registrations use of the index kernels, which are registered from C++
(torch_backend/aten/index_kernels.cpp)."""
import torch

from ._lib import Unsupported


def index_put_impl_(self, indices, values, accumulate):
    """self[indices] = values (+= with accumulate) for integer index tensors on leading dims, on
    the device's index_put kernel. A byte or bool index raises Unsupported, so that the caller's
    op takes the CPU fallback: _index_put_impl_ would read it as a mask."""
    if any(i.dtype in (torch.bool, torch.uint8) for i in indices):
        raise Unsupported()
    return torch.ops.aten._index_put_impl_.default(self, indices, values, accumulate)
