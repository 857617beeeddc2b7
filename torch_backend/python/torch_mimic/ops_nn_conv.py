"""2-D convolution and its backward on the gemm primitive. PyTorch's at::convolution calls
convolution_overrideable for this device, and autograd's convolution_backward calls
convolution_backward_overrideable (1-D convolutions arrive viewed as 2-D).

Forward: im2col (a window view of the zero-padded input copied into dense columns), then per
group weight [O/g, K] @ columns [K, N*OH*OW]. Backward: grad_weight = grad_output @ columns^T,
grad_input = col2im(weight^T @ grad_output), grad_bias = sum of grad_output.

Transposed and 3-D convolutions run on the CPU. PyTorch's CPU kernels of the overrideable ops
only raise, so that fallback calls aten::convolution / convolution_backward there instead."""
import torch
from torch.utils._pytree import tree_map

from ._lib import FLOAT_DTYPES, empty, impl, launch
from ._windows import add_windows, crop, padded, windows
from .ops_reduce import reduce_into

_ops = torch.ops.mimic


def _is_native(input, weight, transposed):
    return (not transposed and input.dim() == 4 and input.dtype in FLOAT_DTYPES
            and weight.dtype == input.dtype)


def _on_cpu(name, op, args):
    """Runs ``op`` on CPU copies of ``args`` and moves its results back, counted as a fallback
    of ``name``."""
    _ops.fallback_note(name)
    device = next(a.device for a in args if isinstance(a, torch.Tensor))
    cpu_args = [a.cpu() if isinstance(a, torch.Tensor) else a for a in args]
    return tree_map(lambda t: t.to(device) if isinstance(t, torch.Tensor) else t, op(*cpu_args))


def _output_size(input, weight, stride, padding, dilation):
    return tuple((size + 2 * pad - dil * (k - 1) - 1) // s + 1
                 for size, k, s, pad, dil in zip(input.shape[2:], weight.shape[2:], stride, padding, dilation))


def _im2col(input, weight_shape, out_size, stride, padding, dilation, groups):
    """[g, C/g * KH * KW, N * OH * OW] columns: column (n, oh, ow) of group g holds the input
    window of output (n, oh, ow) over the group's channels, in the weight's (c, kh, kw) order."""
    batch, channels, height, width = input.shape
    kernel = tuple(weight_shape[2:])
    plane = padded(input, padding, (height + 2 * padding[0], width + 2 * padding[1]), 0.0)
    view = windows(plane, out_size, kernel, stride, dilation)
    grouped = view.view(batch, groups, channels // groups, *out_size, *kernel).permute(1, 2, 5, 6, 0, 3, 4)
    columns = empty(grouped.shape, input.dtype, input.device).copy_(grouped)
    return columns.view(groups, -1, batch * out_size[0] * out_size[1])


def _gemm(c, a, b):
    if c.numel() > 0:
        _ops.gemm(c, a, b, 1.0, 0.0)
    return c


@impl("convolution_overrideable")
def convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups):
    if not _is_native(input, weight, transposed):
        return _on_cpu("aten::convolution_overrideable", torch.ops.aten.convolution.default,
                       (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups))
    batch, out_channels = input.shape[0], weight.shape[0]
    out_size = _output_size(input, weight, stride, padding, dilation)
    columns = _im2col(input, weight.shape, out_size, stride, padding, dilation, groups)
    product = empty((groups, out_channels // groups, columns.shape[2]), input.dtype, input.device)
    _gemm(product, weight.reshape(groups, out_channels // groups, -1), columns)
    # product is [O, N, OH, OW]; the output is [N, O, OH, OW] with the bias added.
    arranged = product.view(out_channels, batch, *out_size).permute(1, 0, 2, 3)
    output = empty((batch, out_channels, *out_size), input.dtype, input.device)
    if bias is None:
        return output.copy_(arranged)
    return launch(output, [arranged, bias.view(1, -1, 1, 1)], "x0 x1 add", input.dtype)


@impl("convolution_backward_overrideable")
def convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
                                      output_padding, groups, output_mask):
    if not _is_native(input, weight, transposed):
        bias_sizes = [weight.shape[1] * groups if transposed else weight.shape[0]] if output_mask[2] else None
        return _on_cpu("aten::convolution_backward_overrideable", torch.ops.aten.convolution_backward.default,
                       (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
                        output_padding, groups, output_mask))
    rows = _grouped_rows(grad_output, groups)
    grads = [None, None, None]
    if output_mask[0]:
        grads[0] = _grad_input(rows, input, weight, grad_output.shape[2:], stride, padding, dilation, groups)
    if output_mask[1]:
        grads[1] = _grad_weight(rows, input, weight, grad_output.shape[2:], stride, padding, dilation, groups)
    if output_mask[2]:
        grads[2] = reduce_into("sum", grad_output, [0, 2, 3], grad_output.dtype).view(-1)
    return tuple(grads)


def _grouped_rows(grad_output, groups):
    """grad_output [N, O, OH, OW] as dense [g, O/g, N * OH * OW] rows, the layout the gemm
    products use."""
    batch, out_channels, out_h, out_w = grad_output.shape
    grouped = grad_output.view(batch, groups, out_channels // groups, out_h, out_w).permute(1, 2, 0, 3, 4)
    return grouped.contiguous().view(groups, out_channels // groups, -1)


def _grad_weight(rows, input, weight, out_size, stride, padding, dilation, groups):
    columns = _im2col(input, weight.shape, out_size, stride, padding, dilation, groups)
    grad_weight = empty((groups, rows.shape[1], columns.shape[1]), weight.dtype, weight.device)
    return _gemm(grad_weight, rows, columns.transpose(1, 2)).view(weight.shape)


def _grad_input(rows, input, weight, out_size, stride, padding, dilation, groups):
    """col2im of weight^T @ grad_output, accumulated in float32 on the padded plane."""
    batch, channels, height, width = input.shape
    kernel = tuple(weight.shape[2:])
    per_group = weight.reshape(groups, rows.shape[1], -1).transpose(1, 2)
    columns = _gemm(empty((groups, per_group.shape[1], rows.shape[2]), input.dtype, input.device), per_group, rows)
    # columns[g, (c, kh, kw), (n, oh, ow)] -> for each (kh, kw): [N, C, OH, OW]
    per_offset = columns.view(groups, channels // groups, *kernel, batch, *out_size)

    def values_at(kh, kw):
        return per_offset[:, :, kh, kw].permute(2, 0, 1, 3, 4).reshape(batch, channels, *out_size)

    plane = torch.zeros((batch, channels, height + 2 * padding[0], width + 2 * padding[1]), dtype=torch.float32,
                        device=input.device)
    add_windows(plane, values_at, out_size, kernel, stride, dilation)
    return crop(plane, padding, input.shape, input.dtype)
