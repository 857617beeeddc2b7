"""The pointwise pass: trees of pointwise aten nodes whose ops the C++ op table defines become
one elementwise program each.

A producer is inlined into its consumer when the consumer is its only user, so a value needed
elsewhere (by another node or as a graph output) ends its tree: one program has one output.
Only float32 values are fused; the table's programs computed in float32 round every step to
float32, as the eager kernels do, so fused results are bit-identical to eager.
"""
import torch

from . import _op_table
from ._compile_graph import Kernel, bound_arguments, replace, tensor_meta

ORDER = 10  # first: later passes absorb its kernels (epilogues, prologues)

_MAX_INPUTS = 8   # kMaxElementwiseInputs (torch_backend/ops/elementwise_program.h)
_MAX_SCALARS = 8  # kMaxElementwiseScalars
_SCALAR_TYPES = (int, float, bool)


def _is_one(value):
    return type(value) in _SCALAR_TYPES and value == 1


# The variant rules of torch_backend/aten/pointwise_variant.cpp that this lowering reproduces:
# name -> (schema arguments read, choose(values) -> variant, or None when the call is not fused).
# Ops the C++ rules decide but that are missing here are not fused (_RULED_ELSEWHERE).
def _alpha(values):
    alpha = values[0]
    if alpha is None or _is_one(alpha):
        return ""
    return "alpha" if type(alpha) in _SCALAR_TYPES else None


def _rounding(values):
    return "" if values[0] is None else None


def _square(values):
    exponent = values[0]
    return "square" if type(exponent) in _SCALAR_TYPES and exponent == 2 else ""


def _clamp(values):
    low, high = values[0] is not None, values[1] is not None
    return "min max" if low and high else "min" if low else "max" if high else None


def _approximate(values):
    return {None: "none", "none": "none", "tanh": "tanh"}.get(values[0])


def _single(values):
    return ""


def _boolean_mask(values):
    mask, value = values
    meta = tensor_meta(mask) if isinstance(mask, torch.fx.Node) else None
    boolean = meta is not None and meta[1] == torch.bool
    return "" if boolean and type(value) in _SCALAR_TYPES else None


_RULES = {
    "add": (("alpha",), _alpha),
    "sub": (("alpha",), _alpha),
    "div": (("rounding_mode",), _rounding),
    "pow": (("exponent",), _square),
    "clamp": (("min", "max"), _clamp),
    "gelu": (("approximate",), _approximate),
    "gelu_backward": (("approximate",), _approximate),
    "leaky_relu_backward": (("self_is_result",), _single),
    "masked_fill": (("mask", "value"), _boolean_mask),
}
_RULED_ELSEWHERE = frozenset({"fill", "bitwise_not", "elu_backward", "log_sigmoid_backward",
                              "round"})


def table_entry(name, values):
    """The pointwise table entry a call of aten op ``name`` with schema argument ``values`` (a
    dict) selects, or None when no entry computes it exactly."""
    if name in _RULED_ELSEWHERE:
        return None
    ruled, choose = _RULES.get(name, ((), _single))
    variant = choose([values.get(argument) for argument in ruled])
    if variant is None:
        return None
    entry = _op_table.op_table().get((name, variant))
    return entry if entry is not None and entry.kind == "pointwise" else None


class _Call:
    """One pointwise node mapped onto its table entry: its operands in the entry's order, each a
    tensor node or a Python number."""

    def __init__(self, node, entry, operands):
        self.node = node
        self.entry = entry
        self.operands = operands


def pointwise_call(node):
    """The table entry and operands of ``node``, or None when it cannot be fused exactly."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return None
    schema = node.target._schema
    if not schema.name.startswith("aten::") or len(schema.returns) != 1:
        return None
    if any(a.is_out or (a.alias_info is not None and a.alias_info.is_write)
           for a in schema.arguments):
        return None
    name = schema.name[len("aten::"):]
    values = bound_arguments(node)
    if values is None:
        return None
    entry = table_entry(name, values)
    if entry is None:
        return None
    # Every argument must mean something to the entry or the rule, as the C++ kernel requires.
    known = set(entry.operands) | set(_RULES.get(name, ((),))[0])
    if any(argument not in known for argument in values):
        return None
    operands = [values[name] for name in entry.operands]
    for name, operand in zip(entry.operands, operands):
        if isinstance(operand, torch.fx.Node):
            # Bool operands that do not take part in promotion (where's condition, a fill mask)
            # are read as 0 or 1 and compared with 0 by the program, as the eager kernel does.
            meta = tensor_meta(operand)
            allowed = (torch.float32,) if name in entry.promoted else (torch.float32, torch.bool)
            if meta is None or meta[1] not in allowed:
                return None
        elif type(operand) not in _SCALAR_TYPES:
            return None
    if not any(isinstance(operand, torch.fx.Node) for operand in operands):
        return None
    meta = tensor_meta(node)
    if meta is None or meta[1] != torch.float32:
        return None
    return _Call(node, entry, operands)


class FusedKernel(Kernel):
    """One elementwise program over fresh float32 output of a fixed shape: the runtime of a
    fused tree. Inputs are broadcast by stride 0, as eager's kernels broadcast them."""

    kind = "pointwise"
    # An input that dies here and owns its memory is written in place when it is a contiguous
    # float32 tensor of the output's shape (every element is read before it is written).
    writes_in_place = True

    def __init__(self, program, shape, scalars, nodes):
        super().__init__(nodes)
        self.program = program
        self.shape = torch.Size(shape)
        self.scalars = list(scalars)

    def __call__(self, *inputs):
        shape = self.shape
        out = None
        if self.reuse is not None:
            dying = inputs[self.reuse]
            if dying.shape == shape and dying.dtype == torch.float32 and dying.is_contiguous():
                out = dying
        if out is None:
            out = torch.empty(shape, dtype=torch.float32, device=inputs[0].device)
        if out.numel() == 0:
            return out
        expanded = [t if t.shape == shape else t.expand(shape) for t in inputs]
        torch.ops.mimic.elementwise(out, expanded, self.program, torch.float32, self.scalars, 0, 0)
        return out

    def describe(self):
        return dict(super().describe(), program=self.program, shape=tuple(self.shape))


class _Tree:
    """A fused tree under construction: its root call, the external tensor inputs (x0, x1, ...)
    and the scalars (s0, s1, ...) its program reads."""

    def __init__(self, root, replaced):
        self.root = root
        self.replaced = replaced  # roots of earlier trees -> the fused nodes standing for them
        self.inputs = []
        self.scalars = []
        self.members = []


def _input_token(tree, node):
    node = tree.replaced.get(node, node)
    if node not in tree.inputs:
        tree.inputs.append(node)
    return f"x{tree.inputs.index(node)}"


def _expression(tree, call, inlined):
    """The program text of ``call`` with inlined producers substituted: RPN composes by
    replacing an operand placeholder with the producer's whole expression."""
    tree.members.append(call.node)
    tokens = []
    for operand in call.operands:
        if isinstance(operand, torch.fx.Node) and operand in inlined:
            tokens.append(_expression(tree, inlined[operand], inlined))
        elif isinstance(operand, torch.fx.Node):
            tokens.append(_input_token(tree, operand))
        else:
            tree.scalars.append(operand)
            tokens.append(f"s{len(tree.scalars) - 1}")
    text = call.entry.program
    for index in reversed(range(len(tokens))):
        text = text.replace("{" + str(index) + "}", tokens[index])
    return text


def _limits(call, inlined, producer):
    """Inputs and scalars the tree of ``call`` would read with ``producer`` inlined as well."""
    inputs, scalars = set(), 0
    stack = [call]
    while stack:
        current = stack.pop()
        for operand in current.operands:
            if isinstance(operand, torch.fx.Node):
                if operand in inlined or operand is producer.node:
                    stack.append(inlined.get(operand, producer))
                else:
                    inputs.add(operand)
            else:
                scalars += 1
    return len(inputs), scalars


def run(graph):
    """Rewrites ``graph`` in place: each fused tree becomes one call of a FusedKernel. Returns
    the kernels made, in graph order."""
    calls = {}
    for node in graph.nodes:
        call = pointwise_call(node)
        if call is not None:
            calls[node] = call
    # inlined[producer] = its call, for producers whose only user is a fusible consumer.
    inlined = {}
    for node in graph.nodes:
        call = calls.get(node)
        if call is None:
            continue
        for operand in dict.fromkeys(o for o in call.operands if isinstance(o, torch.fx.Node)):
            producer = calls.get(operand)
            if producer is None or len(operand.users) != 1:
                continue
            inputs, scalars = _limits(call, inlined, producer)
            if inputs <= _MAX_INPUTS and scalars <= _MAX_SCALARS:
                inlined[operand] = producer
    kernels = []
    replaced = {}
    for node in list(graph.nodes):
        call = calls.get(node)
        if call is None or node in inlined:
            continue
        tree = _Tree(call, replaced)
        program = _expression(tree, call, inlined)
        shape, _ = tensor_meta(node)
        kernel = FusedKernel(program, shape, tree.scalars,
                             [str(m.target) for m in reversed(dict.fromkeys(tree.members))])
        kernels.append(kernel)
        replaced[node] = replace(graph, kernel, tree.inputs, node, tree.members)
    return kernels
