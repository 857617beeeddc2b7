"""embedding_bag (sum, mean and max bags of embedding rows) and its dense backward, on the index
kernels, with the auxiliary outputs PyTorch's CPU kernel returns (offset2bag, bag_size,
max_indices) so that autograd's backward reads them as it reads the CPU's.

The offsets are read to the host once, for PyTorch's checks of their values and for the tables
of the max mode: a [B, L] gather table of each bag's index positions (L the largest bag, short
bags padded with a row of -inf) lays the gathered rows out for one max/argmax reduction.
Sum and mean gather the rows (index_select), weight them, and index_add them into their bags."""
import torch

from ._dtype_checks import type_name
from ._lib import Unsupported, empty, impl, launch
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32
_SUM, _MEAN, _MAX = 0, 1, 2


def _meta(x):
    return x.to("meta") if isinstance(x, torch.Tensor) else x


def _check_weight(weight):
    if weight.dtype == torch.float64:
        raise Unsupported()
    if weight.dtype not in (_F32, torch.float16):
        raise RuntimeError("Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, "
                           f"Float, Double; but got CPU{type_name(weight.dtype)}Type instead (while checking arguments "
                           "for embedding_bag)")


def _bags(indices, offsets, include_last_offset):
    """Host int64 [B] bag starts and sizes (before padding is excluded), with the CPU's checks."""
    count = indices.numel()
    host = offsets.cpu().long().reshape(-1)
    if host.numel() > 0:
        if host[0].item() != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                               f"position 0. However, got {host[0].item()}")
        if host[-1].item() > count:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {count} but got offsets[-1] of "
                               f"{host[-1].item()}")
    starts = host[:-1] if include_last_offset else host
    ends = torch.cat([host[1:], torch.tensor([count])])[:starts.numel()] if not include_last_offset else host[1:]
    return starts, (ends - starts).clamp(min=0)


def _offset2bag(starts, sizes, count):
    """Host int64 [count]: the bag of each index position (positions in no bag: the last bag)."""
    bags = torch.repeat_interleave(torch.arange(starts.numel()), sizes)
    if bags.numel() < count:
        bags = torch.cat([bags, torch.full((count - bags.numel(),), max(starts.numel() - 1, 0))])
    return bags[:count]


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                   include_last_offset, padding_idx):
    torch.ops.aten._embedding_bag(_meta(weight), _meta(indices), _meta(offsets), scale_grad_by_freq, mode, sparse,
                                  _meta(per_sample_weights), include_last_offset, padding_idx)
    _check_weight(weight)
    if mode not in (_SUM, _MEAN, _MAX):
        raise RuntimeError("mode has to be one of sum, mean or max")
    device, index_dtype = weight.device, indices.dtype
    starts, sizes = _bags(indices, offsets, include_last_offset)
    bags, dim, count = starts.numel(), weight.shape[1], indices.numel()
    host_bag = _offset2bag(starts, sizes, count)
    flat = indices.reshape(-1).long()
    valid = launch(empty((count,), _F32, device), [flat], "x0 s0 ne", torch.int64, [padding_idx])
    bag_of = host_bag.to(device)
    bag_size = torch.zeros(bags, dtype=_F32, device=device)
    if count > 0 and bags > 0:
        bag_size.index_add_(0, bag_of, valid)
    output = torch.zeros((bags, dim), dtype=_F32, device=device)
    max_indices = None
    if count > 0 and bags > 0 and dim > 0:
        rows = _select_rows(weight, flat)
        if mode == _MAX:
            output, max_indices = _max_bags(rows, flat, valid, starts, sizes, bag_size)
        else:
            factors = [valid[:, None]]
            program = "x0 x1 mul"
            if per_sample_weights is not None:
                factors.append(per_sample_weights.reshape(-1, 1))
                program += " x2 mul"
            launch(rows, [rows, *factors], program, _F32)
            output.index_add_(0, bag_of, rows)
            if mode == _MEAN:
                launch(output, [output, bag_size[:, None]], "x1 0 eq 0 x0 x1 div where", _F32)
    result = output.to(weight.dtype)
    sizes_out = bag_size.to(index_dtype) if mode != _SUM else torch.zeros(bags, dtype=index_dtype, device=device)
    if mode == _SUM and padding_idx < 0:
        offset2bag = torch.empty(0, dtype=index_dtype, device=device)
    else:
        offset2bag = bag_of.to(index_dtype)
    if mode == _MAX:
        maxes = (max_indices if max_indices is not None
                 else torch.zeros((bags, dim), dtype=torch.int64, device=device)).to(index_dtype)
    else:
        maxes = sizes_out.clone() if mode == _MEAN else torch.zeros(bags, dtype=index_dtype, device=device)
    return result, offset2bag, sizes_out, maxes


def _select_rows(table, index):
    """table[index] as a new float32 [len(index), D] tensor."""
    selected = empty((index.numel(), table.shape[1]), table.dtype, table.device)
    _ops.index_select(selected, table, 0, index)
    return selected if table.dtype == _F32 else selected.to(_F32)


def _max_bags(rows, flat, valid, starts, sizes, bag_size):
    """Per bag and column the largest valid row value and the weight row it came from (0 for
    bags with no valid row, as PyTorch's CPU kernel leaves them)."""
    device = rows.device
    count, dim = rows.shape
    longest = max(int(sizes.max()), 1)
    steps = torch.arange(longest)
    positions = torch.where(steps < sizes[:, None], starts[:, None] + steps, torch.full((), count))
    extended = torch.full((count + 1, dim), float("-inf"), dtype=_F32, device=device)
    # Rows at padding_idx take no part: -inf, like the padding past a bag's end.
    launch(extended[:count], [valid[:, None], rows], "x0 x1 s0 where", _F32, [float("-inf")])
    table = positions.reshape(-1).to(device)
    laid_out = empty((table.numel(), dim), _F32, device)
    _ops.index_select(laid_out, extended, 0, table)
    laid_out = laid_out.view(sizes.numel(), longest, dim)
    maxima = reduce_into("max", laid_out, [1], _F32).view(sizes.numel(), dim)
    where = reduce_into("argmax", laid_out, [1], torch.int64).view(sizes.numel(), dim)
    padded_indices = torch.cat([flat, torch.zeros(1, dtype=torch.int64, device=device)])
    chosen_position = empty(where.shape, torch.int64, device)
    # position table[b, where[b, d]] -> index value at that position
    _ops.gather(chosen_position, positions.to(device), 1, where)
    chosen = empty(where.shape, torch.int64, device)
    _ops.index_select(chosen.view(-1), padded_indices, 0, chosen_position.view(-1))
    empty_bag = bag_size[:, None] == 0
    output = launch(empty(maxima.shape, _F32, device), [empty_bag, maxima], "x0 0 x1 where", _F32)
    max_indices = launch(empty(chosen.shape, torch.int64, device), [empty_bag, chosen], "x0 0 x1 where", torch.int64)
    return output, max_indices


@impl("_embedding_bag")
def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=-1):
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset, padding_idx)


@impl("_embedding_bag_forward_only")
def embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                               per_sample_weights=None, include_last_offset=False, padding_idx=-1):
    return _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
                          include_last_offset, padding_idx)


@impl("_embedding_bag_dense_backward")
def embedding_bag_dense_backward(grad, indices, offset2bag, bag_size, maximum_indices, num_weights,
                                 scale_grad_by_freq, mode, per_sample_weights, padding_idx=-1):
    # float16 gradients: PyTorch's CPU kernel adds them up in float16, in an order of its own
    # (sorted indices), which float32 accumulation does not round like.
    if grad.dtype != _F32 or scale_grad_by_freq:
        raise Unsupported()
    device = grad.device
    grad_weight = torch.zeros((num_weights, grad.shape[1]), dtype=_F32, device=device)
    flat = indices.reshape(-1).long()
    if flat.numel() == 0 or grad.numel() == 0:
        return grad_weight.to(grad.dtype)
    if mode == _MAX:
        chosen = maximum_indices.long()
        keep = (bag_size.long() > 0)[:, None].expand(chosen.shape)
        contributions = launch(empty(chosen.shape, _F32, device), [keep, grad], "x0 x1 0 where", _F32)
        _ops.scatter(grad_weight, 0, chosen, contributions, True)
        return grad_weight.to(grad.dtype)
    bag_of = offset2bag.long()
    rows = _select_rows(grad, bag_of)
    program = "x0 s0 ne x1 0 where"
    inputs = [flat[:, None], rows]
    if mode == _MEAN:
        sizes = empty((flat.numel(), 1), _F32, device)
        _ops.index_select(sizes.view(-1), bag_size.to(_F32), 0, bag_of)
        inputs.append(sizes)
        program = "x0 s0 ne x1 x2 div 0 where"
    if per_sample_weights is not None:
        inputs.append(per_sample_weights.reshape(-1, 1))
        program = program.replace(" 0 where", f" x{len(inputs) - 1} mul 0 where")
    launch(rows, inputs, program, _F32, [padding_idx])
    grad_weight.index_add_(0, flat, rows)
    return grad_weight.to(grad.dtype)


@impl("_embedding_bag_per_sample_weights_backward")
def embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx=-1):
    if mode != _SUM:
        raise RuntimeError("embedding_bag_backward: per_sample_weights only supported for mode='sum'")
    if grad.dtype != _F32 or weight.dtype != grad.dtype:
        raise Unsupported()  # float16: the CPU's dot products round in float16
    device = grad.device
    flat = indices.reshape(-1).long()
    result = torch.zeros(flat.shape, dtype=grad.dtype, device=device)
    if flat.numel() == 0:
        return result
    bag_of = offset2bag.long()
    if bag_of.numel() == 0:
        starts, sizes = _bags(indices, offsets, offsets.numel() == grad.shape[0] + 1)
        bag_of = _offset2bag(starts, sizes, flat.numel()).to(device)
    grads = _select_rows(grad, bag_of)
    rows = _select_rows(weight, flat)
    dots = reduce_into("sum", grads, [1], _F32, map="mul", other=rows).view(-1)
    return launch(result, [flat, dots], "x0 s0 ne x1 0 where", _F32, [padding_idx])
