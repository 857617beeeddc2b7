"""The convolution pass: float32 2-D convolutions (groups 1, not transposed) and their backward
become kernels with fewer launches than the eager implementation (ops_nn_conv.py), computing
eager's float32 operations in eager's order, so results are bit-identical.

Forward: im2col into [N, C*KH*KW, OH*OW] columns, then one GEMM batched over N whose C is the
NCHW output itself and whose bias is the convolution's bias broadcast by stride 0. Eager's GEMM
writes [O, N*OH*OW] and a second launch permutes it and adds the bias. A 1x1 convolution with
stride 1 and no padding reads the input as its columns (no copy).

Backward: grad_output's dense rows are made once for both GEMMs (eager makes them once too).
The weight and bias gradients are eager's. The input gradient is eager's GEMM of weight^T and
grad_output, whose col2im (eager: a zero plane, KH*KW launches adding one kernel offset each, a
crop) becomes the GEMM writing into a zero plane and one reduction (ConvBackwardKernel.
_grad_input). A 3x3 convolution's backward launches 9 kernels instead of 17.
"""
import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._windows import padded, windows
from .ops_reduce import reduce_into

ORDER = 25  # independent of the other passes: it takes only convolution nodes

_F32 = torch.float32
_ops = torch.ops.mimic


def _geometry(values, input_node, weight_node):
    """(stride, padding, dilation) of a convolution this pass takes, or None."""
    if values is None or values["transposed"] or values["groups"] != 1:
        return None
    metas = [tensor_meta(n) if isinstance(n, torch.fx.Node) else None
             for n in (input_node, weight_node)]
    if any(m is None or m[1] != _F32 or len(m[0]) != 4 for m in metas):
        return None
    stride, padding, dilation = (tuple(values[k]) for k in ("stride", "padding", "dilation"))
    if not (len(stride) == len(padding) == len(dilation) == 2):
        return None
    if any(v < 0 for v in padding) or any(o != 0 for o in values["output_padding"]):
        return None
    return stride, padding, dilation


def _columns(x, kernel, out_size, stride, padding, dilation):
    """[N, C*KH*KW, OH*OW] columns of x: column (oh, ow) of batch n holds the input window of
    output (n, oh, ow) in the weight's (c, kh, kw) order."""
    batch, channels, height, width = x.shape
    if kernel == (1, 1) and stride == (1, 1) and padding == (0, 0) and x.is_contiguous():
        return x.view(batch, channels, height * width)
    plane = padded(x, padding, (height + 2 * padding[0], width + 2 * padding[1]), 0.0)
    view = windows(plane, out_size, kernel, stride, dilation).permute(0, 1, 4, 5, 2, 3)
    columns = torch.empty(view.shape, dtype=x.dtype, device=x.device).copy_(view)
    return columns.view(batch, -1, out_size[0] * out_size[1])


class ConvKernel(Kernel):
    """convolution(input, weight, bias) as im2col and one batched GEMM into the NCHW output."""

    kind = "conv"

    def __init__(self, nodes, stride, padding, dilation):
        super().__init__(nodes)
        self.stride, self.padding, self.dilation = stride, padding, dilation

    def __call__(self, x, weight, bias=None):
        batch = x.shape[0]
        out_channels = weight.shape[0]
        kernel = tuple(weight.shape[2:])
        out_size = tuple((size + 2 * pad - dil * (k - 1) - 1) // s + 1 for size, k, s, pad, dil
                         in zip(x.shape[2:], kernel, self.stride, self.padding, self.dilation))
        out = torch.empty((batch, out_channels, *out_size), dtype=_F32, device=x.device)
        if out.numel() == 0:
            return out
        columns = _columns(x, kernel, out_size, self.stride, self.padding, self.dilation)
        product = out.view(batch, out_channels, -1)
        a = weight.reshape(out_channels, -1).expand(batch, out_channels, columns.shape[1])
        if bias is None:
            _ops.gemm(product, a, columns, 1.0, 0.0)
        else:
            _ops.gemm(product, a, columns, 1.0, 1.0, bias.view(1, -1, 1).expand(product.shape))
        return out

    def describe(self):
        return dict(super().describe(), stride=self.stride, padding=self.padding,
                    dilation=self.dilation)


class ConvBackwardKernel(Kernel):
    """convolution_backward: eager's weight and bias gradients, the input gradient as one
    convolution of grad_output (see the module's docstring)."""

    kind = "conv_backward"

    def __init__(self, nodes, stride, padding, dilation, output_mask):
        super().__init__(nodes)
        self.stride, self.padding, self.dilation = stride, padding, dilation
        self.output_mask = list(output_mask)

    def __call__(self, grad_output, x, weight):
        grads = [None, None, None]
        if self.output_mask[0] or self.output_mask[1]:
            # grad_output as dense [O, N*OH*OW] rows, the layout both gradients' GEMMs read.
            rows = grad_output.permute(1, 0, 2, 3).contiguous().view(grad_output.shape[1], -1)
        if self.output_mask[1]:
            grads[1] = self._grad_weight(rows, grad_output, x, weight)
        if self.output_mask[0]:
            # The direct path reads grad_output in its own layout: the rows are freed first.
            kept = None if self._direct(weight, grad_output) else rows
            del rows
            grads[0] = self._grad_input(kept, grad_output, x, weight)
        if self.output_mask[2]:
            grads[2] = reduce_into("sum", grad_output, [0, 2, 3], _F32).view(-1)
        return tuple(grads)

    def _grad_weight(self, rows, grad_output, x, weight):
        """Eager's: the rows @ the input's [C*KH*KW, N*OH*OW] columns^T."""
        out_size = tuple(grad_output.shape[2:])
        kernel = tuple(weight.shape[2:])
        plane = padded(x, self.padding,
                       (x.shape[2] + 2 * self.padding[0], x.shape[3] + 2 * self.padding[1]), 0.0)
        view = windows(plane, out_size, kernel, self.stride, self.dilation).permute(1, 4, 5, 0, 2, 3)
        columns = torch.empty(view.shape, dtype=_F32, device=x.device).copy_(view)
        columns = columns.view(1, -1, rows.shape[1])
        grad_weight = torch.empty((1, rows.shape[0], columns.shape[1]), dtype=_F32, device=x.device)
        if grad_weight.numel() > 0:
            if rows.shape[1] == 0:
                grad_weight.zero_()
            else:
                _ops.gemm(grad_weight, rows.unsqueeze(0), columns.transpose(1, 2), 1.0, 0.0)
        return grad_weight.view(weight.shape)

    def _grad_input(self, rows, grad_output, x, weight):
        """col2im of weight^T @ grad_output with eager's float32 operations in eager's order.

        The products of eager's GEMM [C*KH*KW, N*OH*OW] land in a zero plane Z: product (m, n,
        oh, ow) at row top + oh*s, column left + ow*s of plane (m, n). Input row h takes offset
        kh's product from plane row top + h + p - kh*d, which lies in [0, rows) for every kh;
        the [N, C, H, W, KH, KW] view of those elements has the positive stride
        SKH - d*row_stride along kh, so one reduction over (kh, kw) adds each input element's
        products in eager's (kh, kw) order onto 0.

        With stride 1, Z may be laid out [M, rows, N, cols]: (oh, n) is then one batch dim of
        uniform stride, and one GEMM batched over it writes the products into Z from grad_output
        in [OH, N, O, OW] order (a copy of it, smaller than the products) (``_direct``).
        Otherwise the products are written densely from the rows and copied into a
        [M, N, rows, cols] Z. A 1x1
        kernel with stride 1 and no padding needs no plane: one GEMM per batch element writes
        the input gradient itself."""
        batch, channels, height, width = x.shape
        out_channels = weight.shape[0]
        kernel = tuple(weight.shape[2:])
        out_size = tuple(grad_output.shape[2:])
        if x.numel() == 0:
            return torch.empty(x.shape, dtype=_F32, device=x.device)
        if out_channels == 0 or grad_output.numel() == 0:
            return torch.zeros(x.shape, dtype=_F32, device=x.device)
        weight_t = weight.reshape(out_channels, -1).t()
        positions = kernel[0] * kernel[1]
        if positions == 1 and self.stride == (1, 1) and self.padding == (0, 0):
            grad_input = torch.empty(x.shape, dtype=_F32, device=x.device)
            per_batch = rows.view(out_channels, batch, -1).permute(1, 0, 2)
            _ops.gemm(grad_input.view(batch, channels, -1), weight_t.expand(batch, *weight_t.shape),
                      per_batch, 1.0, 0.0)
            return grad_input
        starts = tuple(max(0, d * (k - 1) - p) for k, p, d in zip(kernel, self.padding, self.dilation))
        extent = tuple(max(start + size + p, start + (out - 1) * s + 1) for start, size, p, out, s
                       in zip(starts, (height, width), self.padding, out_size, self.stride))
        if self._direct(weight, grad_output):
            plane = torch.zeros((channels * positions, extent[0], batch, extent[1]), dtype=_F32,
                                device=x.device)
            slab, rows_stride, batch_stride = plane.stride(0), plane.stride(1), plane.stride(2)
            if batch == 1:
                b = grad_output[0].permute(1, 0, 2)
            else:
                b = torch.empty((out_size[0], batch, out_channels, out_size[1]), dtype=_F32, device=x.device)
                b = b.copy_(grad_output.permute(2, 0, 1, 3)).view(-1, out_channels, out_size[1])
            c = plane.as_strided((out_size[0] * batch, plane.shape[0], out_size[1]), (batch_stride, slab, 1),
                                 starts[0] * rows_stride + starts[1])
            _ops.gemm(c, weight_t.expand(c.shape[0], *weight_t.shape), b, 1.0, 0.0)
            del b
        else:
            products = torch.empty((1, weight_t.shape[0], rows.shape[1]), dtype=_F32, device=x.device)
            _ops.gemm(products, weight_t.unsqueeze(0), rows.unsqueeze(0), 1.0, 0.0)
            plane = torch.zeros((channels * positions, batch, *extent), dtype=_F32, device=x.device)
            plane[:, :, starts[0]:starts[0] + (out_size[0] - 1) * self.stride[0] + 1:self.stride[0],
                  starts[1]:starts[1] + (out_size[1] - 1) * self.stride[1] + 1:self.stride[1]].copy_(
                      products.view(plane.shape[0], batch, *out_size))
            del products
            slab, rows_stride, batch_stride = plane.stride(0), plane.stride(2), plane.stride(1)
        gathered = plane.as_strided(
            (batch, channels, height, width, *kernel),
            (batch_stride, positions * slab, rows_stride, 1,
             kernel[1] * slab - self.dilation[0] * rows_stride, slab - self.dilation[1]),
            (starts[0] + self.padding[0]) * rows_stride + starts[1] + self.padding[1])
        return reduce_into("sum", gathered, [4, 5], _F32).view(x.shape)

    def _direct(self, weight, grad_output):
        """Whether the input gradient's GEMM writes into the plane itself (stride 1), which
        reads no rows. Its OH*N GEMMs each read the weight [M, O] again, P*O/OW bytes for
        products of P bytes, where the dense products cost 2P (written, then read by the copy)
        and memory beside the plane: taken where O <= 2*OW, the cheaper in traffic."""
        pointwise = weight.shape[2] * weight.shape[3] == 1 and self.padding == (0, 0)
        return (self.stride == (1, 1) and not pointwise
                and weight.shape[0] <= 2 * grad_output.shape[3])

    def describe(self):
        return dict(super().describe(), stride=self.stride, padding=self.padding,
                    dilation=self.dilation, output_mask=self.output_mask)


def _forward(node):
    values = bound_arguments(node)
    geometry = _geometry(values, values and values["input"], values and values["weight"])
    if geometry is None:
        return None
    bias = values["bias"]
    if bias is not None:
        meta = tensor_meta(bias) if isinstance(bias, torch.fx.Node) else None
        if meta is None or meta[1] != _F32 or len(meta[0]) != 1:
            return None
    out_meta = tensor_meta(node)
    if out_meta is None or out_meta[1] != _F32:
        return None
    kernel = ConvKernel([str(node.target)], *geometry)
    inputs = [values["input"], values["weight"]] + ([bias] if bias is not None else [])
    return kernel, inputs


def _backward(node):
    values = bound_arguments(node)
    geometry = _geometry(values, values and values["input"], values and values["weight"])
    if geometry is None:
        return None
    meta = tensor_meta(values["grad_output"]) if isinstance(values["grad_output"], torch.fx.Node) else None
    if meta is None or meta[1] != _F32 or len(meta[0]) != 4:
        return None
    kernel = ConvBackwardKernel([str(node.target)], *geometry, values["output_mask"])
    return kernel, [values["grad_output"], values["input"], values["weight"]]


def run(graph):
    kernels = []
    for node in list(graph.nodes):
        name = aten_name(node)
        if name == "convolution":
            found = _forward(node)
        elif name == "convolution_backward":
            found = _backward(node)
        else:
            continue
        if found is None:
            continue
        kernel, inputs = found
        replace(graph, kernel, inputs, node, [node])
        kernels.append(kernel)
    return kernels
