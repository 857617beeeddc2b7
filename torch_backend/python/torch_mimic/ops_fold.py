"""im2col and col2im, the kernels of nn.functional.unfold and fold, on the sliding-window view
of _windows.py: im2col copies the [N, C, KH, KW, OH, OW] window view of the zero-padded input
into [N, C*KH*KW, OH*OW] columns; col2im adds each kernel offset's columns back onto a plane
(one launch per offset) and crops the padding. The plane has the input's dtype and each add
rounds to it, in the order of PyTorch's CPU kernel (kernel rows, then columns), so that float16
and bfloat16 sums round as they do there."""
import torch

from ._dtype_checks import check_dtype
from ._lib import FLOAT_DTYPES, impl
from .ops_complex import by_parts
from ._windows import add_windows, crop, padded, window_extent, windows


def _pairs(**values):
    for name, value in values.items():
        if len(value) != 2:
            raise RuntimeError(f"It is expected {name} equals to 2, but got size {len(value)}")
    return [tuple(value) for value in values.values()]


def _check_windows(kernel, dilation, padding, stride, stride_before_dilation):
    kernel_check = ("kernel size should be greater than zero, but got kernel_height: %d kernel_width: %d" % kernel,
                    min(kernel) > 0)
    dilation_check = ("dilation should be greater than zero, but got dilation_height: %d dilation_width: %d"
                      % dilation, min(dilation) > 0)
    padding_check = ("padding should be non-negative, but got pad_height: %d pad_width: %d" % padding,
                     min(padding) >= 0)
    stride_check = ("stride should be greater than zero, but got stride_height: %d stride_width: %d" % stride,
                    min(stride) > 0)
    order = ((kernel_check, stride_check, dilation_check, padding_check) if stride_before_dilation
             else (kernel_check, dilation_check, padding_check, stride_check))
    for message, ok in order:
        if not ok:
            raise RuntimeError(message)


def _blocks(size, kernel, dilation, padding, stride):
    return (size + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1


def _size(x, dim):
    """x.size(dim) with PyTorch's IndexError for a dim x does not have."""
    if x.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    if dim >= x.dim():
        raise IndexError(f"Dimension out of range (expected to be in range of [{-x.dim()}, {x.dim() - 1}], but got "
                         f"{dim})")
    return x.shape[dim]


@impl("im2col")
def im2col(self, kernel_size, dilation, padding, stride):
    kernel, dilation, padding, stride = _pairs(kernel_size=kernel_size, dilation=dilation, padding=padding,
                                               stride=stride)
    _check_windows(kernel, dilation, padding, stride, False)
    valid = _size(self, 1) != 0 and _size(self, 2) != 0
    if self.dim() == 3:
        valid = valid and self.shape[0] != 0
    elif self.dim() == 4:
        valid = valid and self.shape[3] != 0
    if self.dim() not in (3, 4) or not valid:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
                           f"dimensions for input, but got: {list(self.shape)}")
    height, width = self.shape[-2:]
    out_size = tuple(_blocks(*args) for args in zip((height, width), kernel, dilation, padding, stride))
    if min(out_size) < 1:
        # PyTorch's message names the height twice.
        raise RuntimeError(f"Given input with spatial size ({height}, {height}), kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the array of sliding blocks "
                           f"as {out_size}, but its components must be at least one.")
    if self.dtype == torch.complex64:
        return by_parts(lambda part: im2col(part, kernel_size, dilation, padding, stride), self)
    check_dtype(self, "im2col_out_cpu", FLOAT_DTYPES)
    batch = self if self.dim() == 4 else self.unsqueeze(0)
    channels = batch.shape[1]
    columns = torch.empty((batch.shape[0], channels, *kernel, *out_size), dtype=self.dtype, device=self.device)
    if columns.numel() > 0:
        plane = padded(batch, padding, (height + 2 * padding[0], width + 2 * padding[1]), 0.0)
        columns.copy_(windows(plane, out_size, kernel, stride, dilation).permute(0, 1, 4, 5, 2, 3))
    columns = columns.view(batch.shape[0], channels * kernel[0] * kernel[1], out_size[0] * out_size[1])
    return columns if self.dim() == 4 else columns.squeeze(0)


@impl("col2im")
def col2im(self, output_size, kernel_size, dilation, padding, stride):
    output_size, kernel, dilation, padding, stride = _pairs(
        output_size=output_size, kernel_size=kernel_size, dilation=dilation, padding=padding, stride=stride)
    _check_windows(kernel, dilation, padding, stride, True)
    if not ((self.dim() == 2 and self.shape[0] != 0 and self.shape[1] != 0)
            or (self.dim() == 3 and self.shape[1] != 0 and self.shape[2] != 0)):
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero "
                           f"dimensions for input, but got: {list(self.shape)}")
    planes, length = self.shape[-2:]
    if planes % (kernel[0] * kernel[1]) != 0:
        raise RuntimeError("Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
                           f"but got input.size(1)={planes} and kernel_size={kernel}.")
    blocks = tuple(_blocks(*args) for args in zip(output_size, kernel, dilation, padding, stride))
    described = (f"Given output_size={output_size}, kernel_size={kernel}, dilation={dilation}, padding={padding}, "
                 f"stride={stride}, ")
    if length != blocks[0] * blocks[1]:
        raise RuntimeError(f"{described}expected size of input's dimension 2 to match the calculated number of sliding "
                           f"blocks {blocks[0]} * {blocks[1]} = {blocks[0] * blocks[1]}, "
                           f"but got input.size(2)={length}.")
    if min(blocks) < 1:
        raise RuntimeError(f"{described}calculated shape of the array of sliding blocks as {blocks}, "
                           "which is too small (non-positive)")
    if min(output_size) < 1:
        raise RuntimeError(f"Expected output spatial size to be positive, but got: output_size={output_size}.")
    if self.dtype == torch.complex64:
        return by_parts(lambda part: col2im(part, output_size, kernel_size, dilation, padding, stride), self)
    check_dtype(self, "col2im_out_cpu", FLOAT_DTYPES)
    columns = self if self.dim() == 3 else self.unsqueeze(0)
    batch, channels = columns.shape[0], planes // (kernel[0] * kernel[1])
    shape = (batch, channels, *output_size)
    extent = tuple(max(size + 2 * pad, window_extent(b, k, s, d))
                   for size, pad, b, k, s, d in zip(output_size, padding, blocks, kernel, stride, dilation))
    plane = torch.zeros((batch, channels, *extent), dtype=self.dtype, device=self.device)
    if plane.numel() > 0:
        per_offset = columns.reshape(batch, channels, kernel[0], kernel[1], *blocks)
        add_windows(plane, lambda kh, kw: per_offset[:, :, kh, kw], blocks, kernel, stride, dilation)
    result = crop(plane, padding, shape, self.dtype)
    return result if self.dim() == 3 else result.squeeze(0)
