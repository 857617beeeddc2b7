"""histogram and histogramdd with given bin edges, on the device.

Each element's bin is found as the CPU's kernel finds it: the element is kept unless it lies
below the first edge or above the last one of a dimension (so NaN is kept: the search puts it in
the last bin, as this PyTorch's CPU kernel does), and its position in a dimension is
std::upper_bound over that dimension's edges, minus one, the last edge closing the last bin.
The OpInfo samples pass unsorted edges, on which a binary search is not a count of the edges
below the value: the search is replayed step by step on the device (first/length per element,
one gather of the middle edge per step, as many steps as the edge count's bit length), so the
bin is the CPU's for any edges. The weights (or ones) of the kept elements are then added at
their flat bin (index_add), and density divides by the total and by each bin's widths.

Edges computed from a bin count (histogram.bin_ct, _histogramdd_from_bin_cts) come from the
CPU's linspace, whose roundings the device's linspace does not reproduce: those overloads are
left to the fallback. Other dtypes and the arguments the CPU refuses go to the fallback too, so
that its result or its error is the one given."""
import torch

from ._lib import Unsupported, impl

_I64 = torch.int64


def _upper_bound(edges, values, first, length):
    """std::upper_bound(edges + first, edges + first + length, value) per value, as an index
    into edges; first and length are int64 tensors shaped as values."""
    steps = max(int(edges.numel()).bit_length(), 1)
    top = edges.numel() - 1
    for _ in range(steps):
        half = torch.div(length, 2, rounding_mode="floor")
        middle = first + half
        pivot = edges.index_select(0, middle.clamp(0, top).reshape(-1)).reshape(values.shape)
        active = length > 0
        left = values < pivot
        first = torch.where(active & left.logical_not(), middle + 1, first)
        length = torch.where(active, torch.where(left, half, length - half - 1), length)
    return first


def _check(self, bins, weight):
    """The CPU's histogramdd_check_inputs: arguments it refuses go to the fallback."""
    if self.dtype != torch.float32 or self.dim() < 2 or len(bins) != self.shape[-1]:
        raise Unsupported()
    for edges in bins:
        if edges.dtype != self.dtype or edges.dim() != 1 or edges.numel() == 0 or edges.device != self.device:
            raise Unsupported()
    if weight is not None:
        shape = tuple(weight.shape) or (1,)
        if weight.dtype != self.dtype or shape != tuple(self.shape[:-1]) or weight.device != self.device:
            raise Unsupported()


def _histogramdd(self, bins, weight, density):
    """The histogram of the rows of self ([..., N]) over the N edge tensors in bins."""
    n = self.shape[-1]
    rows = self.reshape(-1, n)
    shape = [edges.numel() - 1 for edges in bins]
    hist = torch.zeros(shape, dtype=self.dtype, device=self.device)
    if rows.shape[0] == 0 or hist.numel() == 0:
        return _normalised(hist, bins) if density else hist
    keep = torch.ones(rows.shape[0], dtype=torch.bool, device=self.device)
    flat = torch.zeros(rows.shape[0], dtype=_I64, device=self.device)
    stride = hist.numel()
    for dim, edges in enumerate(bins):
        edges = edges.contiguous()
        count = edges.numel()
        stride //= shape[dim]
        x = rows[:, dim]
        inside = ((x < edges[0]) | (x > edges[-1])).logical_not()
        keep = keep & inside
        first = torch.zeros_like(flat)
        position = _upper_bound(edges, x, first, torch.full_like(flat, count)) - 1
        position = torch.where(position == count - 1, position - 1, position)
        flat = flat + torch.where(inside, position, first) * stride
    added = torch.ones_like(rows[:, 0]) if weight is None else weight.reshape(-1)
    added = torch.where(keep, added, torch.zeros_like(added))
    flat = torch.where(keep, flat, torch.zeros_like(flat))
    hist = hist.reshape(-1).index_add_(0, flat, added).reshape(shape)
    return _normalised(hist, bins) if density else hist


def _normalised(hist, bins):
    hist = hist / hist.sum()
    for dim, edges in enumerate(bins):
        widths = edges[1:] - edges[:-1]
        view = [1] * hist.dim()
        view[dim] = widths.numel()
        hist = hist / widths.reshape(view)
    return hist


@impl("histogram.bins_tensor")
def histogram_bins_tensor(self, bins, *, weight=None, density=False):
    rows = self.reshape(-1, 1)
    if weight is not None:
        weight = weight.reshape(-1)
    _check(rows, [bins], weight)
    return _histogramdd(rows, [bins], weight, density), bins.clone(memory_format=torch.contiguous_format)


@impl("_histogramdd_from_bin_tensors")
def histogramdd_from_bin_tensors(self, bins, *, weight=None, density=False):
    _check(self, bins, weight)
    return _histogramdd(self, list(bins), weight, density)
