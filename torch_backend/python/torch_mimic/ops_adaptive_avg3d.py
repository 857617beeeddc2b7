"""Adaptive average pooling in 3d and its backward, separable as the 2d one (ops_nn_pool.py): an
output cell averages the box [floor(i in / out), ceil((i + 1) in / out)) along each dimension,
which is a product of one averaging matrix per dimension, applied by device GEMMs (height and
width per depth slice, then depth). The backward applies the transposed matrices. Checks and
their order are the CPU kernel's (aten/src/ATen/native/AdaptiveAveragePooling3d.cpp)."""
import torch

from ._lib import Unsupported, impl
from .ops_nn_pool import _averaging_matrix, _separable
from .ops_upsample import into_out


def _check(self, output_size):
    if len(output_size) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    for dim in range(1, self.dim()):
        if self.shape[dim] <= 0:
            raise RuntimeError("adaptive_avg_pool3d(): Expected input to have non-zero size for non-batch dimensions, "
                               f"but input has sizes {list(self.shape)} with dimension {dim} being empty")
    if self.dim() not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(self.shape)}")
    if self.dtype != torch.float32:
        raise Unsupported()  # the CPU fallback keeps its dtype support


def _matrices(shape, output_size, device):
    return [_averaging_matrix(size, out, device) for size, out in zip(shape[-3:], output_size)]


@impl("_adaptive_avg_pool3d")
def adaptive_avg_pool3d(self, output_size):
    _check(self, output_size)
    out_d, out_h, out_w = output_size
    depth, height, width = self.shape[-3:]
    if self.numel() == 0 or out_d * out_h * out_w == 0:
        return torch.zeros((*self.shape[:-3], out_d, out_h, out_w), dtype=self.dtype, device=self.device)
    depths, rows, cols = _matrices(self.shape, output_size, self.device)
    planes = _separable(self.reshape(-1, height, width), rows, cols.t())
    volumes = planes.reshape(-1, depth, out_h * out_w)
    pooled = torch.matmul(depths, volumes)
    return pooled.reshape(*self.shape[:-3], out_d, out_h, out_w)


@impl("_adaptive_avg_pool3d.out")
def adaptive_avg_pool3d_out(self, output_size, *, out):
    return into_out(out, adaptive_avg_pool3d(self, output_size))


@impl("adaptive_avg_pool3d.out")
def adaptive_avg_pool3d_public_out(self, output_size, *, out):
    return into_out(out, adaptive_avg_pool3d(self, output_size))


@impl("_adaptive_avg_pool3d_backward")
def adaptive_avg_pool3d_backward(grad_output, self):
    if grad_output.dtype != torch.float32 or self.dtype != torch.float32 or grad_output.dim() != self.dim() \
            or self.dim() not in (4, 5) or tuple(grad_output.shape[:-3]) != tuple(self.shape[:-3]):
        raise Unsupported()  # the CPU kernel's own handling of such calls is the reference
    out_d, out_h, out_w = grad_output.shape[-3:]
    depth, height, width = self.shape[-3:]
    if self.numel() == 0 or grad_output.numel() == 0:
        return torch.zeros(self.shape, dtype=self.dtype, device=self.device)
    depths, rows, cols = _matrices(self.shape, (out_d, out_h, out_w), self.device)
    volumes = torch.matmul(depths.t(), grad_output.reshape(-1, out_d, out_h * out_w))
    planes = _separable(volumes.reshape(-1, out_h, out_w), rows.t(), cols)
    return planes.reshape(self.shape)


@impl("_adaptive_avg_pool3d_backward.out")
def adaptive_avg_pool3d_backward_out(grad_output, self, *, out):
    return into_out(out, adaptive_avg_pool3d_backward(grad_output, self))
