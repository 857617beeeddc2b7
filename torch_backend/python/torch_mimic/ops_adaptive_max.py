"""Adaptive max pooling over 2 or 3 spatial dims with indices, and its backward.

Output cell o of an axis of size `in` pools rows [floor(o*in/out), ceil((o+1)*in/out)); windows
differ in size by at most one row. Each axis is gathered (index_select) into [out, K] rows of
the largest window size K, from the input padded with one -inf row that the shorter windows
read for their missing rows, so one max/argmax reduction over the K dims pools every window.
The -inf padding never wins over a real element: argmax takes the first maximum, and a window's
first position is always inside the input. The backward scatter-adds the gradient at the
indices, in float32 because windows overlap."""
import math

import torch

from ._dtype_checks import check_dtype
from ._lib import empty, impl, launch
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32


def _check(self, output_size, dims, name):
    if len(output_size) != dims:
        raise RuntimeError(f"{name}(): internal error: output_size.size() must be {dims}")
    if self.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"{name}(): Expected {dims + 1}D or {dims + 2}D tensor, but got: {list(self.shape)}")
    for dim in range(1, self.dim()):
        if self.shape[dim] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch dimensions, but input "
                               f"has sizes {list(self.shape)} with dimension {dim} being empty")


def _windows(size, out):
    """Per output cell its first row, and the [out, K] rows of its window (``size``, the
    padding row, past its end)."""
    starts = [(o * size) // out for o in range(out)]
    ends = [-(-(o + 1) * size // out) for o in range(out)]
    widest = max(end - start for start, end in zip(starts, ends))
    rows = [[start + k if start + k < end else size for k in range(widest)] for start, end in zip(starts, ends)]
    return torch.tensor(starts, dtype=torch.int64), torch.tensor(rows, dtype=torch.int64), widest


def _index_program(widths, in_sizes):
    """Flat input position of the argmax x0 over the window dims: per axis a, row
    start_a (x<a+1>) + (x0 / prod(widths after a)) % width_a, times prod(in_sizes after a)."""
    terms, scalars = [], []
    for axis in range(len(widths)):
        inner = math.prod(widths[axis + 1:])
        stride = math.prod(in_sizes[axis + 1:])
        term = "x0"
        if inner > 1:
            term += f" s{len(scalars)} div"
            scalars.append(inner)
        if axis > 0:
            term += f" s{len(scalars)} rem"
            scalars.append(widths[axis])
        term += f" x{axis + 1} add"
        if stride > 1:
            term += f" s{len(scalars)} mul"
            scalars.append(stride)
        terms.append(term)
    return " ".join(terms) + " add" * (len(terms) - 1), scalars


def _adaptive_max(self, output_size, dims, name, dtypes):
    _check(self, output_size, dims, name)
    check_dtype(self, name, dtypes)
    output_size = tuple(output_size)
    out_shape = (*self.shape[:-dims], *output_size)
    values = empty(out_shape, self.dtype, self.device)
    indices = empty(out_shape, torch.int64, self.device)
    if values.numel() == 0:
        return values, indices
    in_sizes = tuple(self.shape[-dims:])
    planes = self.reshape(-1, *in_sizes)
    padded = torch.full((planes.shape[0], *(size + 1 for size in in_sizes)), float("-inf"), dtype=self.dtype,
                        device=self.device)
    padded[(slice(None), *(slice(0, size) for size in in_sizes))].copy_(planes)
    gathered, starts, widths = padded, [], []
    for axis, (size, out) in enumerate(zip(in_sizes, output_size)):
        start, rows, widest = _windows(size, out)
        gathered = torch.index_select(gathered, axis + 1, rows.view(-1).to(self.device))
        shape = [1] * (dims + 1)
        shape[axis + 1] = out
        starts.append(start.view(shape).to(self.device))
        widths.append(widest)
    split = [planes.shape[0]]
    for out, widest in zip(output_size, widths):
        split += [out, widest]
    order = [0] + [1 + 2 * a for a in range(dims)] + [2 + 2 * a for a in range(dims)]
    view = gathered.view(split).permute(order)
    window_dims = list(range(dims + 1, 2 * dims + 1))
    pooled_shape = (planes.shape[0], *output_size)
    values.view(pooled_shape).copy_(reduce_into("max", view, window_dims, self.dtype).view(pooled_shape))
    positions = reduce_into("argmax", view, window_dims, torch.int64).view(pooled_shape)
    program, scalars = _index_program(widths, in_sizes)
    launch(indices.view(pooled_shape), [positions, *starts], program, torch.int64, scalars)
    return values, indices


def _adaptive_max_backward(grad_output, self, indices, dims):
    in_sizes = tuple(self.shape[-dims:])
    plane = math.prod(in_sizes)
    planes = self.numel() // plane if plane else 0
    grad = torch.zeros((planes, plane), dtype=_F32, device=self.device)
    if grad_output.numel() > 0:
        _ops.scatter(grad, 1, indices.reshape(planes, -1), grad_output.reshape(planes, -1).to(_F32), True)
    return grad.to(self.dtype).view(self.shape)


@impl("adaptive_max_pool2d")
def adaptive_max_pool2d(self, output_size):
    return _adaptive_max(self, output_size, 2, "adaptive_max_pool2d", (_F32, torch.bfloat16))


@impl("adaptive_max_pool2d_backward")
def adaptive_max_pool2d_backward(grad_output, self, indices):
    check_dtype(self, "adaptive_max_pool2d_backward", (_F32, torch.bfloat16))
    return _adaptive_max_backward(grad_output, self, indices, 2)


@impl("adaptive_max_pool3d")
def adaptive_max_pool3d(self, output_size):
    _check(self, output_size, 3, "adaptive_max_pool3d")
    check_dtype(self, "adaptive_max_pool3d_cpu", (_F32,))
    return _adaptive_max(self, output_size, 3, "adaptive_max_pool3d", (_F32,))


@impl("adaptive_max_pool3d_backward")
def adaptive_max_pool3d_backward(grad_output, self, indices):
    check_dtype(self, "adaptive_max_pool3d_backward_cpu", (_F32,))
    return _adaptive_max_backward(grad_output, self, indices, 3)
