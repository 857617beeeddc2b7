"""3-D max pooling with indices and its backward.

The forward reduces the [N, C, OT, OH, OW, KT, KH, KW] window view of the input, padded with
-inf, with max and argmax. The argmax is a position inside the window; a table over (output
position, window position), built on the device from per-axis coordinates, turns it into the
flat t*H*W + h*W + w position in the input volume that PyTorch returns. A window position in
the padding maps to the window's first position inside the input: where PyTorch's CPU kernel
leaves the index when every value it sees is -inf. The backward scatter-adds the gradient at
those positions, in float32 because overlapping windows can pick the same element."""
import torch

from ._dtype_checks import check_dtype
from ._lib import empty, impl, launch
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32


def _triple(values, message, default=None):
    values = [values] if isinstance(values, int) else list(values)
    if not values and default is not None:
        return default
    if len(values) not in (1, 3):
        raise RuntimeError(message)
    return (values[0], values[-2], values[-1]) if len(values) == 3 else (values[0],) * 3


def _args(kernel_size, stride, padding, dilation):
    kernel = _triple(kernel_size, "max_pool3d: kernel_size must either be a single int, or a tuple of three ints")
    stride = _triple(stride, "max_pool3d: stride must either be omitted, a single int, or a tuple of three ints",
                     kernel)
    padding = _triple(padding, "max_pool3d: padding must be either be a single int, or a tuple of three ints")
    dilation = _triple(dilation, "max_pool3d: dilation must be either a single int, or a tuple of three ints")
    return kernel, stride, padding, dilation


def _pooled_size(size, kernel, pad, stride, dilation, ceil_mode):
    """PyTorch's pooling_output_shape, with its checks."""
    if stride == 0:
        raise RuntimeError("stride should not be zero")
    if pad < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {pad}")
    if pad > kernel // 2:
        raise RuntimeError(f"pad should be at most half of kernel size, but got pad={pad} and kernel_size={kernel}")
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _check_dtype(x):
    check_dtype(x, "max_pool3d_with_indices_cpu", (_F32,))


def _geometry(self, kernel_size, stride, padding, dilation, ceil_mode, fn_name):
    """The batch view [N, C, T, H, W] of ``self`` and the output size, checked in the order of
    PyTorch's max_pool3d_with_indices_out_cpu_template and pool3d_shape_check."""
    kernel, stride, padding, dilation = _args(kernel_size, stride, padding, dilation)
    if self.dim() not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    out_size = tuple(_pooled_size(size, k, p, s, d, ceil_mode)
                     for size, k, p, s, d in zip(self.shape[-3:], kernel, padding, stride, dilation))
    if min(kernel) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got kT: %d kH: %d kW: %d" % kernel)
    if min(stride) <= 0:
        raise RuntimeError("stride should be greater than zero, but got dT: %d dH: %d dW: %d" % stride)
    if min(dilation) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got dilationT: %d dilationH: %d "
                           "dilationW: %d" % dilation)
    for i, size in enumerate(self.shape):
        if size <= 0 and not (self.dim() == 5 and i == 0):
            raise RuntimeError(f"{fn_name}: Expected input's non-batch dimensions to have positive length, but input "
                               f"has a shape of {list(self.shape)} and non-batch dimension {size} has length zero!")
    if any(k // 2 < p for k, p in zip(kernel, padding)):
        raise RuntimeError("pad should be smaller than or equal to half of kernel size, but got kT: %d kW: %d kH: %d "
                           "padT: %d padW: %d padH: %d" % (kernel[0], kernel[2], kernel[1],
                                                           padding[0], padding[2], padding[1]))
    if min(out_size) < 1:
        sizes = "x".join(map(str, self.shape[-4:]))
        raise RuntimeError(f"Given input size: ({sizes}). Calculated output size: "
                           f"({self.shape[-4]}x{'x'.join(map(str, out_size))}). Output size is too small")
    batch = self if self.dim() == 5 else self.unsqueeze(0)
    return batch, out_size, kernel, stride, padding, dilation


def _window_view(batch, out_size, kernel, stride, padding, dilation):
    """The [N, C, OT, OH, OW, KT, KH, KW] windows of ``batch`` padded with -inf."""
    extent = [max(size + 2 * p, (o - 1) * s + d * (k - 1) + 1)
              for size, o, k, s, p, d in zip(batch.shape[2:], out_size, kernel, stride, padding, dilation)]
    plane = batch
    if tuple(extent) != tuple(batch.shape[2:]):
        plane = torch.full((*batch.shape[:2], *extent), float("-inf"), dtype=batch.dtype, device=batch.device)
        t, h, w = batch.shape[2:]
        plane[:, :, padding[0]:padding[0] + t, padding[1]:padding[1] + h, padding[2]:padding[2] + w].copy_(batch)
    strides = plane.stride()
    sizes = (*plane.shape[:2], *out_size, *kernel)
    view_strides = (strides[0], strides[1], *(s * st for s, st in zip(stride, strides[2:])),
                    *(d * st for d, st in zip(dilation, strides[2:])))
    return plane.as_strided(sizes, view_strides, plane.storage_offset())


def _axis_tables(size, out, kernel, stride, pad, dilation):
    """Per axis, [out, kernel] input coordinates of every window position (outside [0, size) in
    the padding) and [out, 1] the first coordinate of each window inside the input."""
    start = torch.arange(out) * stride - pad
    coords = start[:, None] + torch.arange(kernel)[None, :] * dilation
    first = start + torch.clamp(-start + dilation - 1, min=0) // dilation * dilation
    return coords, first[:, None]


# x0..x2 the window position's t, h, w; x3..x5 the window's first t, h, w inside the input.
_VALID = "x0 0 ge x0 s0 lt and x1 0 ge and x1 s1 lt and x2 0 ge and x2 s2 lt and"
_TABLE = f"{_VALID} x0 s3 mul x1 s2 mul add x2 add x3 s3 mul x4 s2 mul add x5 add where"


def _index_table(in_size, out_size, kernel, stride, padding, dilation, device):
    """[OT*OH*OW, KT*KH*KW] int64: the flat input position of each window position."""
    tables = [_axis_tables(*args) for args in zip(in_size, out_size, kernel, stride, padding, dilation)]
    coords, firsts = [], []
    for axis, (coord, first) in enumerate(tables):
        shape = [1] * 6
        shape[axis], shape[axis + 3] = coord.shape
        coords.append(coord.view(shape).to(device))
        firsts.append(first.view(shape[:3] + [1, 1, 1]).to(device))
    table = empty((*out_size, *kernel), torch.int64, device)
    launch(table, coords + firsts, _TABLE, torch.int64, [in_size[0], in_size[1], in_size[2], in_size[1] * in_size[2]])
    return table.view(-1)


@impl("max_pool3d_with_indices")
def max_pool3d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    batch, out_size, kernel, stride, padding, dilation = _geometry(
        self, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d_with_indices_out_cpu_template()")
    _check_dtype(self)
    shape = (*batch.shape[:2], *out_size)
    out_shape = (*self.shape[:-3], *out_size)
    values = empty(out_shape, self.dtype, self.device)
    indices = empty(out_shape, torch.int64, self.device)
    if values.numel() == 0:
        return values, indices
    view = _window_view(batch, out_size, kernel, stride, padding, dilation)
    reduced = reduce_into("max", view, [5, 6, 7], self.dtype)
    values.view(shape).copy_(reduced.view(shape))
    positions = reduce_into("argmax", view, [5, 6, 7], torch.int64).view(-1)
    table = _index_table(batch.shape[2:], out_size, kernel, stride, padding, dilation, self.device)
    window, per_plane = kernel[0] * kernel[1] * kernel[2], out_size[0] * out_size[1] * out_size[2]
    # Row (idx % per_plane) of the table, column positions[idx].
    flat = launch(empty(positions.shape, torch.int64, self.device), [positions], "idx s0 rem s1 mul x0 add",
                  torch.int64, [per_plane, window])
    _ops.index_select(indices.view(-1), table, 0, flat)
    return values, indices


@impl("max_pool3d_with_indices_backward")
def max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    batch, out_size, *_ = _geometry(self, kernel_size, stride, padding, dilation, ceil_mode,
                                    "max_pool3d_with_indices_backward_out_cpu_template()")
    _check_dtype(self)
    expected = (*self.shape[:-3], *out_size)
    if tuple(grad_output.shape) != expected or tuple(indices.shape) != expected:
        raise RuntimeError(f"Expected grad_output and indices of size {list(expected)}, but got "
                           f"{list(grad_output.shape)} and {list(indices.shape)}")
    planes = batch.shape[0] * batch.shape[1]
    volume = batch.shape[2] * batch.shape[3] * batch.shape[4]
    grad = torch.zeros((planes, volume), dtype=_F32, device=self.device)
    if grad_output.numel() > 0:
        _ops.scatter(grad, 1, indices.reshape(planes, -1), grad_output.reshape(planes, -1).to(_F32), True)
    return grad.to(self.dtype).view(self.shape)
