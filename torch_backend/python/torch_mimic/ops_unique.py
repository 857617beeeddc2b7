"""unique and unique_consecutive (with and without dim) on the device: sort (ops_sort), then a
mask of where each run of equal values starts, then a compaction with one host sync: the run
count is computed on the device and read once, and the run starts are the first `count` indices
of a stable sort of the mask's negation (starts first, in order). Inverse indices number the
runs with a cumulative sum of the mask (the device scan); counts are the distances between run
starts.

Returned in the layouts and dtypes the CPU gives: an inverse or counts not asked for is an
empty int64 tensor (but _unique2 returns the inverse with the counts, and the dim variants
always compute both, as the CPU does). sorted=False goes to the CPU fallback (but for one
element or none): the CPU returns its hash set's order, which nothing else reproduces. NaN
values compare unequal to each other, so each NaN is its own run."""
import torch

from ._lib import Unsupported, impl
from .ops_sort import sort_along, wrap_dim

_I64 = torch.int64


def _empty_index(device):
    return torch.empty(0, dtype=_I64, device=device)


def _or_empty(t, device):
    return t if t is not None else _empty_index(device)


def _runs(starts):
    """The positions where runs start (int64, ascending) and the number of runs: the host sync."""
    count = int(starts.sum().item())
    order = sort_along(starts.logical_not(), 0, values=False)[1]
    return order[:count], count


def _counts(first, n):
    ends = torch.cat([first[1:], torch.full((1,), n, dtype=_I64, device=first.device)])
    return ends - first


def _starts(rows):
    """Where each run of equal rows starts, for the rows of a 2-D [S, K] tensor (or the
    elements of a 1-D one)."""
    starts = torch.ones(rows.shape[0], dtype=torch.bool, device=rows.device)
    if rows.shape[0] > 1:
        differs = rows[1:] != rows[:-1]
        starts[1:] = differs if differs.dim() == 1 else differs.any(1)
    return starts


def _group_ids(starts):
    """The run number of each position: how many runs start at or before it, less one."""
    return torch.cumsum(starts, 0) - 1


def _flat_unique(flat, sort, return_inverse, return_counts):
    """(values, inverse over flat's positions or None, counts or None) of a 1-D tensor."""
    n = flat.shape[0]
    if sort:
        values, order = sort_along(flat, 0, indices=return_inverse)
    else:
        values, order = flat, None
    starts = _starts(values)
    first, count = _runs(starts)
    out = values.index_select(0, first)
    inverse = None
    if return_inverse:
        ids = _group_ids(starts)
        inverse = ids if order is None else torch.empty_like(ids).scatter_(0, order, ids)
    counts = _counts(first, n) if return_counts else None
    return out, inverse, counts


def _check_dtype(self):
    if self.dtype == torch.float16:
        raise Unsupported()  # the CPU's "not implemented for 'Half'"


def _unique(self, sort, return_inverse, return_counts):
    _check_dtype(self)
    if self.numel() == 0:
        inverse = torch.zeros(self.shape, dtype=_I64, device=self.device) if return_inverse else None
        return self.reshape(-1), _or_empty(inverse, self.device), _empty_index(self.device)
    out, inverse, counts = _flat_unique(self.reshape(-1), sort, return_inverse, return_counts)
    inverse = inverse.view(self.shape) if inverse is not None else None
    return out, _or_empty(inverse, self.device), _or_empty(counts, self.device)


@impl("_unique2")
def unique2(self, sorted=True, return_inverse=False, return_counts=False):
    if not sorted and self.numel() > 1:
        raise Unsupported()
    # The CPU computes the inverse whenever it counts, and returns it.
    return _unique(self, True, return_inverse or return_counts, return_counts)


@impl("_unique")
def unique(self, sorted=True, return_inverse=False):
    if not sorted and self.numel() > 1:
        raise Unsupported()
    return _unique(self, True, return_inverse, False)[:2]


def _unique_dim(self, dim, sort):
    _check_dtype(self)
    dim = wrap_dim(dim, self.dim())
    if self.dim() == 0:
        raise Unsupported()  # the CPU's error
    if self.numel() == 0:
        if any(size == 0 for d, size in enumerate(self.shape) if d != dim):
            raise Unsupported()  # "There are 0 sized dimensions, and they aren't selected"
        return self.clone(), _empty_index(self.device), _empty_index(self.device)
    # The CPU orders the slices by the elements of self.transpose(dim, 0), lexicographically.
    moved = self.transpose(dim, 0)
    rows = moved.reshape(moved.shape[0], -1)
    s = rows.shape[0]
    order = None
    if sort:
        # Lexicographic order of the rows: stable sorts by each column, the last column first.
        order = torch.arange(s, dtype=_I64, device=self.device)
        for column in range(rows.shape[1] - 1, -1, -1):
            key = rows[:, column].index_select(0, order)
            order = order.index_select(0, sort_along(key, 0, values=False)[1])
        rows = rows.index_select(0, order)
    starts = _starts(rows)
    first, count = _runs(starts)
    out = rows.index_select(0, first).view((count,) + tuple(moved.shape[1:])).transpose(0, dim)
    ids = _group_ids(starts)
    inverse = ids if order is None else torch.empty_like(ids).scatter_(0, order, ids)
    return out.contiguous(), inverse, _counts(first, s)


@impl("unique_dim")
def unique_dim(self, dim, sorted=True, return_inverse=False, return_counts=False):
    return _unique_dim(self, dim, True)


@impl("unique_dim_consecutive")
def unique_dim_consecutive(self, dim, return_inverse=False, return_counts=False):
    return _unique_dim(self, dim, False)


@impl("unique_consecutive")
def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
    if dim is not None:
        return _unique_dim(self, dim, False)
    return _unique(self, False, return_inverse, return_counts)
