"""max_unpool2d and max_unpool3d: each input value is scattered into a zeroed output plane at
the flat position its index names (the indices max pooling returns). PyTorch's CPU kernels
raise for an index outside the plane, so the indices' range is read back once before the
scatter. Their backward is a gather PyTorch composes from native ops."""
import torch

from ._dtype_checks import check_dtype, type_name
from ._lib import impl
from .ops_reduce import reduce_into

_ops = torch.ops.mimic


def _check_input(self, indices, fn_name):
    if tuple(self.shape) != tuple(indices.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor ({list(self.shape)}) "
                           f"but got indices tensor with shape: {list(indices.shape)}")
    for dim in range(1, self.dim()):
        if self.shape[dim] <= 0:
            raise RuntimeError(f"{fn_name}: Expected input to have non-zero size for non-batch dimensions, but got "
                               f"{list(self.shape)} with dimension {dim} being empty.")


def _unpool(self, indices, output_size, kernel_name):
    """Output [..., *output_size]: zeros, with self's values at its indices in each plane."""
    check_dtype(self, kernel_name, (torch.float32,))
    planes_shape = self.shape[:-len(output_size)]
    plane = 1
    for size in output_size:
        plane *= size
    output = torch.zeros((*planes_shape, *output_size), dtype=self.dtype, device=self.device)
    if output.numel() == 0 or self.numel() == 0:
        return output
    flat_indices = indices.reshape(-1)
    low = reduce_into("min", flat_indices, [0], torch.int64)
    high = reduce_into("max", flat_indices, [0], torch.int64)
    low, high = torch.cat([low, high]).tolist()  # the one read-back: PyTorch raises on a bad index
    if low < 0 or high >= plane:
        bad = low if low < 0 else high
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(map(str, output_size))}")
    planes = output.numel() // plane
    _ops.scatter(output.view(planes, plane), 1, indices.reshape(planes, -1), self.reshape(planes, -1), False)
    return output


@impl("max_unpool2d")
def max_unpool2d(self, indices, output_size):
    if indices.dtype != torch.int64:
        raise RuntimeError(f"elements in indices should be type int64 but got: {type_name(indices.dtype)}")
    if len(output_size) != 2:
        raise RuntimeError("There should be exactly two elements (height, width) in output_size, but got "
                           f"{len(output_size)} elements.")
    if self.dim() not in (3, 4):
        raise RuntimeError(f"Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with {self.dim()} "
                           "dimensions.")
    _check_input(self, indices, "max_unpooling2d_forward_out_cpu()")
    return _unpool(self, indices, tuple(output_size), "max_unpool2d")


@impl("max_unpool3d")
def max_unpool3d(self, indices, output_size, stride, padding):
    if indices.dtype != torch.int64:
        raise RuntimeError("elements in indices should be type int64")
    if self.dim() not in (4, 5):
        raise RuntimeError(f"Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with {self.dim()} "
                           "dimensions.")
    for values, what, sep in ((output_size, "output_size", ""), (stride, "stride", ":"), (padding, "padding", ":")):
        if len(values) != 3:
            raise RuntimeError(f"There should be exactly three elements (depth, height, width) in {what}, but got{sep} "
                               f"{len(values)} elements.")
    _check_input(self, indices, "max_unpooling3d_forward_out_cpu()")
    if min(stride) <= 0:
        raise RuntimeError(f"strides should be greater than zero, but got stride: {list(stride)}")
    return _unpool(self, indices, tuple(output_size), "max_unpool3d")
