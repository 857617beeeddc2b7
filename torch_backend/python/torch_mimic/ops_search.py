"""searchsorted, bucketize and histc on the device.

searchsorted counts, for each value, the boundaries of its row that the CPU's binary search
passes: !(b >= v) for the left side, !(b > v) for the right, which is the position the binary
search returns on sorted boundaries (NaN values land past every boundary, as on the CPU).
Small calls compare the [..., K, M] broadcast elementwise and sum over M (two launches, K * M
bytes). Beyond _MAX_PAIRS pairs, the values and boundaries of a row are merged by one stable
sort of their concatenation (values first for the left side, so that a boundary equal to a
value comes after it; boundaries first for the right side): a value's count is the number of
boundaries before it in the merged row, a cumulative sum, scattered back to the value's place.

histc bins each value as the CPU's linear histogram does, in float32:
pos = trunc((x - min) * bins / (max - min)), the last edge in the last bin, values outside
[min, max] (and NaN) dropped, then adds ones at those positions (index_add). With min == max
the data's own range is read once from the device, as CUDA's histc does.

Arguments the CPU refuses go to the fallback so that its error is the one raised."""
import torch

from ._lib import FLOAT_DTYPES, NATIVE_DTYPES, Unsupported, impl, resize_output
from .ops_sort import sort_along

_MAX_PAIRS = 1 << 20
_I64 = torch.int64


def _searchable(dtype):
    return dtype in NATIVE_DTYPES and dtype != torch.bool


def _search(boundaries, values, out_int32, right, side, sorter):
    if side is not None:
        if side not in ("left", "right") or (right and side == "left"):
            raise Unsupported()  # the CPU's side/right errors
        right = side == "right"
    if not isinstance(values, torch.Tensor):
        values = torch.tensor(values, device=boundaries.device)
        values = values.to(torch.result_type(boundaries, values.item()))
    if boundaries.dim() == 0 or values.device != boundaries.device:
        raise Unsupported()
    if boundaries.dim() > 1 and (values.dim() != boundaries.dim() or values.shape[:-1] != boundaries.shape[:-1]):
        raise Unsupported()  # the CPU's shape errors
    if sorter is not None:
        if sorter.dtype != _I64 or sorter.shape != boundaries.shape or sorter.device != boundaries.device:
            raise Unsupported()
        boundaries = boundaries.gather(-1, sorter)
    common = torch.promote_types(boundaries.dtype, values.dtype)
    if not _searchable(common) or not _searchable(boundaries.dtype) or not _searchable(values.dtype):
        raise Unsupported()
    m = boundaries.shape[-1]
    boundaries, values = boundaries.to(common), values.to(common)
    result_dtype = torch.int32 if out_int32 else _I64
    if values.numel() == 0 or m == 0:
        return torch.zeros(values.shape, dtype=result_dtype, device=values.device)
    if values.numel() * m > _MAX_PAIRS:
        return _merged_search(boundaries, values, right).to(result_dtype)
    b = boundaries if boundaries.dim() == 1 else boundaries.unsqueeze(-2)
    v = values.unsqueeze(-1)
    passed = (b > v) if right else (b >= v)
    return passed.logical_not().sum(-1).to(result_dtype)


def _merged_search(boundaries, values, right):
    m = boundaries.shape[-1]
    if boundaries.dim() == 1:
        b, v = boundaries.unsqueeze(0), values.reshape(1, -1)
    else:
        b, v = boundaries.reshape(-1, m), values.reshape(-1, values.shape[-1])
    k = v.shape[1]
    merged = torch.cat([b, v], 1) if right else torch.cat([v, b], 1)
    order = sort_along(merged, 1, values=False)[1]
    is_boundary = order < m if right else order >= k
    count = torch.cumsum(is_boundary, 1)
    # Each value's place in its row; the boundaries' counts go to a spare column.
    place = torch.where(is_boundary, torch.full_like(order, k), order - m if right else order)
    result = torch.zeros((v.shape[0], k + 1), dtype=_I64, device=v.device).scatter_(1, place, count)[:, :k]
    if v.dtype in FLOAT_DTYPES:
        result = torch.where(v.isnan(), torch.full_like(result, m), result)
    return result.reshape(values.shape)


def _into(out, result):
    if out.dtype != result.dtype:
        raise Unsupported()
    return resize_output(out, result.shape).copy_(result)


@impl("searchsorted.Tensor")
def searchsorted(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    return _search(sorted_sequence, self, out_int32, right, side, sorter)


@impl("searchsorted.Scalar")
def searchsorted_scalar(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None):
    return _search(sorted_sequence, self, out_int32, right, side, sorter)


@impl("searchsorted.Tensor_out")
def searchsorted_out(sorted_sequence, self, *, out_int32=False, right=False, side=None, sorter=None, out):
    return _into(out, _search(sorted_sequence, self, out_int32, right, side, sorter))


def _bucketize(values, boundaries, out_int32, right):
    if boundaries.dim() != 1:
        raise Unsupported()  # "boundaries tensor must be 1 dimension"
    return _search(boundaries, values, out_int32, right, None, None)


@impl("bucketize.Tensor")
def bucketize(self, boundaries, *, out_int32=False, right=False):
    return _bucketize(self, boundaries, out_int32, right)


@impl("bucketize.Scalar")
def bucketize_scalar(self, boundaries, *, out_int32=False, right=False):
    return _bucketize(self, boundaries, out_int32, right)


@impl("bucketize.Tensor_out")
def bucketize_out(self, boundaries, *, out_int32=False, right=False, out):
    return _into(out, _bucketize(self, boundaries, out_int32, right))


def _rounded(value, dtype):
    return torch.tensor(float(value), dtype=dtype).item()


# The counts a float32 histogram holds exactly.
_EXACT_COUNTS = 1 << 24


def _histc(self, bins, low, high):
    # bfloat16: the CPU's bins differ from these roundings; the other dtypes raise its errors.
    if self.dtype != torch.float32 or bins <= 0 or self.numel() > _EXACT_COUNTS:
        raise Unsupported()
    low, high = float(low), float(high)
    if self.numel() == 0:
        if low > high or not (abs(low) < float("inf") and abs(high) < float("inf")):
            raise Unsupported()  # the CPU's range errors
        return torch.zeros(bins, dtype=self.dtype, device=self.device)
    if low == high:
        low, high = self.min().item(), self.max().item()  # the one host read
        if low == high:
            low, high = low - 1, high + 1
    if low > high or not (abs(low) < float("inf") and abs(high) < float("inf")):
        raise Unsupported()  # the CPU's range errors
    # The edges as the CPU's linspace gives them in float32: the first and last are low and
    # high; each operation of the bin position rounds to float32, as on the CPU.
    low, high = _rounded(low, self.dtype), _rounded(high, self.dtype)
    span = _rounded(high - low, self.dtype)
    x = self.reshape(-1)
    inside = (x >= low) & (x <= high)
    position = ((x - low) * _rounded(bins, self.dtype) / span).to(_I64).clamp(0, bins - 1)
    hist = torch.zeros(bins, dtype=torch.float32, device=self.device)
    return hist.index_add_(0, position, inside.to(torch.float32))


@impl("histc")
def histc(self, bins=100, min=0, max=0):
    return _histc(self, bins, min, max)


@impl("histc.out")
def histc_out(self, bins=100, min=0, max=0, *, out):
    return _into(out, _histc(self, bins, min, max))
