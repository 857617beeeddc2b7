"""Sliding windows over the last two dims of [N, C, H, W] tensors, shared by convolution and
pooling: the padded plane, the as_strided window view, and its adjoint (col2im), which adds
per-window values back onto the plane."""
import torch

from ._lib import launch


def window_extent(out_size, kernel, stride, dilation):
    """How many input rows (or columns) ``out_size`` windows span."""
    return (out_size - 1) * stride + dilation * (kernel - 1) + 1


def padded(input, padding, extent, fill):
    """input [N, C, H, W] placed at offset ``padding`` in an [N, C, EH, EW] plane filled with
    ``fill``; the input itself when no padding is needed."""
    height, width = input.shape[2:]
    if tuple(extent) == (height, width):
        return input
    plane = torch.full((input.shape[0], input.shape[1], *extent), fill, dtype=input.dtype, device=input.device)
    plane[:, :, padding[0]:padding[0] + height, padding[1]:padding[1] + width].copy_(input)
    return plane


def windows(plane, out_size, kernel, stride, dilation):
    """The [N, C, OH, OW, KH, KW] view of ``plane`` whose element (n, c, oh, ow, kh, kw) is
    plane[n, c, oh*sh + kh*dh, ow*sw + kw*dw]; windows overlap when stride < kernel."""
    n_stride, c_stride, h_stride, w_stride = plane.stride()
    sizes = (plane.shape[0], plane.shape[1], out_size[0], out_size[1], kernel[0], kernel[1])
    strides = (n_stride, c_stride, stride[0] * h_stride, stride[1] * w_stride,
               dilation[0] * h_stride, dilation[1] * w_stride)
    return plane.as_strided(sizes, strides, plane.storage_offset())


def add_windows(plane, values_at, out_size, kernel, stride, dilation):
    """plane[n, c, oh*sh + kh*dh, ow*sw + kw*dw] += values_at(kh, kw)[n, c, oh, ow] for every
    kernel offset (kh, kw): the adjoint of ``windows``. One launch per offset, because windows
    overlap across offsets but the elements one offset touches are distinct."""
    n_stride, c_stride, h_stride, w_stride = plane.stride()
    sizes = (plane.shape[0], plane.shape[1], out_size[0], out_size[1])
    strides = (n_stride, c_stride, stride[0] * h_stride, stride[1] * w_stride)
    for kh in range(kernel[0]):
        for kw in range(kernel[1]):
            offset = plane.storage_offset() + kh * dilation[0] * h_stride + kw * dilation[1] * w_stride
            target = plane.as_strided(sizes, strides, offset)
            launch(target, [target, values_at(kh, kw)], "x0 x1 add", torch.float32)
    return plane


def crop(plane, padding, shape, dtype):
    """The [N, C, H, W] interior of a padded plane as a new dense tensor of ``dtype``."""
    height, width = shape[2:]
    interior = plane[:, :, padding[0]:padding[0] + height, padding[1]:padding[1] + width]
    return torch.empty(shape, dtype=dtype, device=plane.device).copy_(interior)
