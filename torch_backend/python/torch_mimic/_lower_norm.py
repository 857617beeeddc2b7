"""The batch-norm pass: float32 batch norm in training, forward and backward, with eager's float32
operations in eager's order (ops_nn_norm.py), so results are bit-identical, in fewer launches.

Forward (eager 8 launches, plus one for a following ReLU): the sum; the squared deviations,
computing the mean sum * (1/n) inline; their sum; the saved mean and invstd as the two rows of
one [2, C] launch (a row select by the element's index); the running mean and variance updates
in place; the normalised, affine output with a fused pointwise kernel that reads it and nothing
else absorbed (ReLU, a residual add and ReLU): 7.

Backward (eager's 5 launches): the same launches; when every reader of the input gradient is a
lowered convolution backward, the input gradient is written channels first ([C, N, H, W] in
memory, NCHW-shaped), the dense rows that backward's GEMMs read, so that it makes no copy.
"""
import operator

import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, tensor_meta
from ._lower_conv import ConvBackwardKernel
from ._lower_pointwise import FusedKernel
from .ops_reduce import reduce_into

ORDER = 45  # after the conv pass (its backward kernels read the input gradient) and the
# pointwise pass (whose kernels become the forward's epilogues)

_F32 = torch.float32
_MAX_INPUTS = 8  # kMaxElementwiseInputs
_ops = torch.ops.mimic


def _reciprocal(count):
    return 1.0 / count if count else float("nan")  # statistics of nothing are NaN, as eager's


def _launch(out, inputs, program, scalars=()):
    if out.numel() > 0:
        shape = out.shape
        expanded = [t if t.shape == shape else t.expand(shape) for t in inputs]
        _ops.elementwise(out, expanded, program, _F32, list(scalars), 0, 0)
    return out


def _per_channel(tensor, rank):
    return None if tensor is None else tensor.view([1, -1] + [1] * (rank - 2))


def _affine(program, inputs, weight, bias):
    for tensor, token in ((weight, "mul"), (bias, "add")):
        if tensor is not None:
            program += f" x{len(inputs)} {token}"
            inputs.append(tensor)
    return program


def renumber(program, mapping):
    """``program`` with each input token x<i> replaced by ``mapping[i]`` (text)."""
    tokens = []
    for token in program.split():
        if token[0] == "x" and token[1:].isdigit():
            tokens.append(mapping[int(token[1:])])
        else:
            tokens.append(token)
    return " ".join(tokens)


class BatchNormKernel(Kernel):
    """native_batch_norm in training: (output, save_mean, save_invstd); the running statistics
    are updated in place as eager's op updates them. ``epilogue``, when a pointwise kernel was
    absorbed, is the whole output program: the kernel's, with the normalisation in place of the
    batch norm's output and its other inputs after the batch norm's."""

    kind = "batch_norm"

    def __init__(self, nodes, has, momentum, eps, epilogue=None):
        super().__init__(nodes)
        self.has = has  # which of weight, bias, running_mean, running_var are given
        self.momentum, self.eps = float(momentum), float(eps)
        self.epilogue, self.scalars = epilogue, []

    def __call__(self, x, *rest):
        rest = list(rest)
        weight, bias, running_mean, running_var = (rest.pop(0) if given else None for given in self.has)
        extra = rest
        rank, channels = x.dim(), x.shape[1]
        dims = [0] + list(range(2, rank))
        count = x.numel() // channels if channels else 0
        reciprocal = _reciprocal(count)
        total = reduce_into("sum", x, dims, _F32)
        squares = _launch(torch.empty(x.shape, dtype=_F32, device=x.device), [x, total],
                          "x0 x1 s0 mul sub x0 x1 s0 mul sub mul", [reciprocal])
        deviations = reduce_into("sum", squares, dims, _F32)
        del squares
        stats = torch.empty((2, channels), dtype=_F32, device=x.device)
        _launch(stats, [total.view(1, -1), deviations.view(1, -1)],
                "idx s2 lt x0 s0 mul x1 s0 mul s1 add rsqrt where", [reciprocal, self.eps, channels])
        mean, invstd = stats[0], stats[1]
        if running_mean is not None:
            _launch(running_mean, [running_mean, mean], "x0 s0 mul x1 s1 mul add",
                    [1.0 - self.momentum, self.momentum])
        if running_var is not None:
            _launch(running_var, [running_var, deviations.view(-1)], "x0 s0 mul x1 s2 div s1 mul add",
                    [1.0 - self.momentum, self.momentum, count - 1])
        inputs = [x, _per_channel(mean, rank), _per_channel(invstd, rank)]
        program = _affine("x0 x1 sub x2 mul", inputs, _per_channel(weight, rank), _per_channel(bias, rank))
        scalars = []
        if self.epilogue is not None:
            program, scalars = self.epilogue.program, self.epilogue.scalars
            inputs += extra
        output = _launch(torch.empty(x.shape, dtype=_F32, device=x.device), inputs, program, scalars)
        return output, mean, invstd

    def describe(self):
        described = dict(super().describe(), momentum=self.momentum, eps=self.eps)
        if self.epilogue is not None:
            described["program"] = self.epilogue.program
        return described


class _Epilogue:
    """The output program with an absorbed pointwise kernel, and that kernel's scalars."""

    def __init__(self, program, scalars):
        self.program = program
        self.scalars = list(scalars)


class BatchNormBackwardKernel(Kernel):
    """native_batch_norm_backward in training: eager's launches; the input gradient channels
    first when ``channels_first``."""

    kind = "batch_norm_backward"

    def __init__(self, nodes, has_weight, output_mask, channels_first):
        super().__init__(nodes)
        self.has_weight = has_weight
        self.output_mask = list(output_mask)
        self.channels_first = channels_first

    def __call__(self, grad_out, x, save_mean, save_invstd, weight=None):
        rank = x.dim()
        dims = [0] + list(range(2, rank))
        mean, invstd = _per_channel(save_mean, rank), _per_channel(save_invstd, rank)
        grad_sum = reduce_into("sum", grad_out, dims, _F32)
        centered = _launch(torch.empty(x.shape, dtype=_F32, device=x.device), [grad_out, x, mean],
                           "x1 x2 sub x0 mul")
        dot = reduce_into("sum", centered, dims, _F32)
        del centered
        grads = [None, None, None]
        if self.output_mask[0]:
            grads[0] = self._grad_input(grad_out, x, mean, invstd, grad_sum, dot, weight)
        if self.output_mask[1]:
            grads[1] = _launch(torch.empty((x.shape[1],), dtype=_F32, device=x.device),
                               [dot.view(-1), save_invstd], "x0 x1 mul")
        if self.output_mask[2]:
            grads[2] = grad_sum.view(-1)
        return tuple(grads)

    def _grad_input(self, grad_out, x, mean, invstd, grad_sum, dot, weight):
        if self.channels_first:
            order = [1, 0] + list(range(2, x.dim()))
            shape = [x.shape[i] for i in order]
            grad_input = torch.empty(shape, dtype=_F32, device=x.device).permute(order)
        else:
            grad_input = torch.empty(x.shape, dtype=_F32, device=x.device)
        inputs = [grad_out, x, mean, invstd, grad_sum, dot]
        program = _affine("x0 x4 s0 mul sub x1 x2 sub x3 x3 mul mul x5 s0 mul mul sub x3 mul", inputs,
                          _per_channel(weight, x.dim()), None)
        count = x.numel() // x.shape[1] if x.shape[1] else 0
        return _launch(grad_input, inputs, program, [_reciprocal(count)])

    def describe(self):
        return dict(super().describe(), channels_first=self.channels_first)


def _float32(node, rank=None):
    meta = tensor_meta(node) if isinstance(node, torch.fx.Node) else None
    return meta is not None and meta[1] == _F32 and (rank is None or len(meta[0]) == rank)


def _getitems(node):
    """{index: getitem node} of a node returning a tuple, or None when something else reads it."""
    found = {}
    for user in node.users:
        if user.op != "call_function" or user.target is not operator.getitem:
            return None
        found[user.args[1]] = user
    return found


def _epilogue(output):
    """The fused pointwise node that alone reads the batch norm's ``output`` (a getitem node),
    when it can be absorbed, else None."""
    if output is None or len(output.users) != 1:
        return None
    user = next(iter(output.users))
    kernel = user.target
    if not isinstance(kernel, FusedKernel) or tuple(tensor_meta(output)[0]) != tuple(kernel.shape):
        return None
    return user


def _output_program(has, user):
    """The normalisation's program with ``user``'s program on it (None: no user), and the
    user's other inputs, which follow the batch norm's."""
    program, count = "x0 x1 sub x2 mul", 3
    for given, token in zip(has[:2], ("mul", "add")):
        if given:
            program += f" x{count} {token}"
            count += 1
    if user is None:
        return program, []
    output = next(a for a in user.args if isinstance(a, torch.fx.Node) and a.target is operator.getitem)
    mapping, extra = {}, []
    for index, value in enumerate(user.args):
        if value is output:
            mapping[index] = program
        else:
            mapping[index] = f"x{count + len(extra)}"
            extra.append(value)
    return renumber(user.target.program, mapping), extra


def _forward(graph, node, order):
    values = bound_arguments(node)
    if values is None or values["training"] is not True or not _float32(node.args[0]):
        return None
    if len(tensor_meta(node.args[0])[0]) < 2 or values["momentum"] is None:
        return None
    optional = [values[k] for k in ("weight", "bias", "running_mean", "running_var")]
    if any(v is not None and not _float32(v, 1) for v in optional):
        return None
    items = _getitems(node)
    if items is None:
        return None
    inputs = [node.args[0]] + [v for v in optional if v is not None]
    kernel = BatchNormKernel([str(node.target)], [v is not None for v in optional], values["momentum"],
                             values["eps"])
    user = _epilogue(items.get(0))
    anchor = node
    if user is not None:
        program, extra = _output_program(kernel.has, user)
        later = [n for i, n in items.items() if i != 0 for n in n.users]
        later += [n for v in optional[2:] if v is not None for n in v.users if n is not node]
        if (len(inputs) + len(extra) <= _MAX_INPUTS
                and all(order[n] > order[user] for n in later)):
            kernel.epilogue = _Epilogue(program, user.target.scalars)
            kernel.nodes += user.target.nodes
            inputs += extra
            anchor = user
        else:
            user = None
    with graph.inserting_before(anchor):
        fused = graph.call_function(kernel, tuple(inputs))
        fused.meta = dict(node.meta)
        outputs = [graph.call_function(operator.getitem, (fused, i)) for i in range(3)]
    for index, new in enumerate(outputs):
        old = items.get(index)
        if index == 0 and user is not None:
            new.meta = dict(user.meta)
            user.replace_all_uses_with(new)
            graph.erase_node(user)
        elif old is not None:
            new.meta = dict(old.meta)
            old.replace_all_uses_with(new)
        if old is not None:
            graph.erase_node(old)
        if not new.users:
            graph.erase_node(new)
    graph.erase_node(node)
    return kernel


def _backward(graph, node):
    values = bound_arguments(node)
    if values is None or values["train"] is not True:
        return None
    tensors = [values[k] for k in ("grad_out", "input", "save_mean", "save_invstd")]
    if not all(_float32(t) for t in tensors) or len(tensor_meta(tensors[1])[0]) < 2:
        return None
    weight = values["weight"]
    if weight is not None and not _float32(weight, 1):
        return None
    items = _getitems(node)
    if items is None:
        return None
    grad_input = items.get(0)
    channels_first = (grad_input is not None and len(tensor_meta(tensors[1])[0]) == 4
                      and all(isinstance(u.target, ConvBackwardKernel) and u.args[0] is grad_input
                              and grad_input not in u.args[1:] for u in grad_input.users)
                      and bool(grad_input.users))
    kernel = BatchNormBackwardKernel([str(node.target)], weight is not None, values["output_mask"],
                                     channels_first)
    inputs = tensors + ([weight] if weight is not None else [])
    with graph.inserting_before(node):
        fused = graph.call_function(kernel, tuple(inputs))
    fused.meta = dict(node.meta)
    node.replace_all_uses_with(fused)
    graph.erase_node(node)
    return kernel


def run(graph):
    kernels = []
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in list(graph.nodes):
        name = aten_name(node)
        if name == "native_batch_norm":
            kernel = _forward(graph, node, order)
        elif name == "native_batch_norm_backward":
            kernel = _backward(graph, node)
        else:
            continue
        if kernel is not None:
            kernels.append(kernel)
    return kernels
