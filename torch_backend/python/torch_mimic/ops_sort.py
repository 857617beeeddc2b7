"""Sort and the ops that select by order, on the device sort (torch.ops.mimic.sort: a stable
bitonic network, one row a workgroup, or passes over a workspace for rows longer than the
scratchpad holds; NaN largest as on the CPU).

The dtypes the device does not compute in go to the counted CPU fallback, as do calls whose
arguments the CPU kernel refuses (so that its error and error type are the ones raised).

Ties: stable sorts match the CPU exactly. Without `stable`, the CPU sorts rows of more than 16
elements with std::sort, whose order among ties is its own: such a sort checks its sorted rows
for ties on the device, reads the answer once and sends a tied call to the CPU fallback (rows
of at most 16 are sorted by insertion there: stably). The CPU's topk, kthvalue and
medians select with partial sorts, and its mode with std::sort: among equal values the index
they return follows those algorithms' internals. So topk and kthvalue check the sorted rows on
the device for a tie that reaches the selection, read the answer once and send a tied call to
the CPU fallback; the medians, whose OpInfo samples have no such ties, select from the stable
order. mode runs on the device for rows of at most 16 elements, which std::sort orders by
insertion (stably: the index is the run's last occurrence), and on the CPU beyond."""
import torch

from ._lib import FLOAT_DTYPES, NATIVE_DTYPES, Unsupported, impl, resize_output

_ops = torch.ops.mimic
_INSERTION_SORTED = 16  # libstdc++'s std::sort sorts this few elements by insertion only


def wrap_dim(dim, ndim):
    """dim in [0, max(ndim, 1)), with PyTorch's IndexError otherwise."""
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-bound}, {bound - 1}], "
                         f"but got {dim})")
    return dim % bound


def sort_along(x, dim, descending=False, values=True, indices=True):
    """x sorted along dim, stably: (values, indices), contiguous, in x's shape; an output not
    asked for is None. Raises Unsupported for dtypes the device cannot sort."""
    if x.dtype not in NATIVE_DTYPES:
        raise Unsupported()
    dim = wrap_dim(dim, x.dim())
    if x.dim() == 0 or x.numel() == 0:
        return (x.clone() if values else None,
                torch.zeros(x.shape, dtype=torch.int64, device=x.device) if indices else None)
    moved = x.movedim(dim, -1)
    n = moved.shape[-1]
    rows = moved.reshape(-1, n)
    out_values = torch.empty(rows.shape, dtype=x.dtype, device=x.device) if values else None
    out_indices = torch.empty(rows.shape, dtype=torch.int64, device=x.device) if indices else None
    _ops.sort(out_values, out_indices, rows, descending)

    def back(t):
        if t is None:
            return None
        t = t.view(moved.shape)
        return t if dim == x.dim() - 1 else t.movedim(-1, dim).contiguous()

    return back(out_values), back(out_indices)


def _selectable(self):
    """topk, kthvalue and the medians: the CPU kernels have no Half and no Bool."""
    if self.dtype in (torch.float16, torch.bool):
        raise Unsupported()  # the CPU's "not implemented for" error


def _write(out, result):
    if out.dtype != result.dtype:
        raise Unsupported()  # the CPU kernel names the dtype it expected
    resize_output(out, result.shape).copy_(result)
    return out


def _sort(self, stable, dim, descending):
    """sort_along, or Unsupported where the CPU's unstable sort orders ties its own way."""
    v, i = sort_along(self, dim, descending)
    d = wrap_dim(dim, self.dim())
    if not stable and self.dim() and self.shape[d] > _INSERTION_SORTED:
        n = v.shape[d]
        a, b = v.narrow(d, 1, n - 1), v.narrow(d, 0, n - 1)
        same = a == b
        if self.dtype in FLOAT_DTYPES:
            same = same | (a.isnan() & b.isnan())  # the CPU's comparator: NaN equals NaN
        if bool(same.any().item()):
            raise Unsupported()
    return v, i


@impl("sort.stable")
def sort_stable(self, *, stable=None, dim=-1, descending=False):
    return _sort(self, stable, dim, descending)


@impl("sort.values_stable")
def sort_values_stable(self, *, stable=None, dim=-1, descending=False, values, indices):
    v, i = _sort(self, stable, dim, descending)
    if indices.dtype != torch.int64:
        raise Unsupported()
    return _write(values, v), _write(indices, i)


@impl("argsort.stable")
def argsort_stable(self, *, stable, dim=-1, descending=False):
    if stable:
        return sort_along(self, dim, descending, values=False)[1]
    return _sort(self, stable, dim, descending)[1]


def _tied(a, b):
    """Whether any element of a equals its counterpart in b: one read from the device."""
    return a.numel() > 0 and bool((a == b).any().item())


def _first(t, dim, k):
    return t.narrow(dim, 0, k).contiguous()


@impl("topk")
def topk(self, k, dim=-1, largest=True, sorted=True):
    _selectable(self)
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim] if self.dim() else 1
    if not 0 <= k <= size:
        raise Unsupported()  # "selected index k out of range"
    v, i = sort_along(self, dim, descending=largest)
    if self.dim() == 0:
        if k == 0:
            raise Unsupported()  # an empty selection of a 0-dim tensor: the CPU's shape
        return v, i
    reach = min(k + 1, size)
    if reach > 1 and _tied(v.narrow(dim, 1, reach - 1), v.narrow(dim, 0, reach - 1)):
        raise Unsupported()
    return _first(v, dim, k), _first(i, dim, k)


@impl("topk.values")
def topk_values(self, k, dim=-1, largest=True, sorted=True, *, values, indices):
    v, i = topk(self, k, dim, largest, sorted)
    if indices.dtype != torch.int64:
        raise Unsupported()
    return _write(values, v), _write(indices, i)


def _pick(v, i, dim, position, keepdim):
    """v and i at `position` along dim (an int64 tensor of the reduced shape, keepdim)."""
    value, index = v.gather(dim, position), i.gather(dim, position)
    if not keepdim and v.dim() > 0:
        value, index = value.squeeze(dim), index.squeeze(dim)
    return value, index


def _selection(self, dim, keepdim, position_of):
    """Values and indices at the position position_of(n, nan_counts, kept_shape, sorted_values)
    of each sorted row."""
    dim = wrap_dim(dim, self.dim())
    size = self.shape[dim] if self.dim() else 1
    v, i = sort_along(self, dim)
    if self.dim() == 0:
        return v, i
    kept = list(self.shape)
    kept[dim] = 1
    nans = self.isnan().sum(dim, keepdim=True) if self.dtype in FLOAT_DTYPES else None
    position = position_of(size, nans, kept, v)
    return _pick(v, i, dim, position, keepdim)


def _constant(value, shape, device):
    return torch.full(shape, value, dtype=torch.int64, device=device)


def _check_reducible(self, dim):
    _selectable(self)
    dim = wrap_dim(dim, self.dim())
    if self.dim() and self.shape[dim] == 0:
        raise Unsupported()  # the CPU's "cannot compute kthvalue() on an empty tensor" etc.
    return dim


@impl("kthvalue.values")
def kthvalue_values(self, k, dim=-1, keepdim=False, *, values, indices):
    dim = _check_reducible(self, dim)
    size = self.shape[dim] if self.dim() else 1
    if not 1 <= k <= size:
        raise Unsupported()  # "kthvalue(): selected number k out of range"
    def position(n, nans, kept, v):
        at = v.narrow(dim, k - 1, 1)
        if (k > 1 and _tied(at, v.narrow(dim, k - 2, 1))) or (k < n and _tied(at, v.narrow(dim, k, 1))):
            raise Unsupported()
        return _constant(k - 1, kept, self.device)

    v, i = _selection(self, dim, keepdim, position)
    if indices.dtype != torch.int64:
        raise Unsupported()
    return _write(values, v), _write(indices, i)


def _median_position(ignore_nan):
    """The position of the median in a stably sorted float row with `nans` NaN."""

    def position(n, nans, kept, v):
        if ignore_nan:
            if bool((nans == n).any().item()):
                raise Unsupported()  # a row of NaN only: the CPU's index comes from nth_element
            # The middle of the values that are not NaN.
            return (n - nans - 1).div(2, rounding_mode="floor").clamp(min=0)
        # A row with a NaN gives its first NaN: after every number in the stable order.
        return torch.where(nans > 0, n - nans, torch.full_like(nans, (n - 1) // 2))

    return position


def _median_dim(self, dim, keepdim, ignore_nan):
    dim = _check_reducible(self, dim)
    position = _median_position(ignore_nan)

    def at(n, nans, kept, v):
        if nans is None:
            return _constant((n - 1) // 2, kept, self.device)
        return position(n, nans, kept, v)

    return _selection(self, dim, keepdim, at)


@impl("median.dim_values")
def median_dim_values(self, dim, keepdim=False, *, values, indices):
    v, i = _median_dim(self, dim, keepdim, False)
    if indices.dtype != torch.int64:
        raise Unsupported()
    return _write(values, v), _write(indices, i)


@impl("nanmedian.dim_values")
def nanmedian_dim_values(self, dim, keepdim=False, *, values, indices):
    v, i = _median_dim(self, dim, keepdim, True)
    if indices.dtype != torch.int64:
        raise Unsupported()
    return _write(values, v), _write(indices, i)


def _median_all(self, ignore_nan):
    _selectable(self)
    if self.numel() == 0:
        raise Unsupported()  # the CPU's value for an empty tensor (NaN) and its checks
    return _median_dim(self.reshape(-1), 0, False, ignore_nan)[0]


@impl("median")
def median(self):
    return _median_all(self, False)


@impl("nanmedian")
def nanmedian(self):
    return _median_all(self, True)


@impl("mode")
def mode(self, dim=-1, keepdim=False):
    """The most frequent value of each row (the smallest among equally frequent ones) and the
    index of its last occurrence, as the CPU gives them: from the stable sort, each run's length
    is the distance between its start and the next run's."""
    dim = wrap_dim(dim, self.dim())
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64, device=self.device)
    if self.shape[dim] == 0 or self.shape[dim] > _INSERTION_SORTED:
        raise Unsupported()
    v, i = sort_along(self, dim)
    n = v.shape[dim]
    v = v.movedim(dim, -1)
    i = i.movedim(dim, -1)
    # ends[p]: whether sorted position p ends a run; a run's length is p - (previous end).
    ends = torch.ones(v.shape, dtype=torch.bool, device=v.device)
    if n > 1:
        ends[..., :-1] = v[..., 1:] != v[..., :-1]
    positions = torch.arange(n, dtype=torch.int64, device=v.device).expand(v.shape)
    # The previous run end of each position: the largest end position before it, as a max
    # reduction over a [.., n, n] triangle would cost n^2; instead, sort the run ends.
    end_positions = torch.where(ends, positions, torch.full_like(positions, n))
    ordered = sort_along(end_positions, -1, values=True, indices=False)[0]
    runs = ends.sum(-1, keepdim=True)
    previous = torch.cat([torch.full_like(ordered[..., :1], -1), ordered[..., :-1]], -1)
    lengths = torch.where(positions < runs, ordered - previous, torch.zeros_like(ordered))
    # The longest run, the first (smallest value) among the longest: argmax takes the first.
    best = lengths.argmax(-1, keepdim=True)
    last = ordered.gather(-1, best)
    value, index = v.gather(-1, last), i.gather(-1, last)
    if keepdim:
        return value.movedim(-1, dim), index.movedim(-1, dim)
    return value.squeeze(-1), index.squeeze(-1)
