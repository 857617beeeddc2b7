"""2-D max, average and adaptive average pooling with their backward.

Max and average pooling reduce the [N, C, OH, OW, KH, KW] window view of the padded input
(padding -inf for max, 0 for average). Max pooling's indices come from argmax over the window,
converted to flat h*W+w positions in the input plane; its backward scatter-adds at those
positions. Average pooling's backward adds the scaled gradient back over the windows (col2im).
Adaptive average pooling is separable, out = A_h @ x @ A_w^T with averaging matrices: two gemms
forward and two backward."""
import torch

from ._lib import empty, impl, launch
from ._windows import add_windows, crop, padded, window_extent, windows
from .ops_nn import require_float
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32


# --- arguments and shapes ------------------------------------------------------------------


def _pair(values, message, default=None):
    values = [values] if isinstance(values, int) else list(values)
    if not values and default is not None:
        return default
    if len(values) not in (1, 2):
        raise RuntimeError(message)
    return (values[0], values[-1])


def _pool_args(name, kernel_size, stride, padding, dilation=(1,)):
    kernel = _pair(kernel_size, f"{name}: kernel_size must either be a single int, or a tuple of two ints")
    stride = _pair(stride, f"{name}: stride must either be omitted, a single int, or a tuple of two ints", kernel)
    padding = _pair(padding, f"{name}: padding must either be a single int, or a tuple of two ints")
    dilation = _pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two ints")
    return kernel, stride, padding, dilation


def _pooled_size(size, kernel, pad, stride, dilation, ceil_mode):
    """PyTorch's pooling_output_shape: with ceil_mode the last window must start inside the
    input or its left padding."""
    out = (size + 2 * pad - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _as_batch(input):
    """A [C, H, W] input as a batch of one; non-empty planes, as PyTorch's pool2d_shape_check wants."""
    if input.dim() not in (3, 4) or any(size == 0 for size in input.shape[-3:]):
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:"
                           f"{list(input.shape)}")
    return input if input.dim() == 4 else input.unsqueeze(0)


def _out_size(batch, kernel, stride, padding, dilation, ceil_mode):
    for values, what in ((kernel, "kernel size"), (stride, "stride"), (dilation, "dilation")):
        if min(values) <= 0:
            raise RuntimeError(f"{what} should be greater than zero, but got {values}")
    if kernel[0] // 2 < padding[0] or kernel[1] // 2 < padding[1]:
        raise RuntimeError(f"pad should be smaller than or equal to half of kernel size, but got padW = {padding[1]}, "
                           f"padH = {padding[0]}, kW = {kernel[1]}, kH = {kernel[0]}")
    out_size = tuple(_pooled_size(*args, ceil_mode) for args in zip(batch.shape[2:], kernel, padding, stride,
                                                                     dilation))
    if min(out_size) < 1:
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, batch.shape[1:]))}). Calculated output size: "
                           f"({batch.shape[1]}x{out_size[0]}x{out_size[1]}). Output size is too small")
    return out_size


def _extent(batch, out_size, kernel, stride, padding, dilation):
    """The padded plane's size: the padded input, grown where ceil_mode windows reach past it."""
    return tuple(max(size + 2 * pad, window_extent(out, k, s, d))
                 for size, out, k, s, pad, d in zip(batch.shape[2:], out_size, kernel, stride, padding, dilation))


def _check_grad_shape(grad_output, batch, out_size):
    expected = (batch.shape[0], batch.shape[1], *out_size)
    if tuple(grad_output.reshape(-1, *grad_output.shape[-3:]).shape) != expected:
        raise RuntimeError(f"Expected grad_output of size {list(expected)}, but got {list(grad_output.shape)}")


# --- max pooling ---------------------------------------------------------------------------


def _window_starts(out_size, stride, pad, dilation):
    """Per output position along one axis: the window's first input row (negative inside the
    padding) and its first row inside the input, as [out_size] int64 host tensors."""
    start = torch.arange(out_size) * stride - pad
    skipped = torch.clamp(-start + dilation - 1, min=0) // dilation  # padding rows before the input
    return start, start + skipped * dilation


# h = row_start + (k / KW) dh and w = col_start + (k % KW) dw for the in-window position k; the
# index is h*W + w, or the window's first position inside the input when the argmax fell on the
# padding (every value -inf), which is where PyTorch's CPU kernel leaves it.
_H = "x1 x0 s0 div s1 mul add"
_W = "x2 x0 s0 rem s2 mul add"
_PLANE_INDEX = (f"{_H} 0 ge {_H} s3 lt and {_W} 0 ge and {_W} s4 lt and "
                f"{_H} s4 mul {_W} add x3 where")


def _plane_indices(positions, in_size, kernel, stride, padding, dilation):
    """In-window argmax positions kh*KW + kw to flat positions h*W + w in the input plane."""
    (row_start, first_row), (col_start, first_col) = (
        _window_starts(out, s, p, d) for out, s, p, d in zip(positions.shape[2:], stride, padding, dilation))
    first_valid = first_row[:, None] * in_size[1] + first_col[None, :]
    inputs = [positions] + [t.to(positions.device) for t in (row_start[:, None], col_start[None, :], first_valid)]
    indices = empty(positions.shape, torch.int64, positions.device)
    return launch(indices, inputs, _PLANE_INDEX, torch.int64,
                  [kernel[1], dilation[0], dilation[1], in_size[0], in_size[1]])


@impl("max_pool2d_with_indices")
def max_pool2d_with_indices(self, kernel_size, stride=(), padding=(0,), dilation=(1,), ceil_mode=False):
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    batch = _as_batch(self)
    require_float(self, "max_pool2d")
    out_size = _out_size(batch, kernel, stride, padding, dilation, ceil_mode)
    extent = _extent(batch, out_size, kernel, stride, padding, dilation)
    view = windows(padded(batch, padding, extent, float("-inf")), out_size, kernel, stride, dilation)
    shape = (batch.shape[0], batch.shape[1], *out_size)
    values = reduce_into("max", view, [4, 5], self.dtype).view(shape)
    positions = reduce_into("argmax", view, [4, 5], torch.int64).view(shape)
    indices = _plane_indices(positions, batch.shape[2:], kernel, stride, padding, dilation)
    out_shape = self.shape[:-2] + out_size
    return values.view(out_shape), indices.view(out_shape)


@impl("max_pool2d_with_indices_backward")
def max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode,
                                     indices):
    kernel, stride, padding, dilation = _pool_args("max_pool2d", kernel_size, stride, padding, dilation)
    batch = _as_batch(self)
    _check_grad_shape(grad_output, batch, _out_size(batch, kernel, stride, padding, dilation, ceil_mode))
    planes, plane_size = batch.shape[0] * batch.shape[1], batch.shape[2] * batch.shape[3]
    # Overlapping windows can pick the same element: accumulate, in float32.
    grad = torch.zeros((planes, plane_size), dtype=_F32, device=self.device)
    if grad_output.numel() > 0:
        _ops.scatter(grad, 1, indices.reshape(planes, -1), grad_output.reshape(planes, -1).to(_F32), True)
    return grad.to(self.dtype).view(self.shape)


# --- average pooling -----------------------------------------------------------------------


def _avg_divisors(batch, out_size, kernel, stride, padding, count_include_pad):
    """[OH, OW] float32 divisors as PyTorch's avg_pool2d computes them: the window clipped to the
    padded input (count_include_pad) or to the input itself."""
    per_axis = []
    for size, out, k, s, pad in zip(batch.shape[2:], out_size, kernel, stride, padding):
        start = torch.arange(out) * s - pad
        end = torch.clamp(start + k, max=size + pad)
        if not count_include_pad:
            start, end = torch.clamp(start, min=0), torch.clamp(end, max=size)
        per_axis.append(end - start)
    return (per_axis[0][:, None] * per_axis[1][None, :]).to(_F32).to(batch.device)


def _avg_args(kernel_size, stride, padding, divisor_override):
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride, padding, _ = _pool_args("avg_pool2d", kernel_size, stride, padding)
    return kernel, stride, padding


def _divide(out, sums, divisors, divisor_override, compute=_F32):
    if divisor_override is not None:
        return launch(out, [sums], "x0 s0 div", compute, [divisor_override])
    return launch(out, [sums, divisors], "x0 x1 div", compute)


@impl("avg_pool2d")
def avg_pool2d(self, kernel_size, stride=(), padding=(0,), ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    kernel, stride, padding = _avg_args(kernel_size, stride, padding, divisor_override)
    batch = _as_batch(self)
    # int64 as PyTorch's CPU kernel computes it: an int64 sum divided with truncation.
    compute = torch.int64 if self.dtype == torch.int64 else _F32
    if compute != torch.int64:
        require_float(self, "avg_pool2d")
    out_size = _out_size(batch, kernel, stride, padding, (1, 1), ceil_mode)
    extent = _extent(batch, out_size, kernel, stride, padding, (1, 1))
    view = windows(padded(batch, padding, extent, 0.0), out_size, kernel, stride, (1, 1))
    sums = reduce_into("sum", view, [4, 5], compute).view(batch.shape[0], batch.shape[1], *out_size)
    divisors = _avg_divisors(batch, out_size, kernel, stride, padding, count_include_pad)
    output = empty(self.shape[:-2] + out_size, self.dtype, self.device)
    _divide(output.view(sums.shape), sums, divisors.to(compute), divisor_override, compute)
    return output


@impl("avg_pool2d_backward")
def avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    kernel, stride, padding = _avg_args(kernel_size, stride, padding, divisor_override)
    batch = _as_batch(self)
    out_size = _out_size(batch, kernel, stride, padding, (1, 1), ceil_mode)
    _check_grad_shape(grad_output, batch, out_size)
    divisors = _avg_divisors(batch, out_size, kernel, stride, padding, count_include_pad)
    grad = grad_output.reshape(batch.shape[0], batch.shape[1], *out_size)
    scaled = _divide(empty(grad.shape, _F32, self.device), grad, divisors, divisor_override)
    extent = _extent(batch, out_size, kernel, stride, padding, (1, 1))
    plane = torch.zeros((batch.shape[0], batch.shape[1], *extent), dtype=_F32, device=self.device)
    add_windows(plane, lambda kh, kw: scaled, out_size, kernel, stride, (1, 1))
    return crop(plane, padding, batch.shape, self.dtype).view(self.shape)


# --- adaptive average pooling --------------------------------------------------------------


def _averaging_matrix(in_size, out_size, device):
    """[out_size, in_size] float32 matrix whose row i averages the input cells
    [floor(i*in/out), ceil((i+1)*in/out))."""
    matrix = torch.zeros(out_size, in_size)
    for i in range(out_size):
        start, end = (i * in_size) // out_size, -(-(i + 1) * in_size // out_size)
        matrix[i, start:end] = 1.0 / (end - start)
    return matrix.to(device)


def _check_adaptive(self, output_size):
    if len(output_size) != 2:
        raise RuntimeError("adaptive_avg_pool2d: output_size must be 2")
    if self.dim() not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got {list(self.shape)}")
    if self.shape[-1] == 0 or self.shape[-2] == 0:
        raise RuntimeError("adaptive_avg_pool2d(): Expected input to have non-zero size for non-batch dimensions, "
                           f"but input has sizes {list(self.shape)} with an empty plane dimension")
    require_float(self, "adaptive_avg_pool2d")


def _separable(x, left, right):
    """left @ x[b] @ right for every b of x [B, H, W], in float32."""
    batches = x.shape[0]
    partial = empty((batches, x.shape[1], right.shape[1]), _F32, x.device)
    result = empty((batches, left.shape[0], right.shape[1]), _F32, x.device)
    if partial.numel() > 0 and result.numel() > 0:
        _ops.gemm(partial, x, right.expand(batches, *right.shape), 1.0, 0.0)
        _ops.gemm(result, left.expand(batches, *left.shape), partial, 1.0, 0.0)
    return result


@impl("_adaptive_avg_pool2d")
def adaptive_avg_pool2d(self, output_size):
    _check_adaptive(self, output_size)
    height, width = self.shape[-2:]
    rows = _averaging_matrix(height, output_size[0], self.device)
    cols = _averaging_matrix(width, output_size[1], self.device)
    planes = self.reshape(-1, height, width).to(_F32)
    pooled = _separable(planes, rows, cols.t())
    return pooled.to(self.dtype).view(*self.shape[:-2], *output_size)


@impl("_adaptive_avg_pool2d_backward")
def adaptive_avg_pool2d_backward(grad_output, self):
    height, width = self.shape[-2:]
    out_h, out_w = grad_output.shape[-2:]
    rows = _averaging_matrix(height, out_h, self.device)
    cols = _averaging_matrix(width, out_w, self.device)
    grad = grad_output.reshape(-1, out_h, out_w).to(_F32)
    return _separable(grad, rows.t(), cols).to(self.dtype).view(self.shape)
