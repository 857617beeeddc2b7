"""The row pass: float32 softmax, log_softmax, their backward, layer norm and its backward become
calls of the backend's row-primitive code (ops_nn, ops_nn_norm) with their arguments bound when
the graph is lowered, so a call skips the aten dispatcher and argument parsing; each is the one
fused row kernel that eager runs, with the same results bit for bit. Layer norm's backward puts
the weight and bias gradients in the rows of one [2, N] tensor, which one reduction of the row
kernel's partial sums fills (eager's separate tensors take one reduction each).

Not fused here: a pointwise prologue into a row kernel (the residual add before layer norm,
attention's dropout before softmax's backward). The row primitives read each operand from one
tensor; taking a program needs a prologue in torch_backend/ops/row_kernel.
"""
import math

import torch

from . import ops_nn, ops_nn_norm
from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta

ORDER = 40

_F32 = torch.float32


class RowKernel(Kernel):
    """A row op with its non-tensor arguments bound: ``run(*tensors)``."""

    kind = "row"

    def __init__(self, nodes, run, shape, program):
        super().__init__(nodes)
        self._run = run
        self.shape = torch.Size(shape)
        self.program = program  # what the kernel runs, for the report

    def __call__(self, *tensors):
        return self._run(*tensors)

    def describe(self):
        return dict(super().describe(), shape=tuple(self.shape), program=self.program)


def _float32(*values):
    for value in values:
        if value is None:
            continue
        meta = tensor_meta(value) if isinstance(value, torch.fx.Node) else None
        if meta is None or meta[1] != _F32:
            return False
    return True


def _softmax(values, log):
    x = values["self"]
    if values["half_to_float"] or not _float32(x):
        return None
    rank = len(tensor_meta(x)[0])
    dim = values["dim"]
    if not -max(rank, 1) <= dim < max(rank, 1):
        return None  # eager raises the IndexError
    dim %= max(rank, 1)

    def run(t):
        out = torch.empty(t.shape, dtype=_F32, device=t.device)
        return ops_nn._softmax_into(out, t, dim, log)

    return run, [x]


def _softmax_backward(values, log):
    grad, output = values["grad_output"], values["output"]
    if values["input_dtype"] != _F32 or not _float32(grad, output):
        return None
    shape = tensor_meta(output)[0]
    if tensor_meta(grad)[0] != shape:
        return None
    rank = len(shape)
    dim = values["dim"]
    if not -max(rank, 1) <= dim < max(rank, 1):
        return None
    dim %= max(rank, 1)

    def run(g, y):
        grad_input = torch.empty(y.shape, dtype=_F32, device=y.device)
        return ops_nn._softmax_grad_into(grad_input, g, y, dim, log)

    return run, [grad, output]


def _layer_norm(values):
    tensors = [values["input"], values["weight"], values["bias"]]
    if not _float32(*tensors):
        return None
    normalized, eps = list(values["normalized_shape"]), values["eps"]

    def run(x, weight, bias):
        return ops_nn_norm.native_layer_norm(x, normalized, weight, bias, eps)

    return run, tensors


def _layer_norm_backward(values):
    tensors = [values[n] for n in ("grad_out", "input", "mean", "rstd", "weight", "bias")]
    if not _float32(*tensors):
        return None
    normalized, mask = list(values["normalized_shape"]), list(values["output_mask"])
    shape = tensor_meta(values["input"])[0]
    axis = len(shape) - len(normalized)
    if axis < 0 or list(shape[axis:]) != normalized or shape.numel() == 0:
        return None  # eager's checks and its empty case
    cols = math.prod(normalized)
    rows = shape.numel() // cols
    wants = [mask[0], mask[1] and values["weight"] is not None,
             mask[2] and values["bias"] is not None]

    def run(grad, x, mean, rstd, weight, bias):
        device = x.device
        grad_input = torch.empty(shape, dtype=_F32, device=device) if wants[0] else None
        if wants[1] and wants[2]:
            # Rows of one tensor: one reduction sums both (torch_backend/ops/row.h).
            both = torch.empty((2, cols), dtype=_F32, device=device)
            grad_weight, grad_bias = both[0].view(weight.shape), both[1].view(bias.shape)
        else:
            grad_weight = torch.empty(weight.shape, dtype=_F32, device=device) if wants[1] else None
            grad_bias = torch.empty(bias.shape, dtype=_F32, device=device) if wants[2] else None
        if any(wants):
            torch.ops.mimic.layer_norm_backward(
                None if grad_input is None else grad_input.view(1, rows, cols),
                None if grad_weight is None else grad_weight.view(cols),
                None if grad_bias is None else grad_bias.view(cols),
                grad.reshape(1, rows, cols), x.reshape(1, rows, cols), mean.reshape(1, rows),
                rstd.reshape(1, rows), None if weight is None else weight.reshape(cols))
        return grad_input, grad_weight, grad_bias

    return run, tensors


_OPS = {
    "_softmax": lambda v: _softmax(v, log=False),
    "_log_softmax": lambda v: _softmax(v, log=True),
    "_softmax_backward_data": lambda v: _softmax_backward(v, log=False),
    "_log_softmax_backward_data": lambda v: _softmax_backward(v, log=True),
    "native_layer_norm": _layer_norm,
    "native_layer_norm_backward": _layer_norm_backward,
}


def run(graph):
    kernels = []
    for node in list(graph.nodes):
        lower = _OPS.get(aten_name(node))
        values = bound_arguments(node) if lower is not None else None
        found = lower(values) if values is not None else None
        if found is None:
            continue
        function, inputs = found
        program = " ".join(f"{k}={v}" for k, v in values.items()
                           if not isinstance(v, torch.fx.Node) and v is not None)
        kernel = RowKernel([str(node.target)], function, tensor_meta(inputs[0])[0],
                           f"{aten_name(node)} {program}")
        replace(graph, kernel, inputs, node, [node])
        kernels.append(kernel)
    return kernels
