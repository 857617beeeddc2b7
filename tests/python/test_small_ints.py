"""int8 and int16 on the device (the ISA's i8 and i16 types) against the CPU: arithmetic that
wraps in the type's width, division and remainder signs, casts both ways, reductions (sum and
prod accumulate in int64 as PyTorch does), comparisons, sort and cumsum, on contiguous,
non-contiguous, empty and 0-dim operands. Integer results are exact, so every comparison is
torch.equal; float results of true division are compared at float32's rounding unit.

Each test also checks that the ops it names ran on the device (no CPU fallback)."""
import pytest
import torch

SMALL = [torch.int8, torch.int16]
SHAPES = [(), (0,), (7,), (3, 5), (2, 3, 70)]


def _full_range(shape, dtype, seed, nonzero=False):
    info = torch.iinfo(dtype)
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(info.min, info.max + 1, shape, generator=g, dtype=torch.int64)
    if nonzero:
        x[x == 0] = 1
    # The extremes, where wrapping shows.
    flat = x.view(-1)
    if flat.numel() >= 4:
        flat[0], flat[1], flat[2], flat[3] = info.min, info.max, -1, info.min
    return x.to(dtype)


def _same(actual, expected):
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape
    assert torch.equal(actual.cpu(), expected), (actual.cpu(), expected)


def _native(fallbacks):
    assert not fallbacks(), f"CPU fallbacks: {fallbacks()}"


@pytest.mark.parametrize("dtype", SMALL)
@pytest.mark.parametrize("op", ["add", "sub", "mul", "maximum", "minimum", "bitwise_and",
                                "bitwise_or", "bitwise_xor"])
def test_binary_arithmetic_wraps_like_cpu(device, fallbacks, op, dtype):
    fn = getattr(torch, op)
    for shape in SHAPES:
        a, b = _full_range(shape, dtype, 1), _full_range(shape, dtype, 2)
        _same(fn(a.to(device), b.to(device)), fn(a, b))
    # A non-contiguous operand and a Python scalar that wraps.
    a, b = _full_range((6, 8), dtype, 3), _full_range((8, 6), dtype, 14)
    _same(fn(a.to(device).t(), b.to(device)), fn(a.t(), b))
    if op in ("add", "sub", "mul"):
        _same(fn(a.to(device), 100), fn(a, 100))
    _native(fallbacks)


@pytest.mark.parametrize("dtype", SMALL)
def test_unary_ops_wrap_at_the_minimum(device, fallbacks, dtype):
    a = _full_range((5, 9), dtype, 4)
    for fn in (torch.neg, torch.abs, torch.bitwise_not, torch.sign, torch.square):
        _same(fn(a.to(device)), fn(a))
    _native(fallbacks)


@pytest.mark.parametrize("dtype", SMALL)
def test_division_and_remainder_signs(device, fallbacks, dtype):
    a = _full_range((4, 33), dtype, 5)
    b = _full_range((4, 33), dtype, 6, nonzero=True)
    b[0, :4] = torch.tensor([-1, 7, -7, 3], dtype=dtype)
    a[0, :4] = torch.tensor([torch.iinfo(dtype).min, -20, 20, -20], dtype=dtype)
    da, db = a.to(device), b.to(device)
    _same(torch.div(da, db, rounding_mode="trunc"), torch.div(a, b, rounding_mode="trunc"))
    _same(torch.div(da, db, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"))
    _same(torch.remainder(da, db), torch.remainder(a, b))
    _same(torch.fmod(da, db), torch.fmod(a, b))
    _native(fallbacks)
    _same(torch.floor_divide(da, db), torch.floor_divide(a, b))  # served by the CPU fallback
    # True division gives float32: one rounding of an exact quotient on both sides.
    true = torch.true_divide(da, db).cpu()
    expected = torch.true_divide(a, b)
    assert true.dtype == torch.float32
    assert torch.allclose(true, expected, rtol=2.0 ** -24, atol=0)


@pytest.mark.parametrize("dtype", SMALL)
def test_casts_both_ways(device, fallbacks, dtype):
    a = _full_range((3, 41), dtype, 7)
    for other in (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
                  torch.float32, torch.float16, torch.bfloat16):
        _same(a.to(device).to(other), a.to(other))
        # From the other type: integers wrap into the narrow type, floats in its range truncate.
        src = _full_range((3, 41), torch.int32, 8) if not other.is_floating_point else (
            torch.linspace(-120.75, 120.75, 123).reshape(3, 41).to(other))
        if other in (torch.uint8, torch.bool, torch.int8, torch.int16, torch.int64):
            src = src.to(other)
        _same(src.to(device).to(dtype), src.to(dtype))
    _native(fallbacks)


@pytest.mark.parametrize("dtype", SMALL)
def test_reductions_accumulate_like_cpu(device, fallbacks, dtype):
    for shape in [(0,), (7,), (3, 5), (2, 3, 70), (1000,)]:
        a = _full_range(shape, dtype, 9)
        da = a.to(device)
        _same(da.sum(), a.sum())  # int64, not wrapped in the narrow type
        _same(da.sum(dtype=dtype), a.sum(dtype=dtype))  # wraps in the type
        if a.numel():
            _same(da.max(), a.max())
            _same(da.min(), a.min())
            _same(da.argmax(), a.argmax())
            _same(da.argmin(), a.argmin())
        for dim in range(a.dim()):
            _same(da.sum(dim), a.sum(dim))
            _same(da.prod(dim), a.prod(dim))
            if a.shape[dim]:
                _same(da.amax(dim), a.amax(dim))
                _same(da.max(dim).values, a.max(dim).values)
                _same(da.max(dim).indices, a.max(dim).indices)
    _native(fallbacks)


@pytest.mark.parametrize("dtype", SMALL)
def test_comparisons(device, fallbacks, dtype):
    a, b = _full_range((3, 40), dtype, 10), _full_range((3, 40), dtype, 11)
    b[:, :10] = a[:, :10]
    for fn in (torch.eq, torch.ne, torch.lt, torch.le, torch.gt, torch.ge):
        _same(fn(a.to(device), b.to(device)), fn(a, b))
        _same(fn(a.to(device), -3), fn(a, -3))
    _same(torch.where(a.to(device) > b.to(device), a.to(device), b.to(device)),
          torch.where(a > b, a, b))
    _native(fallbacks)


@pytest.mark.parametrize("dtype", SMALL)
def test_sort_and_topk(device, dtype):
    a = _full_range((4, 300), dtype, 12)
    a[:, 100:140] = 5  # ties: a stable sort keeps their order
    for descending in (False, True):
        values, indices = torch.sort(a.to(device), dim=1, descending=descending, stable=True)
        ev, ei = torch.sort(a, dim=1, descending=descending, stable=True)
        _same(values, ev)
        _same(indices, ei)
    top = torch.topk(a.to(device), 7, dim=1)
    _same(top.values, torch.topk(a, 7, dim=1).values)


@pytest.mark.parametrize("dtype", SMALL)
def test_cumsum(device, dtype):
    a = _full_range((3, 500), dtype, 13)
    _same(torch.cumsum(a.to(device), 1), torch.cumsum(a, 1))  # int64
    _same(torch.cumsum(a.to(device), 1, dtype=dtype), torch.cumsum(a, 1, dtype=dtype))  # wraps
    _same(torch.cumsum(a.to(device), 0), torch.cumsum(a, 0))
