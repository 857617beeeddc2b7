"""The row pass: float32 softmax, log_softmax, their backward, layer norm and its backward become
calls of the backend's row-primitive code (ops_nn, ops_nn_norm) with their arguments bound when
the graph is lowered, so a call skips the aten dispatcher and argument parsing; each is the one
fused row kernel that eager runs, with the same results bit for bit. Layer norm's backward puts
the weight and bias gradients in the rows of one [2, N] tensor, which one reduction of the row
kernel's partial sums fills (eager's separate tensors take one reduction each).

A fused kernel that only adds two float32 tensors of the input's shape (the residual add
before a transformer's layer norm), or adds the second dropped out (x0 + x1 * (x2 / s0), dropout
then the add), is absorbed by layer norm: the row kernel computes the sum in the same float32
operations and writes it for the add's other readers (layer norm's backward), in one launch
instead of two, bit-identical (rows too long for the scratchpad are summed in other chunks,
within the bound of a reordered sum). Other prologues (attention's dropout before softmax's
backward, a gradient feeding layer norm's backward) stay kernels of their own: the row kernel
takes no general program.
"""
import math
import operator

import torch

from . import ops_nn, ops_nn_norm
from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._lower_pointwise import FusedKernel

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


# A residual's program -> whether it drops the residual out first (x0 + x1 * (x2 / s0)).
_RESIDUALS = {"x0 x1 add": False, "x0 x1 x2 s0 div mul add": True}


def _residual_arguments():
    """The argument names of the loaded library's layer_norm_residual, or none (a library built
    before it lowers the add and the layer norm apart, one before its mask the dropout's)."""
    try:
        schema = torch.ops.mimic.layer_norm_residual.default._schema
    except (AttributeError, RuntimeError):
        return ()
    return tuple(a.name for a in schema.arguments)


def _residual_layer_norm(node, values, order):
    """(kernel, inputs, the add's node) when native_layer_norm ``node`` reads a fused kernel that
    adds two float32 tensors of its input's shape: the row kernel then adds them itself and
    writes their sum for the add's other readers (layer_norm_residual), or None."""
    add = values["input"]
    fused = add.target if isinstance(add, torch.fx.Node) else None
    if not isinstance(fused, FusedKernel) or fused.program not in _RESIDUALS:
        return None
    dropout = _RESIDUALS[fused.program]
    arguments = _residual_arguments()
    if not arguments or (dropout and "mask" not in arguments):
        return None
    if len(fused.scalars) != dropout or (dropout and type(fused.scalars[0]) not in (int, float)):
        return None
    scale = float(fused.scalars[0]) if dropout else 1.0
    shape = tensor_meta(add)[0]
    normalized, eps = list(values["normalized_shape"]), values["eps"]
    axis = len(shape) - len(normalized)
    parameters = [values["weight"], values["bias"]]
    if (axis < 0 or list(shape[axis:]) != normalized or shape.numel() == 0
            or not _float32(*add.args, *parameters)
            or any(tensor_meta(a)[0] != shape for a in add.args)
            or any(isinstance(p, torch.fx.Node) and order[p] > order[add] for p in parameters)):
        return None
    cols = math.prod(normalized)
    rows = shape.numel() // cols
    stat_shape = list(shape[:axis]) + [1] * len(normalized)

    def run(*tensors):
        *rows_in, weight, bias = tensors
        device = rows_in[0].device
        out, total = (torch.empty(shape, dtype=_F32, device=device) for _ in range(2))
        mean, rstd = (torch.empty(stat_shape, dtype=_F32, device=device) for _ in range(2))
        a, b, *mask = (t.reshape(1, rows, cols) for t in rows_in)
        extra = {"mask": mask[0], "scale": scale} if dropout else {}
        torch.ops.mimic.layer_norm_residual(
            out.view(1, rows, cols), mean.view(1, rows), rstd.view(1, rows),
            total.view(1, rows, cols), a, b, None if weight is None else weight.reshape(cols),
            None if bias is None else bias.reshape(cols), eps, **extra)
        return out, mean, rstd, total

    nodes = fused.nodes + [str(node.target)]
    kernel = RowKernel(nodes, run, shape, f"{fused.program} -> native_layer_norm "
                       f"normalized_shape={normalized} eps={eps}")
    return kernel, list(add.args) + parameters, add


def _fuse_residual(graph, node, kernel, inputs, add):
    """Puts ``kernel`` where the add was; its fourth output, the sum, stands for the add."""
    with graph.inserting_before(add):
        fused = graph.call_function(kernel, tuple(inputs))
        total = graph.call_function(operator.getitem, (fused, 3))
    fused.meta = dict(node.meta)
    total.meta = dict(add.meta)
    node.replace_all_uses_with(fused)
    graph.erase_node(node)
    add.replace_all_uses_with(total)
    graph.erase_node(add)


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
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in list(graph.nodes):
        if aten_name(node) == "native_layer_norm":
            values = bound_arguments(node)
            found = _residual_layer_norm(node, values, order) if values is not None else None
            if found is not None:
                _fuse_residual(graph, node, *found)
                kernels.append(found[0])
                continue
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
