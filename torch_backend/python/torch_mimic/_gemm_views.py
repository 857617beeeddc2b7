"""GEMM operands and results seen through strides (_lower_gemm's views as strides): chains of
reshape, permute and expand views tracked as (size, stride) atoms per dim, so that a view eager
would have to copy is found to be a strided matrix, possibly with two strided batch dims, of the
tensor it was copied from."""
import torch

from ._compile_graph import aten_name, tensor_meta

F32 = torch.float32
RESHAPES = frozenset({"view", "_unsafe_view", "reshape", "_reshape_alias"})
PERMUTES = frozenset({"transpose", "t", "permute"})
VIEWS = RESHAPES | PERMUTES | {"expand"}


def f32(node):
    meta = tensor_meta(node) if isinstance(node, torch.fx.Node) else None
    return meta is not None and meta[1] == F32


def shape_of(node):
    return tuple(tensor_meta(node)[0])


def layout_of(node):
    """(shape, strides) of a node's traced value, or None."""
    value = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    if isinstance(value, torch.Tensor):
        return tuple(value.shape), tuple(value.stride())
    meta = node.meta.get("tensor_meta") if isinstance(node, torch.fx.Node) else None
    if meta is not None and hasattr(meta, "stride"):
        return tuple(meta.shape), tuple(meta.stride)
    return None


def reshape_shape(node):
    """The shape a reshape node gives, or None when it is not a plain reshape of a contiguous
    value (a _reshape_alias must give contiguous strides)."""
    name = aten_name(node)
    if name not in RESHAPES:
        return None
    shape = shape_of(node)
    if name == "_reshape_alias":
        expected, step = [], 1
        for size in reversed(shape):
            expected.insert(0, step)
            step *= size
        if [s for s, n in zip(node.args[2], shape) if n != 1] != \
                [s for s, n in zip(expected, shape) if n != 1]:
            return None
    return shape


def _permutation(node):
    """The dims order of a transpose, t or permute node."""
    name = aten_name(node)
    rank = len(shape_of(node))
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


class OperandView:
    """How a GEMM operand is read from the tensor its eager copy was made of."""

    def __init__(self, steps, batched):
        self.steps = steps
        self.batched = batched

    def apply(self, source):
        """The operand as a strided view of ``source``: 2-D, 3-D, or 4-D with two batch dims.
        A source whose strides do not allow it (not the traced ones) is copied as eager does."""
        found = _strided_operand(source, self.steps, self.batched)
        if found is None:
            return viewed(source.contiguous(), self.steps)
        sizes, strides = found
        if len(sizes) == 4 and sizes[0] == 1:
            sizes, strides = sizes[1:], strides[1:]
        return source.as_strided(sizes, strides, source.storage_offset())


def operand_view(node, batched):
    """(source node, OperandView, the nodes it replaces, users first) when GEMM operand
    ``node`` is clone(V) seen through reshapes and permutes, each read only by the next."""
    chain = []
    current = node
    while aten_name(current) in VIEWS and len(current.users) == 1:
        chain.append(current)
        current = current.args[0]
        if not isinstance(current, torch.fx.Node):
            return None
    if aten_name(current) != "clone" or len(current.users) != 1:
        return None
    memory_format = current.kwargs.get("memory_format", torch.contiguous_format)
    source = current.args[0]
    if memory_format not in (None, torch.contiguous_format) or not f32(source):
        return None
    steps = []
    for view in reversed(chain):
        if aten_name(view) in PERMUTES:
            steps.append(("permute", _permutation(view)))
        elif aten_name(view) == "expand":
            steps.append(("expand", tuple(view.args[1])))
        else:
            shape = reshape_shape(view)
            if shape is None:
                return None
            steps.append(("reshape", shape))
    layout = layout_of(source)
    if layout is None:
        return None
    found = _strided_operand(_Layout(*layout), steps, batched)
    if found is None:
        return None
    return source, OperandView(steps, batched), chain + [current], found[0]


def copied_layout(root, gemm_shape):
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
        if aten_name(user) in PERMUTES:
            order = _permutation(user)
            inverse.insert(0, ("permute", [order.index(d) for d in range(len(order))]))
        elif reshape_shape(user) is not None:
            inverse.insert(0, ("view", shape_of(current)))
        elif (aten_name(user) == "clone" and chain
              and user.kwargs.get("memory_format") == torch.contiguous_format):
            steps = _c_views(torch.empty(shape_of(user), dtype=F32, device="meta"), inverse,
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
        c = None
        try:
            c = viewed(copy, steps)
            c.view(gemm_shape)
            return steps
        except RuntimeError:
            pass
        if (c is not None and len(gemm_shape) == 3 and c.dim() == 4
                and c.shape[2:] == gemm_shape[1:] and c.shape[0] * c.shape[1] == gemm_shape[0]):
            return steps
        if not steps or steps[-1][0] != "view":
            return None
        steps = steps[:-1]


def viewed(tensor, steps):
    """``tensor`` through ``steps``: (name of a Tensor view method, its argument) each."""
    for kind, value in steps:
        tensor = getattr(tensor, kind)(value)
    return tensor
