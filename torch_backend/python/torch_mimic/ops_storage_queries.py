"""Questions about a tensor's storage that need no data: is_set_to. Through the CPU fallback
they would compare the fallback's CPU copies, which never share a storage."""
import torch

from ._lib import impl


@impl("is_set_to")
def is_set_to(self, tensor):
    # As PyTorch's native is_set_to: one storage, and the same offset, sizes and strides.
    return (torch._C._is_alias_of(self, tensor) and self.storage_offset() == tensor.storage_offset()
            and self.shape == tensor.shape and self.stride() == tensor.stride())
