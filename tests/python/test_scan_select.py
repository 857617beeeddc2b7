"""Scans and data-dependent selection on the device (torch_mimic/ops_scan.py, ops_select.py)
against the CPU: cumsum, cumprod, logcumsumexp, cummax, cummin, nonzero, argwhere, one-argument
where, masked_select, masked_scatter_ and count_nonzero over dtypes, 0-dim, empty,
non-contiguous and long inputs, every dim, out= and in-place variants, backward, errors and
warnings, and the launches each takes.

Integer results, indices and selections are exact. Float scans add in float32 where the CPU
accumulates in double: a running sum of j terms is then off by at most j units of float32
roundoff of the running sum of magnitudes (products: j units of the product), plus one unit of
the output dtype for the final rounding; the bounds below are those."""
import warnings

import pytest
import torch

import torch_mimic
from kernel_launches import launches, launches_of

U32 = 2.0 ** -24
UNIT = {torch.float32: U32, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
SCAN_DTYPES = [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]
SHAPES = [(), (0,), (7,), (4, 0, 3), (5, 6), (3, 4, 5), (2, 1300)]


def _values(shape, dtype, seed=0, low=-4, high=4):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_floating_point:
        return (torch.rand(shape, generator=g, dtype=torch.float64) * (high - low) + low).to(dtype)
    lo = 0 if dtype == torch.uint8 else low
    return torch.randint(lo, high, shape, generator=g).to(dtype)


def _dims(x):
    return range(-max(x.dim(), 1), max(x.dim(), 1))


def _check_scan(actual, expected, x, dim, kind):
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    actual = actual.cpu()
    if not expected.dtype.is_floating_point:
        assert torch.equal(actual, expected)
        return
    wide = x.double()
    steps = torch.ones_like(wide).cumsum(dim) if x.dim() else torch.ones_like(wide)
    if kind == "sum":
        magnitude = wide.abs().cumsum(dim) if x.dim() else wide.abs()
    else:
        magnitude = expected.double().abs()
    bound = steps * U32 * magnitude + UNIT[expected.dtype] * expected.double().abs()
    error = (actual.double() - expected.double()).abs()
    assert bool((error <= bound).all()), f"error {error.max()} above its bound"


@pytest.mark.parametrize("dtype", SCAN_DTYPES)
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_cumsum_and_cumprod_match_cpu(device, fallbacks, op, dtype):
    for shape in SHAPES:
        x = _values(shape, dtype, low=0.5 if op == "cumprod" else -4, high=1.5 if op == "cumprod" else 4) \
            if dtype.is_floating_point else _values(shape, dtype, high=3)
        for dim in _dims(x):
            expected = getattr(torch, op)(x, dim)
            _check_scan(getattr(torch, op)(x.to(device), dim), expected, x, dim, op[3:])
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_logcumsumexp_matches_cpu(device, fallbacks, dtype):
    for shape in SHAPES:
        x = _values(shape, dtype)
        for dim in _dims(x):
            expected = torch.logcumsumexp(x, dim)
            actual = torch.logcumsumexp(x.to(device), dim).cpu()
            # Each step adds a few units of roundoff of a value below 1 (the carry is kept
            # exactly); the output is rounded once.
            steps = torch.ones_like(x, dtype=torch.float64).cumsum(dim) if x.dim() else 1
            bound = steps * 4 * U32 + UNIT[dtype] * expected.double().abs()
            assert bool(((actual.double() - expected.double()).abs() <= bound).all())
    special = torch.tensor([float("-inf"), float("-inf"), 1.0, float("inf"), float("inf"), 2.0, float("nan"), 0.0])
    assert torch.equal(torch.logcumsumexp(special.to(device), 0).cpu().isnan(), torch.logcumsumexp(special, 0).isnan())
    torch.testing.assert_close(torch.logcumsumexp(special[:6].to(device), 0).cpu(),
                               torch.logcumsumexp(special[:6], 0), rtol=0, atol=0)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", SCAN_DTYPES)
@pytest.mark.parametrize("op", ["cummax", "cummin"])
def test_cummax_and_cummin_are_exact(device, fallbacks, op, dtype):
    for shape in SHAPES:
        x = _values(shape, dtype, high=2)  # few values: many ties, the last index wins
        for dim in _dims(x):
            expected = getattr(torch, op)(x, dim)
            actual = getattr(torch, op)(x.to(device), dim)
            assert torch.equal(actual.values.cpu(), expected.values)
            assert torch.equal(actual.indices.cpu(), expected.indices)
    nan = torch.tensor([1.0, float("nan"), 3.0, float("nan"), -1.0, 5.0])
    for fn in (torch.cummax, torch.cummin):
        expected, actual = fn(nan, 0), fn(nan.to(device), 0)
        assert torch.equal(actual.indices.cpu(), expected.indices)
        assert torch.equal(actual.values.cpu().isnan(), expected.values.isnan())
    assert fallbacks() == {}


def test_scans_of_non_contiguous_and_long_inputs(device, fallbacks):
    x = _values((6, 40, 5), torch.float32).transpose(0, 2)[:, ::3]
    for dim in range(3):
        _check_scan(torch.cumsum(x.to(device), dim), torch.cumsum(x, dim), x, dim, "sum")
    long = _values((3, 30001), torch.int32)  # blocked, with a tail
    assert torch.equal(torch.cumsum(long.to(device), 1).cpu(), torch.cumsum(long, 1))
    assert torch.equal(torch.cummax(long.to(device), 1).indices.cpu(), torch.cummax(long, 1).indices)
    assert fallbacks() == {}


def test_out_in_place_and_dtype_arguments(device, fallbacks):
    x = _values((4, 5), torch.float32)
    out = torch.empty(0, device=device)
    assert torch.cumsum(x.to(device), 1, out=out) is out
    _check_scan(out, torch.cumsum(x, 1), x, 1, "sum")
    y = x.to(device)
    y.cumprod_(0)
    _check_scan(y, torch.cumprod(x, 0), x, 0, "prod")
    ints = _values((3, 6), torch.int32)
    assert torch.equal(torch.cumsum(ints.to(device), 1, dtype=torch.float32).cpu(),
                       torch.cumsum(ints, 1, dtype=torch.float32))
    # A float input summed into integers is converted first, as the CPU does.
    assert torch.equal(torch.cumsum((x * 2).to(device), 0, dtype=torch.int64).cpu(),
                       torch.cumsum(x * 2, 0, dtype=torch.int64))
    i32 = torch.empty(0, dtype=torch.int32, device=device)
    torch.cumsum(ints.long().to(device), 0, out=i32)
    assert torch.equal(i32.cpu(), torch.cumsum(ints.long(), 0, out=torch.empty(0, dtype=torch.int32)))
    values, indices = torch.empty(0, device=device), torch.empty(0, dtype=torch.int64, device=device)
    torch.cummax(x.to(device), 1, out=(values, indices))
    assert torch.equal(indices.cpu(), torch.cummax(x, 1).indices)
    lse = torch.empty(0, device=device)
    torch.logcumsumexp(x.to(device), 0, out=lse)
    torch.testing.assert_close(lse.cpu(), torch.logcumsumexp(x, 0))
    assert fallbacks() == {}


def test_scan_errors_match_cpu(device):
    cases = [
        (lambda t: torch.cumsum(t, 2), torch.zeros(4)),
        (lambda t: torch.cumprod(t, -3), torch.zeros(2, 2)),
        (lambda t: torch.cummax(t, 1), torch.zeros(3)),
        (lambda t: torch.logcumsumexp(t, 0), torch.zeros(3, dtype=torch.int64)),
        (lambda t: torch.cumsum(t, 0), torch.zeros(3, dtype=torch.float16)),
    ]
    for fn, x in cases:
        with pytest.raises(Exception) as on_cpu:
            fn(x)
        with pytest.raises(Exception) as on_device:
            fn(x.to(device))
        assert type(on_device.value) is type(on_cpu.value)
        assert str(on_device.value).split("\n")[0] == str(on_cpu.value).split("\n")[0]


def _gradients(fn, x, cotangent):
    x = x.detach().requires_grad_()
    out = fn(x)
    out = out.values if isinstance(out, tuple) else out
    (grad,) = torch.autograd.grad(out, x, cotangent)
    return grad


@pytest.mark.parametrize("op", ["cumsum", "cumprod", "logcumsumexp", "cummax", "cummin"])
def test_backward_matches_cpu(device, fallbacks, op):
    fn = getattr(torch, op)
    for shape, dim in [((5, 6), 0), ((5, 6), 1), ((3, 4, 5), 1), ((), 0)]:
        x = _values(shape, torch.float32, low=0.5, high=1.5) if op == "cumprod" else _values(shape, torch.float32)
        cotangent = _values(shape, torch.float32, seed=1)
        expected = _gradients(lambda t: fn(t, dim), x, cotangent)
        actual = _gradients(lambda t: fn(t, dim), x.to(device), cotangent.to(device)).cpu()
        # The backward formulas are scans (and, for cumprod and logcumsumexp, a few pointwise
        # ops per element) over at most 6 steps: a few units of roundoff per step.
        n = max(shape) if shape else 1
        torch.testing.assert_close(actual, expected, rtol=8 * n * U32, atol=8 * n * U32 * float(cotangent.abs().sum()))
    assert fallbacks() == {}


SELECT_DTYPES = [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]
SELECT_SHAPES = [(), (0,), (1,), (9,), (4, 0), (3, 4), (2, 3, 4), (50, 101)]  # 5050: a blocked scan


def _sparse(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    keep = torch.rand(shape, generator=g) > 0.6
    if dtype == torch.bool:
        return keep
    return (_values(shape, dtype, seed) * keep).to(dtype)


@pytest.mark.parametrize("dtype", SELECT_DTYPES)
def test_nonzero_argwhere_where_and_count_nonzero(device, fallbacks, dtype):
    for shape in SELECT_SHAPES:
        x = _sparse(shape, dtype)
        d = x.to(device)
        assert torch.equal(torch.nonzero(d).cpu(), torch.nonzero(x))
        assert torch.equal(torch.argwhere(d).cpu(), torch.argwhere(x))
        for actual, expected in zip(torch.where(d), torch.where(x)):
            assert torch.equal(actual.cpu(), expected)
        assert torch.equal(torch.count_nonzero(d).cpu(), torch.count_nonzero(x))
        if x.dim():
            assert torch.equal(torch.count_nonzero(d, dim=-1).cpu(), torch.count_nonzero(x, dim=-1))
    strided = _sparse((6, 8), dtype).t()[::2]
    assert torch.equal(torch.nonzero(strided.to(device)).cpu(), torch.nonzero(strided))
    out = torch.empty(0, dtype=torch.int64, device=device)
    torch.nonzero(_sparse((3, 5), dtype).to(device), out=out)
    assert torch.equal(out.cpu(), torch.nonzero(_sparse((3, 5), dtype)))
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", SELECT_DTYPES)
def test_masked_select_and_masked_scatter(device, fallbacks, dtype):
    for shape in SELECT_SHAPES:
        x = _values(shape, dtype)
        mask = _sparse(shape, torch.bool, seed=2)
        assert torch.equal(torch.masked_select(x.to(device), mask.to(device)).cpu(), torch.masked_select(x, mask))
        source = _values((x.numel() + 2,), dtype, seed=3)
        expected = x.clone().masked_scatter_(mask, source)
        actual = x.to(device).masked_scatter_(mask.to(device), source.to(device))
        assert torch.equal(actual.cpu(), expected)
    # Broadcasting both ways, and a non-contiguous source.
    x, row = _values((4, 6), dtype), _sparse((6,), torch.bool, seed=4)
    assert torch.equal(torch.masked_select(x.to(device), row.to(device)).cpu(), torch.masked_select(x, row))
    col = _sparse((4, 1), torch.bool, seed=5)
    assert torch.equal(torch.masked_select(x[0].to(device), col.to(device)).cpu(), torch.masked_select(x[0], col))
    source = _values((8, 5), dtype, seed=6).t()
    assert torch.equal(x.to(device).masked_scatter_(row.to(device), source.to(device)).cpu(),
                       x.clone().masked_scatter_(row, source))
    out = torch.empty(0, dtype=dtype, device=device)
    torch.masked_select(x.to(device), row.to(device), out=out)
    assert torch.equal(out.cpu(), torch.masked_select(x, row))
    assert fallbacks() == {}


def test_byte_masks_warn_as_an_accelerator_does(device):
    """masked_scatter_ warns as the CPU does; masked_select as indexing, as PyTorch's
    test_masked_select expects of every device but the CPU (CUDA's selects by indexing)."""
    x, mask = torch.arange(6.0), torch.tensor([0, 1, 1, 0, 0, 1], dtype=torch.uint8)
    indexing = ["indexing with dtype torch.uint8 is now deprecated, please use a dtype torch.bool instead."]

    def messages(fn):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = fn()
        return result, [str(w.message).split(" (Triggered internally")[0] for w in caught]

    for fn, message in ((lambda t, m: torch.masked_select(t, m), indexing),
                        (lambda t, m: t.clone().masked_scatter_(m, t), None)):
        expected, cpu_warnings = messages(lambda: fn(x, mask))
        actual, device_warnings = messages(lambda: fn(x.to(device), mask.to(device)))
        assert torch.equal(actual.cpu(), expected)
        assert device_warnings == (message or cpu_warnings) and cpu_warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fn(x.to(device), mask.to(device))
        assert caught[0].filename == __file__  # the caller's line, as for the CPU's warning


@pytest.mark.filterwarnings("ignore:masked_s.* received a mask with dtype torch.uint8")
@pytest.mark.filterwarnings("ignore:indexing with dtype torch.uint8 is now deprecated")
def test_select_errors_match_cpu(device):
    cases = [
        (lambda t, m: torch.masked_select(t, m), torch.zeros(4), torch.ones(3, dtype=torch.bool)),
        (lambda t, m: torch.masked_select(t, m), torch.zeros(4), torch.ones(4)),
        (lambda t, m: t.masked_scatter_(m, torch.ones(2, device=t.device)), torch.zeros(4),
         torch.ones(4, dtype=torch.bool)),
        (lambda t, m: t.masked_scatter_(m, torch.ones(5, device=t.device)), torch.zeros(4),
         torch.ones(3, dtype=torch.bool)),
        (lambda t, m: torch.masked_select(t, m, out=torch.empty(0, dtype=torch.int32, device=t.device)),
         torch.zeros(4), torch.ones(4, dtype=torch.bool)),
        (lambda t, m: torch.masked_select(t, m), torch.zeros(3), torch.tensor([0, 2, 1], dtype=torch.uint8)),
        (lambda t, m: t.masked_scatter_(m, t), torch.zeros(3), torch.tensor([0, 2, 1], dtype=torch.uint8)),
    ]
    for fn, x, mask in cases:
        with pytest.raises(Exception) as on_cpu:
            fn(x, mask)
        with pytest.raises(Exception) as on_device:
            fn(x.to(device), mask.to(device))
        assert type(on_device.value) is type(on_cpu.value)
        assert str(on_device.value).split("\n")[0] == str(on_cpu.value).split("\n")[0]


def test_the_scan_primitive_and_scans_on_fake_tensors_launch_nothing(device):
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode()
    before = launches()
    with mode:
        x = torch.empty(4, 5, device=device)
        torch.ops.mimic.scan(x, None, x, 1, "sum")
        shapes = [tuple(torch.cumsum(x, 1).shape), tuple(torch.cumprod(x, 0).shape)]
    assert launches() == before
    assert shapes == [(4, 5), (4, 5)]


def test_launch_counts(device):
    x = _values((30, 20), torch.float32).to(device)
    mask = _sparse((30, 20), torch.bool).to(device)
    # A scan is one launch, whatever the dim.
    for fn in (lambda: torch.cumsum(x, 0), lambda: torch.cumprod(x, 1), lambda: torch.cummax(x, 1),
               lambda: torch.logcumsumexp(x, 0)):
        assert launches_of(fn) == 1
    # Up to 1024 elements: the mask, its scan, then the output's fill: nonzero computes the
    # coordinates and the slots and scatters them (5); masked_select the slots and the scatter
    # (4); masked_scatter_ the source indices, the gather and the select (5).
    assert launches_of(lambda: torch.nonzero(x)) == 5
    assert launches_of(lambda: torch.masked_select(x, mask)) == 4
    y = x.clone()
    assert launches_of(lambda: y.masked_scatter_(mask, x)) == 5
    # Masks of 4096 elements and more are scanned in blocks: the rows, their totals, the
    # offsets' launch (and for lengths that are no multiple of the rows, the tail's scan and
    # its offset): two to four more launches, however long.
    for n, extra in ((4900, 2), (5000, 4), (100000, 4)):
        long = _sparse((n,), torch.float32).to(device)
        assert launches_of(lambda: torch.nonzero(long)) == 5 + extra
        assert launches_of(lambda: torch.cumsum(long, 0)) == 1 + extra
