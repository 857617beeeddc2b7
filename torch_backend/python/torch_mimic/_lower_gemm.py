"""The GEMM pass: float32 mm, addmm and bmm become one gemm launch each together with the work
around them that would otherwise cost launches and HBM round trips (torch_backend/ops/gemm.h):

- an epilogue: a fused pointwise kernel (_lower_pointwise) that is the only reader of the GEMM's
  output, directly or through reshapes of it (view, _unsafe_view, reshape, _reshape_alias), and
  computes over exactly that output's elements. Its program runs on each C tile before the tile
  is stored, the GEMM value as x0 and its other inputs read at C's coordinates. A bias added
  after mm is such a program (x0 x1 add, x1 the broadcast bias). The f32 accumulation is the
  same as the GEMM's alone and the program computes the same f32 operations on its value, so
  the result is bit-identical to the two launches.
- a permuted copy of the result: clone(transpose or permute of the result, maybe after
  reshapes), as attention merges its heads back, is written by the GEMM itself through C's
  strides (two strided batch dims where the copy's layout splits the batch), and the copy goes.
- views as strides (_gemm_views): an operand that eager copies to make it contiguous, clone(V) optionally
  followed by reshapes and transposes (the attention heads' clone/_unsafe_view of a transpose),
  is read from V through strides instead, when those views can be expressed as a strided
  matrix with at most two strided batch dims, and the clone and its views have no other user.
  The values read are the same; results are bit-identical unless the operands' new layout
  makes the GEMM compute C^T = B^T A^T (both transposed), which may change its tiles and so the
  order of its float32 sums (the bound of a reordered sum of K products).

Everything else is left to eager: other dtypes, GEMM outputs read by anything else, epilogues
that broadcast the GEMM value or reach it through transposes, 1 x K x 1 products (eager takes
the dot product kernel for those).
"""
import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, replace
from ._gemm_views import (F32, copied_layout, f32, layout_of, operand_view, reshape_shape,
                          shape_of, viewed)
from ._lower_pointwise import FusedKernel

ORDER = 20  # after the pointwise pass, whose kernels become epilogues

_MAX_INPUTS = 8  # kMaxElementwiseInputs (torch_backend/ops/elementwise_program.h), x0 included


def _gemm_call(node):
    """(a, b, bias, alpha, beta) of a float32 mm, addmm or bmm node, or None."""
    name = aten_name(node)
    if name not in ("mm", "addmm", "bmm") or not f32(node):
        return None
    values = bound_arguments(node)
    if values is None:
        return None
    if name == "addmm":
        a, b, bias = values["mat1"], values["mat2"], values["self"]
        alpha, beta = values["alpha"], values["beta"]
        if type(alpha) not in (int, float) or type(beta) not in (int, float) or not f32(bias):
            return None
    else:
        a, b, bias, alpha, beta = values["self"], values["mat2"], None, 1.0, 0.0
    if not (f32(a) and f32(b)):
        return None
    shape = shape_of(node)
    if name != "bmm" and shape[0] == 1 and shape[1] == 1:
        return None  # eager computes a 1 x K x 1 product as a dot product
    return a, b, bias, float(alpha), float(beta)


def _renumbered(program, first):
    """``program`` with input x<first> as x0 and the inputs before it moved up by one."""
    tokens = []
    for token in program.split(" "):
        if token.startswith("x") and token[1:].isdigit():
            index = int(token[1:])
            index = 0 if index == first else index + 1 if index < first else index
            token = f"x{index}"
        tokens.append(token)
    return " ".join(tokens)


def _epilogue(gemm):
    """(fused node, the reshape nodes between, the input position of the GEMM value) when the
    GEMM's only reader is a fused pointwise kernel over exactly its output, else None."""
    chain = []
    current = gemm
    while len(current.users) == 1:
        user = next(iter(current.users))
        if isinstance(user.target, FusedKernel):
            kernel = user.target
            if tuple(kernel.shape) != shape_of(current) or len(user.args) > _MAX_INPUTS:
                return None
            if list(user.args).count(current) != 1 or user.kwargs:
                return None
            if {"rand", "idx"} & set(kernel.program.split(" ")):
                return None  # C's tiles are not runs of its row-major element indices
            return user, chain, list(user.args).index(current)
        if reshape_shape(user) is None or user.args[0] is not current:
            return None
        chain.append(user)
        current = user
    return None


def _reshapes_to(node, out_shape, gemm_shape):
    """Whether the traced value of epilogue input ``node``, broadcast to ``out_shape``, views
    as ``gemm_shape`` without a copy."""
    layout = layout_of(node)
    if layout is None:
        return False
    probe = torch.empty_strided(layout[0], layout[1], dtype=F32, device="meta")
    try:
        probe.expand(out_shape).view(gemm_shape)
    except RuntimeError:
        return False
    return True


class GemmKernel(Kernel):
    """One gemm launch: out = program(alpha * a @ b + beta * bias, inputs..., scalars), with
    operands read through strides where eager copied them, the output in the shape its last
    reshape gave it (the GEMM's own when there is no epilogue), or written permuted into the
    contiguous copy that followed (``copy_shape``, seen as the result through ``copy_views``)."""

    kind = "gemm"

    def __init__(self, nodes, gemm_shape, out_shape, alpha, beta, has_bias, operand_views,
                 program=None, scalars=(), copy=None):
        super().__init__(nodes)
        self.copy_shape, self.copy_views = copy if copy is not None else (None, None)
        self.gemm_shape = torch.Size(gemm_shape)
        self.out_shape = torch.Size(out_shape)
        self.alpha = alpha
        self.beta = beta
        self.has_bias = has_bias
        self.operand_views = operand_views  # per operand (a, b): an OperandView or None
        self.program = program
        self.scalars = list(scalars)

    def __call__(self, *inputs):
        a, b = (view.apply(t) if view is not None else t
                for view, t in zip(self.operand_views, inputs[:2]))
        bias = inputs[2] if self.has_bias else None
        extras = inputs[3 if self.has_bias else 2:]
        if self.copy_shape is None:
            out = result = torch.empty(self.out_shape, dtype=F32, device=a.device)
        else:
            result = torch.empty(self.copy_shape, dtype=F32, device=a.device)
            out = viewed(result, self.copy_views)
        if out.numel() == 0:
            return result
        c = out if out.dim() == 4 and len(self.gemm_shape) == 3 else out.view(self.gemm_shape)
        if bias is not None:
            bias = bias.expand(self.gemm_shape)
        extras = [t.expand(self.out_shape).reshape(self.gemm_shape) for t in extras]
        operands = [a, b, c] + ([bias] if bias is not None else []) + extras
        if len(self.gemm_shape) == 2:
            operands = [t.unsqueeze(0) for t in operands]
        split = next((t.shape[:2] for t in operands[:3] if t.dim() == 4), None)
        if split is not None:  # two batch dims: every view is split the same way
            operands = [t if t.dim() == 4 else t.unflatten(0, split) for t in operands]
        a, b, c = operands[:3]
        bias = operands[3] if bias is not None else None
        extras = operands[4 if bias is not None else 3:]
        if self.program is None:
            torch.ops.mimic.gemm(c, a, b, self.alpha, self.beta, bias)
        else:
            torch.ops.mimic.gemm_epilogue(c, a, b, bias, self.alpha, self.beta, self.program,
                                          extras, self.scalars)
        return result

    def describe(self):
        return dict(super().describe(), program=self.program, shape=tuple(self.out_shape),
                    strided_operands=[v is not None for v in self.operand_views],
                    writes_permuted=self.copy_shape is not None)


def run(graph):
    """Rewrites ``graph`` in place: each GEMM with an epilogue or an operand read through
    strides becomes one GemmKernel call. Returns the kernels made, in graph order."""
    if not hasattr(torch.ops.mimic, "gemm_epilogue"):
        return []  # a library built before the primitive (this package over an older build)
    kernels = []
    for node in list(graph.nodes):
        call = _gemm_call(node)
        if call is None:
            continue
        a, b, bias, alpha, beta = call
        batched = aten_name(node) == "bmm"
        gemm_shape = shape_of(node)
        found = [operand_view(operand, batched) if a is not b else None for operand in (a, b)]
        splits = [f[3][:2] for f in found if f is not None and len(f[3]) == 4]
        if len(splits) == 2 and splits[0] != splits[1]:
            found[1] = None  # the GEMM's batch dims are split one way for every operand
        views, sources, operand_members = [], [], []
        for operand, operand_found in zip((a, b), found):
            if operand_found is None:
                views.append(None)
                sources.append(operand)
            else:
                source, view, replaced, _ = operand_found
                views.append(view)
                sources.append(source)
                operand_members += replaced
        epilogue = _epilogue(node)
        program, scalars, extras, out_shape, root = None, (), [], gemm_shape, node
        members = [node]
        if epilogue is not None:
            fused, chain, position = epilogue
            others = [x for i, x in enumerate(fused.args) if i != position]
            out_shape = tuple(fused.target.shape)
            if all(_reshapes_to(x, out_shape, gemm_shape) for x in others):
                program = _renumbered(fused.target.program, position)
                scalars = fused.target.scalars
                extras = others
                root = fused
                members = [fused] + list(reversed(chain)) + [node]
                kernel_nodes = [str(node.target)] + fused.target.nodes
            else:
                epilogue = None
        if epilogue is None:
            out_shape = gemm_shape
            kernel_nodes = [str(node.target)]
        copied = copied_layout(root, gemm_shape)
        split = next((f[3][:2] for f in found if f is not None and len(f[3]) == 4), None)
        if copied is not None and split is not None:
            c = viewed(torch.empty(shape_of(copied[0]), device="meta"), copied[2])
            if c.dim() == 4 and tuple(c.shape[:2]) != tuple(split):
                copied = None  # the batch would be split two ways
        copy = None
        if copied is not None:
            clone, chain, views_back = copied
            copy = (shape_of(clone), views_back)
            members = [clone] + list(reversed(chain)) + members
            kernel_nodes += [str(m.target) for m in chain + [clone]]
            root = clone
        elif epilogue is None and all(v is None for v in views):
            continue
        kernel_nodes += [str(m.target) for m in operand_members]
        kernel = GemmKernel(kernel_nodes, gemm_shape, out_shape, alpha, beta, bias is not None,
                            views, program, scalars, copy)
        inputs = sources + ([bias] if bias is not None else []) + extras
        kernels.append(kernel)
        replace(graph, kernel, inputs, root, members + operand_members)
    return kernels
