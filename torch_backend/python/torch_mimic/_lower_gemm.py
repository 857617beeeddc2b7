"""The GEMM pass: float32 mm, addmm and bmm become one gemm launch each together with the work
around them that would otherwise cost launches and HBM round trips (torch_backend/ops/gemm.h):

- an epilogue: a fused pointwise kernel (_lower_pointwise) that is the only reader of the GEMM's
  output, directly or through reshapes of it (view, _unsafe_view, reshape, _reshape_alias), and
  computes over exactly that output's elements. Its program runs on each C tile before the tile
  is stored, the GEMM value as x0 and its other inputs read at C's coordinates. A bias added
  after mm is such a program (x0 x1 add, x1 the broadcast bias). The f32 accumulation is the
  same as the GEMM's alone and the program computes the same f32 operations on its value, so
  the result is bit-identical to the two launches.
- a permuted copy of the result: clone(transpose or permute of the result), as attention merges
  its heads back, is written by the GEMM itself through C's strides, and the copy goes.
- views as strides: an operand that eager copies to make it contiguous, clone(V) optionally
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

from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._lower_pointwise import FusedKernel

ORDER = 20  # after the pointwise pass, whose kernels become epilogues

_F32 = torch.float32
_MAX_INPUTS = 8  # kMaxElementwiseInputs (torch_backend/ops/elementwise_program.h), x0 included
_RESHAPES = frozenset({"view", "_unsafe_view", "reshape", "_reshape_alias"})
_PERMUTES = frozenset({"transpose", "t", "permute"})
_VIEWS = _RESHAPES | _PERMUTES | {"expand"}


def _f32(node):
    meta = tensor_meta(node) if isinstance(node, torch.fx.Node) else None
    return meta is not None and meta[1] == _F32


def _shape(node):
    return tuple(tensor_meta(node)[0])


def _layout(node):
    """(shape, strides) of a node's traced value, or None."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if isinstance(value, torch.Tensor):
        return tuple(value.shape), tuple(value.stride())
    meta = node.meta.get("tensor_meta") if isinstance(node, torch.fx.Node) else None
    if meta is not None and hasattr(meta, "stride"):
        return tuple(meta.shape), tuple(meta.stride)
    return None


def _gemm_call(node):
    """(a, b, bias, alpha, beta) of a float32 mm, addmm or bmm node, or None."""
    name = aten_name(node)
    if name not in ("mm", "addmm", "bmm") or not _f32(node):
        return None
    values = bound_arguments(node)
    if values is None:
        return None
    if name == "addmm":
        a, b, bias = values["mat1"], values["mat2"], values["self"]
        alpha, beta = values["alpha"], values["beta"]
        if type(alpha) not in (int, float) or type(beta) not in (int, float) or not _f32(bias):
            return None
    else:
        a, b, bias, alpha, beta = values["self"], values["mat2"], None, 1.0, 0.0
    if not (_f32(a) and _f32(b)):
        return None
    shape = _shape(node)
    if name != "bmm" and shape[0] == 1 and shape[1] == 1:
        return None  # eager computes a 1 x K x 1 product as a dot product
    return a, b, bias, float(alpha), float(beta)


def _reshape_steps(node):
    """The shape a reshape node gives, or None when it is not a plain reshape of a contiguous
    value (a _reshape_alias must give contiguous strides)."""
    name = aten_name(node)
    if name not in _RESHAPES:
        return None
    shape = _shape(node)
    if name == "_reshape_alias":
        expected, step = [], 1
        for size in reversed(shape):
            expected.insert(0, step)
            step *= size
        if [s for s, n in zip(node.args[2], shape) if n != 1] != \
                [s for s, n in zip(expected, shape) if n != 1]:
            return None
    return shape


# --- views as strides -------------------------------------------------------------------------

def _permutation(node):
    """The dims order of a transpose, t or permute node."""
    name = aten_name(node)
    rank = len(_shape(node))
    if name == "t":
        return list(reversed(range(rank)))
    if name == "permute":
        return [d % rank for d in node.args[1]]
    order = list(range(rank))
    d0, d1 = node.args[1] % rank, node.args[2] % rank
    order[d0], order[d1] = order[d1], order[d0]
    return order


def _regroup(dims, shape):
    """Dims (each a list of (size, stride) atoms, outer first) reshaped to ``shape``, splitting
    atoms where a new dim ends inside one; None when the sizes do not divide."""
    atoms = [atom for dim in dims for atom in dim if atom[0] != 1]
    result = []
    for size in shape:
        group, need = [], size
        while need > 1:
            if not atoms:
                return None
            s, stride = atoms[0]
            if s <= need:
                if need % s:
                    return None
                group.append((s, stride))
                need //= s
                atoms.pop(0)
            else:
                if s % need:
                    return None
                group.append((need, stride * (s // need)))
                atoms[0] = (s // need, stride)
                need = 1
        result.append(group)
    return result if not atoms else None


def _numel(group):
    count = 1
    for size, _ in group:
        count *= size
    return count


def _merged(group):
    """A dim's atoms with neighbours that are contiguous with each other merged."""
    merged = []
    for s, stride in group:
        if merged and merged[-1][1] == s * stride:
            merged[-1] = (merged[-1][0] * s, stride)
        else:
            merged.append((s, stride))
    return merged


class _Layout:
    """The shape and strides of a traced value, as _strided_operand reads a tensor's."""

    def __init__(self, shape, strides):
        self.shape = shape
        self._strides = strides

    def stride(self):
        return self._strides


def _strided_operand(source, steps, batched):
    """``source`` seen through ``steps`` (("reshape", shape) or ("permute", order)) as
    (sizes, strides) of a [rows, cols] or [batch, rows, cols] operand, the batch possibly two
    strided dims ([batch0, batch1, rows, cols]); None when the views need more than that."""
    dims = [[(s, st)] for s, st in zip(source.shape, source.stride())]
    for kind, value in steps:
        if kind == "reshape":
            dims = _regroup(dims, value)
        elif kind == "permute":
            dims = [dims[d] for d in value]
        else:  # expand: new leading dims and size-1 dims broadcast with stride 0
            dims = [[(1, 0)]] * (len(value) - len(dims)) + dims
            dims = [dim if size == -1 or _numel(dim) == size else [(size, 0)]
                    for dim, size in zip(dims, value)]
        if dims is None:
            return None
    sizes, strides = [], []
    for index, group in enumerate(dims):
        group = _merged([atom for atom in group if atom[0] != 1]) or [(1, 0)]
        is_batch = batched and index == 0
        if len(group) > (2 if is_batch else 1):
            return None
        if is_batch and len(group) == 1:
            group = [(1, 0)] + group
        sizes += [s for s, _ in group]
        strides += [st for _, st in group]
    return sizes, strides


class _OperandView:
    """How a GEMM operand is read from the tensor its eager copy was made of."""

    def __init__(self, steps, batched):
        self.steps = steps
        self.batched = batched

    def apply(self, source):
        """The operand as a strided view of ``source``: 2-D, 3-D, or 4-D with two batch dims.
        A source whose strides do not allow it (not the traced ones) is copied as eager does."""
        found = _strided_operand(source, self.steps, self.batched)
        if found is None:
            return _viewed(source.contiguous(), self.steps)
        sizes, strides = found
        if len(sizes) == 4 and sizes[0] == 1:
            sizes, strides = sizes[1:], strides[1:]
        return source.as_strided(sizes, strides, source.storage_offset())


def _operand_view(node, batched):
    """(source node, _OperandView, the nodes it replaces, users first) when GEMM operand
    ``node`` is clone(V) seen through reshapes and permutes, each read only by the next."""
    chain = []
    current = node
    while aten_name(current) in _VIEWS and len(current.users) == 1:
        chain.append(current)
        current = current.args[0]
        if not isinstance(current, torch.fx.Node):
            return None
    if aten_name(current) != "clone" or len(current.users) != 1:
        return None
    memory_format = current.kwargs.get("memory_format", torch.contiguous_format)
    source = current.args[0]
    if memory_format not in (None, torch.contiguous_format) or not _f32(source):
        return None
    steps = []
    for view in reversed(chain):
        if aten_name(view) in _PERMUTES:
            steps.append(("permute", _permutation(view)))
        elif aten_name(view) == "expand":
            steps.append(("expand", tuple(view.args[1])))
        else:
            shape = _reshape_steps(view)
            if shape is None:
                return None
            steps.append(("reshape", shape))
    layout = _layout(source)
    if layout is None:
        return None
    found = _strided_operand(_Layout(*layout), steps, batched)
    if found is None:
        return None
    return source, _OperandView(steps, batched), chain + [current], found[0]


# --- epilogues --------------------------------------------------------------------------------

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
            if tuple(kernel.shape) != _shape(current) or len(user.args) > _MAX_INPUTS:
                return None
            if list(user.args).count(current) != 1 or user.kwargs:
                return None
            if {"rand", "idx"} & set(kernel.program.split(" ")):
                return None  # C's tiles are not runs of its row-major element indices
            return user, chain, list(user.args).index(current)
        if _reshape_steps(user) is None or user.args[0] is not current:
            return None
        chain.append(user)
        current = user
    return None


def _reshapes_to(node, out_shape, gemm_shape):
    """Whether the traced value of epilogue input ``node``, broadcast to ``out_shape``, views
    as ``gemm_shape`` without a copy."""
    layout = _layout(node)
    if layout is None:
        return False
    probe = torch.empty_strided(layout[0], layout[1], dtype=_F32, device="meta")
    try:
        probe.expand(out_shape).view(gemm_shape)
    except RuntimeError:
        return False
    return True


def _copied_layout(root, gemm_shape):
    """(clone node, the view nodes before it, the views that take the clone's contiguous layout
    back to the GEMM's [batch,] rows, cols) when the result of ``root`` is only made contiguous
    in another dims order (clone of its transpose, maybe after reshapes, as attention merges its
    heads back): the GEMM then writes that layout itself through C's strides, and the copy goes.
    None otherwise."""
    chain, inverse, current = [], [], root
    while len(current.users) == 1:
        user = next(iter(current.users))
        if not user.args or user.args[0] is not current:
            return None
        if aten_name(user) in _PERMUTES:
            order = _permutation(user)
            inverse.insert(0, ("permute", [order.index(d) for d in range(len(order))]))
        elif _reshape_steps(user) is not None:
            inverse.insert(0, ("view", _shape(current)))
        elif (aten_name(user) == "clone" and chain
              and user.kwargs.get("memory_format") == torch.contiguous_format):
            steps = _c_views(torch.empty(_shape(user), dtype=_F32, device="meta"), inverse,
                             gemm_shape)
            return None if steps is None else (user, chain, steps)
        else:
            return None
        chain.append(user)
        current = user
    return None


def _c_views(copy, steps, gemm_shape):
    """The views of ``steps`` (a prefix of them) that give C from ``copy``: as a
    [batch,] rows, cols view, or for a batched GEMM as [batch0, batch1, rows, cols] when the
    copy's layout splits the batch into two strided dims. None when neither exists."""
    while True:
        viewed = None
        try:
            viewed = _viewed(copy, steps)
            viewed.view(gemm_shape)
            return steps
        except RuntimeError:
            pass
        if (viewed is not None and len(gemm_shape) == 3 and viewed.dim() == 4
                and viewed.shape[2:] == gemm_shape[1:]
                and viewed.shape[0] * viewed.shape[1] == gemm_shape[0]):
            return steps
        if not steps or steps[-1][0] != "view":
            return None
        steps = steps[:-1]


def _viewed(tensor, steps):
    for kind, value in steps:
        tensor = getattr(tensor, kind)(value)
    return tensor


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
        self.operand_views = operand_views  # per operand (a, b): an _OperandView or None
        self.program = program
        self.scalars = list(scalars)

    def __call__(self, *inputs):
        a, b = (view.apply(t) if view is not None else t
                for view, t in zip(self.operand_views, inputs[:2]))
        bias = inputs[2] if self.has_bias else None
        extras = inputs[3 if self.has_bias else 2:]
        if self.copy_shape is None:
            out = result = torch.empty(self.out_shape, dtype=_F32, device=a.device)
        else:
            result = torch.empty(self.copy_shape, dtype=_F32, device=a.device)
            out = _viewed(result, self.copy_views)
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
    kernels = []
    for node in list(graph.nodes):
        call = _gemm_call(node)
        if call is None:
            continue
        a, b, bias, alpha, beta = call
        batched = aten_name(node) == "bmm"
        gemm_shape = _shape(node)
        found = [_operand_view(operand, batched) if a is not b else None for operand in (a, b)]
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
        copied = _copied_layout(root, gemm_shape)
        split = next((f[3][:2] for f in found if f is not None and len(f[3]) == 4), None)
        if copied is not None and split is not None:
            c = _viewed(torch.empty(_shape(copied[0]), device="meta"), copied[2])
            if c.dim() == 4 and tuple(c.shape[:2]) != tuple(split):
                copied = None  # the batch would be split two ways
        copy = None
        if copied is not None:
            clone, chain, views_back = copied
            copy = (_shape(clone), views_back)
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
