"""histogram and histogramdd on the device, with given bin edges or a bin count.

Each element's bin is found as the CPU's kernel finds it: the element is kept unless it lies
below the first edge or above the last one of a dimension (so NaN is kept: the search puts it in
the last bin, as this PyTorch's CPU kernel does), and its position in a dimension is
std::upper_bound over that dimension's edges, minus one, the last edge closing the last bin.
The OpInfo samples pass unsorted edges, on which a binary search is not a count of the edges
below the value: the search is replayed step by step on the device (first/length per element,
one gather of the middle edge per step, as many steps as the edge count's bit length), so the
bin is the CPU's for any edges. The weights (or ones) of the kept elements are then added at
their flat bin (index_add), and density divides by the total and by each bin's widths.

Edges from a bin count (histogram.bin_ct, _histogramdd_bin_edges, _histogramdd_from_bin_cts)
are the CPU's linspace of the range, reproduced by one elementwise program: this build's CPU
kernel rounds start + step * i (and end - step * (steps - 1 - i) past the halfway point) once, as
an fma, except inside its 8-wide vectors, whose lanes add k * step, rounded, to the vector's first
value. Their bins are the CPU's linear interpolation, trunc((x - first) * bins / (last - first))
in float32, corrected by its std::upper_bound over the edges around it. NaN (kept, as above)
converts to INT64_MIN there, and the wrapping arithmetic that follows puts it one stride into the
histogram: position 1 in its dimension, as this build's CPU kernel counts it (a NaN whose flat
bin then lies past the histogram, which the CPU writes outside its buffer, is dropped). The
range of the data (no range given) is read once from the device, as the CPU reads it.

Other dtypes and the arguments the CPU refuses go to the fallback, so that its result or its
error is the one given."""
import math

import torch

from ._lib import Unsupported, impl, launch

_I64 = torch.int64
_F32 = torch.float32

# The CPU's linspace: its vector width, and the size beyond which it splits the work between
# threads (each part then starts its own vectors, at places that depend on the thread count).
_LANES = 8
_GRAIN = 32768
# x0: i; s0, s1: start, end; s2: steps; s3: steps // 2; s4: the elements its vector loop covers.
_CHUNK = "x0 s4 lt x0 8 div floor 8 mul x0 where"
_STEP = "s1 s0 sub s2 1 sub div"
_BASE = f"{_CHUNK} s3 lt {_STEP} {_CHUNK} s0 fma {_STEP} neg s2 {_CHUNK} sub 1 sub s1 fma where"
_LINSPACE = f"x0 {_CHUNK} sub {_STEP} mul {_BASE} add"


def _linspace(start, end, steps, device):
    """torch.linspace(start, end, steps) in float32 as this build's CPU computes it."""
    if steps > _GRAIN:
        raise Unsupported()
    index = torch.arange(steps, dtype=_F32, device=device)
    vectorised = steps // (2 * _LANES) * 2 * _LANES
    return launch(torch.empty(steps, dtype=_F32, device=device), [index], _LINSPACE, _F32,
                  [start, end, steps, steps // 2, vectorised])


def _outer_edges(rows, bounds):
    """The CPU's select_outer_bin_edges, in double; refused ranges go to the fallback."""
    n = rows.shape[1]
    if bounds is not None:
        if len(bounds) != 2 * n:
            raise Unsupported()
        low, high = list(bounds[0::2]), list(bounds[1::2])
    elif rows.shape[0] > 0:
        low, high = torch.stack([rows.amin(0), rows.amax(0)]).tolist()  # the one host read
    else:
        low, high = [0.0] * n, [1.0] * n
    for dim in range(n):
        if not (math.isfinite(low[dim]) and math.isfinite(high[dim])) or low[dim] > high[dim]:
            raise Unsupported()
        if low[dim] == high[dim]:
            low[dim], high[dim] = low[dim] - 0.5, high[dim] + 0.5
    return low, high


def _edges(rows, bin_ct, bounds):
    if len(bin_ct) != rows.shape[1] or any(count <= 0 for count in bin_ct):
        raise Unsupported()
    low, high = _outer_edges(rows, bounds)
    return [_linspace(low[d], high[d], count + 1, rows.device) for d, count in enumerate(bin_ct)]


def _upper_bound(edges, values, first, length, steps=None):
    """std::upper_bound(edges + first, edges + first + length, value) per value, as an index
    into edges; first and length are int64 tensors shaped as values, length at most
    2 ** steps - 1."""
    steps = steps or max(int(edges.numel()).bit_length(), 1)
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


def _linear_position(edges, x, inside):
    """The CPU's LINEAR_INTERPOLATION_WITH_LOCAL_SEARCH bin before the last-edge correction."""
    count = edges.numel()
    first_edge, last_edge = edges[0], edges[-1]
    finite = inside & x.isnan().logical_not()
    x = torch.where(finite, x, first_edge.expand_as(x))
    guess = ((x - first_edge) * float(count - 1) / (last_edge - first_edge)).to(_I64)
    low = (guess - 1).clamp(min=0)
    length = ((guess + 2).clamp(max=count) - low).clamp(min=0)
    position = _upper_bound(edges, x, low, length, steps=2) - 1
    return torch.where(finite, position, torch.ones_like(position))


def _histogramdd(self, bins, weight, density, linear=False):
    """The histogram of the rows of self ([..., N]) over the N edge tensors in bins; linear:
    the bins of evenly spaced edges, found as the CPU finds them."""
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
        if linear:
            position = _linear_position(edges, x, inside)
        else:
            position = _upper_bound(edges, x, first, torch.full_like(flat, count)) - 1
        position = torch.where(position == count - 1, position - 1, position)
        flat = flat + torch.where(inside, position, first) * stride
    added = torch.ones_like(rows[:, 0]) if weight is None else weight.reshape(-1)
    keep = keep & (flat < hist.numel())
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


@impl("histogram.bin_ct")
def histogram_bin_ct(self, bins=100, *, range=None, weight=None, density=False):
    rows = self.reshape(-1, 1)
    if weight is not None:
        weight = weight.reshape(-1)
    if self.dtype != _F32:
        raise Unsupported()
    edges = _edges(rows, [bins], range)
    _check(rows, edges, weight)
    return _histogramdd(rows, edges, weight, density, linear=True), edges[0]


@impl("_histogramdd_bin_edges")
def histogramdd_bin_edges(self, bins, *, range=None, weight=None, density=False):
    if self.dtype != _F32 or self.dim() < 2:
        raise Unsupported()
    return _edges(self.reshape(-1, self.shape[-1]), list(bins), range)


@impl("_histogramdd_from_bin_cts")
def histogramdd_from_bin_cts(self, bins, *, range=None, weight=None, density=False):
    if self.dtype != _F32 or self.dim() < 2:
        raise Unsupported()
    edges = _edges(self.reshape(-1, self.shape[-1]), list(bins), range)
    _check(self, edges, weight)
    return _histogramdd(self, edges, weight, density, linear=True)
