"""The reduction pass: float32 sum and mean (over dims or the whole tensor) become one call of
the reduce primitive each, with no dispatcher round trip, absorbing what the primitive can
compute in the same launch (torch_backend/ops/reduce.h):

- a prologue: a fused pointwise kernel read by nothing but the reduction whose program is one
  of the primitive's maps (x0 x1 mul -> mul, x0 x0 mul -> square, x0 abs -> abs, the squared
  difference x0 x1 sub x0 x1 sub mul -> sqdiff). Its output is then never written: the
  reduction reads its inputs instead. Other programs stay a kernel of
  their own (the primitive has no general program map).
- an epilogue: a fused kernel whose only input is a reduction read by nothing else and whose
  program is a division by a scalar, then optionally a square root (x0 s0 div sqrt): the
  primitive's divisor and root, the same float32 operations in the same order, so
  bit-identical. A mean's own division, or a multiplication, combines with a scalar that is a
  power of two only: scaling by it is exact, so the one division rounds as eager's two
  operations do (except for results in the subnormal range).

A bias gradient (the sum over rows of a value GEMMs also read) reads the materialised value:
recomputing its prologue in the reduction would need that general program map, and reading one
float32 value costs no more HBM than reading the prologue's inputs.

Results equal eager's where no prologue was absorbed (eager's sum and mean are this primitive
with the same dims and divisor); an absorbed prologue may change the reduction's tiling and so
its summation order, within the bound of a reordered float32 sum.
"""
import math

import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._lower_pointwise import FusedKernel

ORDER = 30  # after the pointwise pass, whose kernels become prologues and epilogues

_F32 = torch.float32
# A prologue program -> (map, its inputs as indices of the kernel's inputs: in, other).
_MAPS = {"x0 x1 mul": ("mul", (0, 1)), "x0 x0 mul": ("square", (0,)), "x0 abs": ("abs", (0,)),
         "x0 x1 sub x0 x1 sub mul": ("sqdiff", (0, 1))}
# An epilogue program -> (its scaling: div or mul by s0, or None; whether it roots).
_EPILOGUES = {"x0 s0 div": ("div", False), "x0 s0 mul": ("mul", False), "x0 sqrt": (None, True),
              "x0 s0 div sqrt": ("div", True), "x0 s0 mul sqrt": ("mul", True)}


_maps = None


def reduce_maps():
    """The map names the loaded library's reduce primitive takes (one built before
    reduce_maps has the first four)."""
    global _maps
    if _maps is None:
        try:
            _maps = frozenset(torch.ops.mimic.reduce_maps())
        except (AttributeError, RuntimeError):
            _maps = frozenset({"", "abs", "square", "mul"})
    return _maps


class ReduceKernel(Kernel):
    """One reduce-primitive launch: out[kept] = sum(map(in, other)) / divisor, rooted with
    ``sqrt``, viewed as the reduction's result shape."""

    kind = "reduce"

    def __init__(self, nodes, in_shape, dims, keepdim, mean):
        super().__init__(nodes)
        self.in_shape = torch.Size(in_shape)
        self.dims = list(dims)
        self.kept = [1 if d in self.dims else s for d, s in enumerate(in_shape)]
        self.final = self.kept if keepdim else [s for d, s in enumerate(in_shape)
                                                if d not in self.dims]
        count = 1
        for d in self.dims:
            count *= in_shape[d]
        self.divisor = float(count) if mean else 1.0
        self.map = ""
        self.sqrt = False
        self.prologue = None  # the absorbed program, for the report

    def __call__(self, x, other=None):
        out = torch.empty(self.kept, dtype=_F32, device=x.device)
        if out.numel() > 0:
            if x.shape != self.in_shape:
                x = x.expand(self.in_shape)
            if other is not None and other.shape != self.in_shape:
                other = other.expand(self.in_shape)
            torch.ops.mimic.reduce(out, x, self.dims, "sum", self.map, other, self.divisor,
                                   self.sqrt)
        return out.view(self.final)

    def describe(self):
        program = f"{self.prologue or 'x0'} -> sum over {self.dims}"
        if self.divisor != 1.0:
            program += f" / {self.divisor:g}"
        return dict(super().describe(), shape=tuple(self.final), map=self.map,
                    divisor=self.divisor, sqrt=self.sqrt,
                    program=program + (" sqrt" if self.sqrt else ""))


def _reduction(node):
    """(input node, dims, keepdim, mean) of a float32 sum or mean this pass takes, or None."""
    name = aten_name(node)
    if name not in ("sum", "mean"):
        return None
    values = bound_arguments(node)
    source = values.get("self") if values is not None else None
    meta = tensor_meta(source) if isinstance(source, torch.fx.Node) else None
    out_meta = tensor_meta(node)
    if (meta is None or out_meta is None or meta[1] != _F32 or out_meta[1] != _F32
            or values.get("dtype") not in (None, _F32)):
        return None
    shape = meta[0]
    rank = len(shape)
    dim = values.get("dim")
    if not dim:  # sum.default, or an empty dim list: every dim
        dims = list(range(rank))
    else:
        if rank == 0 or any(not -rank <= d < rank for d in dim):
            return None
        dims = sorted({d % rank for d in dim})
    return source, shape, dims, bool(values.get("keepdim", False)), name == "mean"


def _prologue(source):
    """(map, inputs) when ``source`` is a fused kernel only the reduction reads whose program is
    a primitive map over float32 inputs, or None."""
    kernel = source.target
    if not isinstance(kernel, FusedKernel) or len(source.users) != 1 or kernel.scalars:
        return None
    found = _MAPS.get(kernel.program)
    if found is None or found[0] not in reduce_maps():
        return None
    map_name, picks = found
    inputs = [source.args[i] for i in picks]
    for value in inputs:
        meta = tensor_meta(value) if isinstance(value, torch.fx.Node) else None
        if meta is None or meta[1] != _F32:
            return None
    return map_name, inputs


def _power_of_two(value):
    return (type(value) in (int, float) and value != 0 and math.isfinite(value)
            and math.frexp(abs(value))[0] == 0.5)


def _epilogue(node, kernel):
    """(user node, divisor, sqrt) when ``node``'s only user is a fused kernel this reduction can
    finish with, or None."""
    if len(node.users) != 1:
        return None
    user = next(iter(node.users))
    fused = user.target
    if not isinstance(fused, FusedKernel) or list(user.args) != [node]:
        return None
    found = _EPILOGUES.get(fused.program)
    if found is None or tuple(fused.shape) != tuple(kernel.final):
        return None
    op, sqrt = found
    divisor = kernel.divisor
    if op is not None:
        scalar = fused.scalars[0]
        if op == "div" and divisor == 1.0 and type(scalar) in (int, float):
            divisor = float(scalar)
        elif _power_of_two(scalar):
            # Scaling by a power of two commutes with rounding (outside the subnormal range):
            # one division by the scaled divisor rounds as the division then the scaling do.
            divisor = divisor * scalar if op == "div" else divisor / scalar
        else:
            return None  # two roundings where eager rounds twice
    return user, divisor, sqrt


def run(graph):
    kernels = []
    for node in list(graph.nodes):
        found = _reduction(node)
        if found is None:
            continue
        source, shape, dims, keepdim, mean = found
        kernel = ReduceKernel([str(node.target)], shape, dims, keepdim, mean)
        inputs, members = [source], [node]
        prologue = _prologue(source)
        if prologue is not None:
            kernel.map, inputs = prologue
            kernel.prologue = source.target.program
            kernel.nodes = source.target.nodes + kernel.nodes
            members.append(source)
        root = node
        epilogue = _epilogue(node, kernel)
        if epilogue is not None:
            user, kernel.divisor, kernel.sqrt = epilogue
            kernel.nodes += user.target.nodes
            # The reduction leaves the graph after its user, which reads it.
            members.insert(0, user)
            root = user
        replace(graph, kernel, inputs, root, members)
        kernels.append(kernel)
    return kernels
