"""Indexing and joining: index_select, gather, scatter, scatter_add, index_add, index_put,
advanced indexing with integer tensors, embedding backward and cat."""
import functools

import torch

from ._lib import Unsupported, empty, impl, launch, prepare_out, require_native

_ops = torch.ops.mimic


def _dim(dim, rank):
    rank = max(rank, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def _check_index(index, name):
    if index.dtype not in (torch.int64, torch.int32) and index.numel() > 0:
        raise RuntimeError(f"{name}(): Expected dtype int32/int64 for index but got {index.dtype}")


@impl("index_select")
def index_select(self, dim, index):
    _check_index(index, "index_select")
    if index.dim() > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    require_native(self)
    dim = _dim(dim, self.dim())
    source = self if self.dim() > 0 else self.view(1)
    shape = list(source.shape)
    shape[dim] = index.numel()
    out = empty(shape, self.dtype, self.device)
    if out.numel() > 0:
        _ops.index_select(out, source, dim, index.reshape(-1).to(self.device))
    return out if self.dim() > 0 else out.view(())


@impl("index_select.out")
def index_select_out(self, dim, index, *, out):
    result = index_select(self, dim, index)
    prepare_out(out, result.shape, result.dtype)
    return out.copy_(result)


@impl("gather")
def gather(self, dim, index, *, sparse_grad=False):
    _check_index(index, "gather")
    require_native(self)
    dim = _dim(dim, self.dim())
    out = empty(index.shape, self.dtype, self.device)
    if out.numel() > 0:
        _ops.gather(out, self, dim, index)
    return out


def _scatter(self, dim, index, src, accumulate, inplace):
    _check_index(index, "scatter")
    require_native(self)
    target = self if inplace else self.clone()
    if index.numel() == 0:
        return target
    if not isinstance(src, torch.Tensor):
        src = torch.full(index.shape, src, dtype=self.dtype, device=self.device)
    elif src.dtype != self.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    _ops.scatter(target, _dim(dim, self.dim()), index, src, accumulate)
    return target


@impl("scatter.src", "scatter.value")
def scatter(self, dim, index, src):
    return _scatter(self, dim, index, src, False, False)


@impl("scatter_.src", "scatter_.value")
def scatter_(self, dim, index, src):
    return _scatter(self, dim, index, src, False, True)


@impl("scatter_add")
def scatter_add(self, dim, index, src):
    return _scatter(self, dim, index, src, True, False)


@impl("scatter_add_")
def scatter_add_(self, dim, index, src):
    return _scatter(self, dim, index, src, True, True)


def _index_add(self, dim, index, source, alpha, inplace):
    _check_index(index, "index_add")
    require_native(self, source)
    target = self if inplace else self.clone()
    if index.numel() > 0:
        _ops.index_add(target, _dim(dim, self.dim()), index.reshape(-1), source, float(alpha))
    return target


@impl("index_add")
def index_add(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, False)


@impl("index_add_")
def index_add_(self, dim, index, source, *, alpha=1):
    return _index_add(self, dim, index, source, alpha, True)


def _leading_indices(self, indices):
    """The integer index tensors of an advanced-indexing call when they index leading dims;
    anything else (bool masks, gaps) is not native."""
    if any(i is not None and i.dtype in (torch.bool, torch.uint8) for i in indices):
        raise Unsupported()  # a mask needs nonzero, whose size only the data knows
    while indices and indices[-1] is None:
        indices = indices[:-1]
    if not indices or any(i is None for i in indices):
        raise Unsupported()
    for i in indices:
        _check_index(i, "index")
    return [i.to(self.device) for i in torch.broadcast_tensors(*indices)]


@impl("index.Tensor")
def index(self, indices):
    require_native(self)
    indices = _leading_indices(self, list(indices))
    if len(indices) == 1:
        flat = _wrap(indices[0], self.shape[0])
        gathered = index_select(self, 0, flat.reshape(-1))
        return gathered.view(list(indices[0].shape) + list(self.shape[1:]))
    # Several leading dims: one linear index into their flattening.
    linear = torch.zeros(indices[0].shape, dtype=torch.int64, device=self.device)
    for dim, i in enumerate(indices):
        launch(linear, [linear, _wrap(i, self.shape[dim])], "x0 s0 mul x1 add", torch.int64,
               [self.shape[dim]])
    rest = list(self.shape[len(indices):])
    gathered = index_select(self.reshape([-1] + rest), 0, linear.reshape(-1))
    return gathered.view(list(linear.shape) + rest)


def _wrap(index, size):
    """Negative indices count from the end, as in Python."""
    wrapped = torch.empty(index.shape, dtype=torch.int64, device=index.device)
    return launch(wrapped, [index], "x0 0 lt x0 s0 add x0 where", torch.int64, [size])


@impl("_index_put_impl_")
def index_put_impl_(self, indices, values, accumulate=False, unsafe=False):
    require_native(self, values)
    indices = _leading_indices(self, list(indices))
    shape = list(indices[0].shape) + list(self.shape[len(indices):])
    values = values.to(self.dtype).expand(shape)
    if values.numel() > 0:
        _ops.index_put(self, indices, values, bool(accumulate))
    return self


@impl("index_put_")
def index_put_(self, indices, values, accumulate=False):
    return index_put_impl_(self, indices, values, accumulate)


@impl("index_put")
def index_put(self, indices, values, accumulate=False):
    return index_put_impl_(self.clone(), indices, values, accumulate)


@impl("embedding_dense_backward")
def embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq):
    if scale_grad_by_freq:
        raise Unsupported()
    rows = grad_output.reshape(-1, grad_output.shape[-1])
    flat = indices.reshape(-1)
    if padding_idx >= 0:
        rows = rows.clone()
        launch(rows, [rows, flat.unsqueeze(1)], "x1 s0 eq 0 x0 where", rows.dtype, [padding_idx])
    grad_weight = torch.zeros((num_weights, grad_output.shape[-1]), dtype=grad_output.dtype,
                              device=grad_output.device)
    return _index_add(grad_weight, 0, flat, rows, 1, True)


def _cat_shape(tensors, dim):
    shaped = [t for t in tensors if not (t.dim() == 1 and t.numel() == 0)]  # legacy empty skip
    if not shaped:
        return None, shaped
    reference = shaped[0]
    dim = _dim(dim, reference.dim())
    shape = list(reference.shape)
    shape[dim] = 0
    for t in shaped:
        if t.dim() != reference.dim() or any(
                a != b for d, (a, b) in enumerate(zip(t.shape, reference.shape)) if d != dim):
            raise RuntimeError(f"Sizes of tensors must match except in dimension {dim}. "
                               f"Expected size {list(reference.shape)} but got size {list(t.shape)}")
        shape[dim] += t.shape[dim]
    return (shape, dim), shaped


def _cat_into(out, shaped, dim):
    offset = 0
    for t in shaped:
        if t.shape[dim]:
            out.narrow(dim, offset, t.shape[dim]).copy_(t)
        offset += t.shape[dim]
    return out


@impl("cat")
def cat(tensors, dim=0):
    layout, shaped = _cat_shape(list(tensors), dim)
    dtype = functools.reduce(torch.promote_types, [t.dtype for t in tensors])
    device = next(t.device for t in tensors if t.device.type != "cpu")
    if layout is None:
        return empty((0,), dtype, device)
    shape, dim = layout
    return _cat_into(empty(shape, dtype, device), shaped, dim)


@impl("cat.out")
def cat_out(tensors, dim=0, *, out):
    layout, shaped = _cat_shape(list(tensors), dim)
    if layout is None:
        return out
    shape, dim = layout
    prepare_out(out, shape, out.dtype)
    return _cat_into(out, shaped, dim)
