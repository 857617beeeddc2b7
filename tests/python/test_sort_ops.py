"""The sort family on the device (torch_mimic/ops_sort.py, ops_unique.py, ops_search.py)
against the CPU: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique (with
and without dim, consecutive), searchsorted, bucketize and histc, over dtypes, 0-dim, empty,
non-contiguous inputs and dims, stable ties and NaN, out=, backward and errors. Results are
exact: every op selects or counts, none rounds (histc's bin positions are computed with the
CPU's float32 operations in its order)."""
import pytest
import torch

from kernel_launches import launches

DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool]


def _to(x, device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


def _same(actual, expected):
    if isinstance(expected, (tuple, list)):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _same(a, e)
        return
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=0, equal_nan=True)


def _compare(fn, args, device):
    expected = fn(*args)
    actual = fn(*[_to(a, device) for a in args])
    _same(tuple(actual) if isinstance(actual, tuple) else actual,
          tuple(expected) if isinstance(expected, tuple) else expected)


def _assert_errors_match(fn, args, device):
    with pytest.raises(Exception) as on_cpu:
        fn(*[_to(a, "cpu") for a in args])
    with pytest.raises(Exception) as on_device:
        fn(*[_to(a, device) for a in args])
    assert type(on_device.value) is type(on_cpu.value)
    assert str(on_device.value).split("\n")[0] == str(on_cpu.value).split("\n")[0]


def _values(shape, dtype, distinct=5, seed=0):
    """Few distinct values (many ties), in every dtype."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-distinct, distinct, shape, generator=g)
    if dtype == torch.bool:
        return x > 0
    if dtype == torch.uint8:
        return (x + distinct).to(dtype)
    return x.to(dtype) if not dtype.is_floating_point else (x.to(torch.float32) / 2).to(dtype)


def _distinct(shape, seed=0):
    g = torch.Generator().manual_seed(seed)
    n = 1
    for s in shape:
        n *= s
    return (torch.randperm(n, generator=g).to(torch.float32) / 4 - n / 8).reshape(shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sort_stable_ties_every_dim(dtype, device, fallbacks):
    x = _values((4, 7, 5), dtype)
    for dim in (0, 1, 2, -1):
        for descending in (False, True):
            _compare(lambda t: torch.sort(t, dim=dim, descending=descending, stable=True), [x], device)
            _compare(lambda t: torch.argsort(t, dim=dim, descending=descending, stable=True), [x], device)
    _compare(torch.msort, [x], device)
    assert fallbacks() == {}


def test_unstable_sorts_of_ties_go_to_the_cpu(device, fallbacks):
    # Rows of at most 16 elements: the CPU's std::sort sorts by insertion, stably.
    _compare(lambda t: torch.sort(t, dim=1), [_values((3, 16), torch.float32, 2)], device)
    _compare(lambda t: torch.sort(t, dim=1), [_distinct((3, 40))], device)
    assert fallbacks() == {}
    _compare(lambda t: torch.sort(t, dim=1), [_values((3, 40), torch.float32, 2)], device)
    _compare(lambda t: torch.argsort(t, dim=1), [_values((3, 40), torch.float32, 2)], device)
    assert fallbacks() == {"aten::sort.stable": 2}


def test_sort_nan_inf_and_signed_zero(device, fallbacks):
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[1.0, nan, -0.0, 0.0, -inf, nan, inf, -1.0, 0.0, -0.0]])
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        for descending in (False, True):
            _compare(lambda t: torch.sort(t, descending=descending, stable=True), [x.to(dtype)], device)
    assert fallbacks() == {}


def test_sort_shapes_and_views(device, fallbacks):
    _compare(lambda t: torch.sort(t, stable=True), [torch.tensor(3.5)], device)
    _compare(lambda t: torch.sort(t, dim=1, stable=True), [torch.empty(3, 0, 2)], device)
    x = _values((6, 9), torch.float32)
    _compare(lambda t: torch.sort(t.t(), dim=1, stable=True), [x], device)
    _compare(lambda t: torch.sort(t[:, ::2], dim=1, descending=True, stable=True), [x], device)
    _compare(lambda t: torch.sort(t, dim=0, stable=True), [_values((1000,), torch.float32, 50)], device)
    assert fallbacks() == {}


def test_sort_is_one_launch(device):
    x = _values((64, 100), torch.float32).to(device)
    torch.sort(x, stable=True)  # the kernel is built and cached
    before = launches()
    torch.sort(x, stable=True)
    assert launches() - before == 1


def test_sort_out(device, fallbacks):
    x = _values((5, 8), torch.int64)
    values, indices = torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64)
    d_values, d_indices = values.to(device), indices.to(device)
    torch.sort(x, dim=0, stable=True, out=(values, indices))
    torch.sort(x.to(device), dim=0, stable=True, out=(d_values, d_indices))
    _same((d_values, d_indices), (values, indices))
    assert fallbacks() == {}


def test_rows_beyond_the_scratchpad_sort_in_passes(device, fallbacks):
    capacity = torch.ops.mimic.sort_capacity(0)
    x = _values((2, 2 * capacity + 3), torch.float32, 1000)
    for descending in (False, True):
        _compare(lambda t: torch.sort(t, descending=descending, stable=True), [x], device)
    _compare(lambda t: torch.unique(t, return_inverse=True, return_counts=True), [x], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.uint8])
def test_selections(dtype, device, fallbacks):
    x = _distinct((5, 6, 7)).to(dtype) if dtype.is_floating_point else torch.randperm(210).reshape(5, 6, 7).to(dtype)
    for dim in (0, 2):
        for keepdim in (False, True):
            _compare(lambda t: torch.kthvalue(t, 3, dim, keepdim), [x], device)
            _compare(lambda t: torch.median(t, dim, keepdim), [x], device)
            _compare(lambda t: torch.nanmedian(t, dim, keepdim), [x], device)
        for largest in (False, True):
            _compare(lambda t: torch.topk(t, 4, dim, largest), [x], device)
    _compare(torch.median, [x], device)
    _compare(torch.nanmedian, [x], device)
    assert fallbacks() == {}


def test_medians_with_nan(device, fallbacks):
    nan = float("nan")
    x = torch.tensor([[1.0, nan, 3.0, 2.0, nan], [4.0, 0.0, 1.0, 2.0, 3.0], [nan, nan, nan, nan, nan]])
    for fn in (torch.median, torch.nanmedian):
        _compare(lambda t: fn(t[:2], 1), [x], device)
        _compare(fn, [x], device)
        _compare(fn, [x[1]], device)
    _compare(lambda t: torch.median(t, 1), [x], device)
    _compare(lambda t: torch.topk(t, 2, 1), [x[:2]], device)
    assert fallbacks() == {}
    # The CPU's index for a row of NaN only comes from nth_element's internals.
    _compare(lambda t: torch.nanmedian(t, 1), [x], device)
    assert fallbacks() == {"aten::nanmedian.dim_values": 1}


def test_ties_in_selections_go_to_the_cpu(device, fallbacks):
    x = torch.tensor([[3.0, 1.0, 3.0, 2.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0]])
    _compare(lambda t: torch.topk(t, 2, 1), [x], device)
    _compare(lambda t: torch.kthvalue(t, 4, 1), [x], device)
    _compare(lambda t: torch.kthvalue(t, 2, 1), [x], device)
    _compare(lambda t: torch.mode(t), [torch.arange(40) % 3], device)
    assert fallbacks() == {"aten::topk": 1, "aten::kthvalue.values": 1, "aten::mode": 1}


@pytest.mark.parametrize("dtype", DTYPES)
def test_mode(dtype, device, fallbacks):
    x = _values((3, 4, 9), dtype, 3)
    for dim in (0, 2):
        for keepdim in (False, True):
            _compare(lambda t: torch.mode(t, dim, keepdim), [x], device)
    _compare(torch.mode, [torch.tensor(2.0)], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("fn", [
    lambda t: torch.sort(t, 1)[0],
    lambda t: torch.topk(t, 3, 1)[0],
    lambda t: torch.kthvalue(t, 2, 0)[0],
    lambda t: torch.median(t, 1)[0],
    lambda t: torch.median(t),
])
def test_backward(fn, device, fallbacks):
    x = _distinct((4, 6))
    grads = []
    for where in ("cpu", device):
        leaf = x.detach().to(where).requires_grad_()
        out = fn(leaf)
        out.backward(torch.arange(out.numel(), dtype=torch.float32).reshape(out.shape).to(where))
        grads.append(leaf.grad)
    _same(grads[1], grads[0])
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool])
def test_unique(dtype, device, fallbacks):
    x = _values((4, 6), dtype, 3)
    A = torch.ops.aten
    for inverse in (False, True):
        for counts in (False, True):
            _compare(lambda t: A._unique2(t, True, inverse, counts), [x], device)
            _compare(lambda t: A.unique_consecutive(t, inverse, counts), [x], device)
            for dim in (0, 1):
                _compare(lambda t: A.unique_dim(t, dim, True, inverse, counts), [x], device)
                _compare(lambda t: A.unique_consecutive(t, inverse, counts, dim), [x], device)
        _compare(lambda t: A._unique(t, True, inverse), [x], device)
    _compare(lambda t: torch.unique(t, return_inverse=True, return_counts=True), [x.t()], device)
    _compare(lambda t: torch.unique(t, dim=2, return_inverse=True), [_values((2, 3, 4), dtype, 1)], device)
    _compare(lambda t: A._unique2(t, True, True, True), [x[0, 0]], device)
    _compare(lambda t: A._unique2(t, False, True, True), [x[0, :1]], device)
    empty = torch.empty(5, 0, 5, dtype=dtype)
    for inverse in (False, True):
        for counts in (False, True):
            _compare(lambda t: A._unique2(t, True, inverse, counts), [empty], device)
            _compare(lambda t: A.unique_consecutive(t, inverse, counts), [empty], device)
            _compare(lambda t: A.unique_dim(t, 1, True, inverse, counts), [empty], device)
    assert fallbacks() == {}


def test_unique_unsorted_goes_to_the_cpu(device, fallbacks):
    # The CPU returns its hash set's order.
    _compare(lambda t: torch.ops.aten._unique2(t, False, True, True), [torch.tensor([3, 1, 2, 1, 5])], device)
    assert fallbacks() == {"aten::_unique2": 1}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int32, torch.int64])
def test_searchsorted_and_bucketize(dtype, device, fallbacks):
    boundaries = torch.sort(_values((3, 8), dtype, 6), -1).values
    values = _values((3, 5), dtype, 7, seed=1)
    for right in (False, True):
        for out_int32 in (False, True):
            flags = dict(right=right, out_int32=out_int32)
            _compare(lambda b, v: torch.searchsorted(b, v, **flags), [boundaries, values], device)
            _compare(lambda b, v: torch.searchsorted(b[1], v, **flags), [boundaries, values], device)
            _compare(lambda v, b: torch.bucketize(v, b[0], **flags), [values, boundaries], device)
        _compare(lambda b: torch.searchsorted(b, 1, right=right), [boundaries[0]], device)
        _compare(lambda b, v: torch.searchsorted(b, v, side="right" if right else "left"), [boundaries, values], device)
    shuffled = _values((3, 8), dtype, 6)
    sorter = torch.argsort(shuffled, dim=-1, stable=True)
    _compare(lambda b, v, s: torch.searchsorted(b, v, sorter=s), [shuffled, values, sorter], device)
    _compare(lambda b, v: torch.searchsorted(b, v), [boundaries[0], values[0, 0]], device)
    out, d_out = torch.empty(0, dtype=torch.int64), torch.empty(0, dtype=torch.int64, device=device)
    torch.searchsorted(boundaries, values, out=out)
    torch.searchsorted(boundaries.to(device), values.to(device), out=d_out)
    _same(d_out, out)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_searchsorted_merged_for_many_pairs(dtype, device, fallbacks):
    # Past 2^20 value-boundary pairs the values and boundaries are merged by a sort.
    boundaries = torch.sort(_values((2, 1500), dtype, 300), -1).values
    values = _values((2, 1000), dtype, 320, seed=3)
    if dtype.is_floating_point:
        values[0, :3] = float("nan")
    for right in (False, True):
        _compare(lambda b, v: torch.searchsorted(b, v, right=right), [boundaries, values], device)
        _compare(lambda v, b: torch.bucketize(v, b[0], right=right), [values, boundaries], device)
    assert fallbacks() == {}


def test_searchsorted_nan_values(device, fallbacks):
    b = torch.tensor([-1.0, 0.0, 2.0, 5.0])
    v = torch.tensor([float("nan"), -2.0, 0.0, 5.0, 7.0])
    for right in (False, True):
        _compare(lambda b, v: torch.searchsorted(b, v, right=right), [b, v], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("args", [(10, 0, 0), (7, -1.0, 1.0), (5, 0.25, 0.25), (100, -3, 3), (1, -10, 10)])
def test_histc(args, device, fallbacks):
    x = torch.cat([torch.randn(200, generator=torch.Generator().manual_seed(2)), torch.tensor([1.0, -1.0, 3.0])])
    _compare(lambda t: torch.histc(t, *args), [x], device)
    _compare(lambda t: torch.histc(t, *args), [torch.empty(5, 0, 5)], device)
    out, d_out = torch.empty(0), torch.empty(0, device=device)
    torch.histc(x, *args, out=out)
    torch.histc(x.to(device), *args, out=d_out)
    _same(d_out, out)
    assert fallbacks() == {}


@pytest.mark.parametrize("fn, args", [
    (lambda t: torch.sort(t, dim=3), [torch.ones(2, 3)]),
    (lambda t: torch.topk(t, 5), [torch.ones(2, 3)]),
    (lambda t: torch.kthvalue(t, 0), [torch.ones(2, 3)]),
    (lambda t: torch.kthvalue(t, 1, 1), [torch.ones(2, 0)]),
    (lambda t: torch.median(t, 1), [torch.ones(2, 0)]),
    (lambda t: torch.topk(t, 1), [torch.ones(3, dtype=torch.float16)]),
    (lambda b, v: torch.searchsorted(b, v), [torch.ones(2, 3), torch.ones(3, 3)]),
    (lambda b, v: torch.searchsorted(b, v, right=True, side="left"), [torch.ones(3), torch.ones(3)]),
    (lambda v, b: torch.bucketize(v, b), [torch.ones(3), torch.ones(2, 3)]),
    (lambda t: torch.histc(t, bins=0), [torch.ones(3)]),
    (lambda t: torch.histc(t, 4, 2, 1), [torch.ones(3)]),
    (lambda t: torch.histc(t), [torch.ones(3, dtype=torch.int64)]),
    (lambda t: torch.histc(t, 4, -1, 1), [torch.ones(3, dtype=torch.float16)]),
    (lambda t: torch.unique(t), [torch.ones(3, dtype=torch.float16)]),
])
def test_errors_match_the_cpu(fn, args, device):
    _assert_errors_match(fn, args, device)


def test_sorts_on_fake_and_meta_tensors_launch_nothing(device):
    from torch._subclasses.fake_tensor import FakeTensorMode

    real = torch.randn(4, 5, device=device)
    mode = FakeTensorMode()
    before = launches()
    with mode:
        x = mode.from_tensor(real)
        values, indices = torch.sort(x, dim=0, stable=True)
        picked = torch.topk(x, 2).values
        torch.ops.mimic.sort(torch.empty(4, 5, device=device), None, torch.empty(4, 5, device=device), False)
    meta = torch.empty(3, 8, device="meta")
    torch.ops.mimic.sort(meta, torch.empty(3, 8, dtype=torch.int64, device="meta"), meta, True)
    assert launches() == before
    assert (values.shape, indices.dtype, picked.shape) == ((4, 5), torch.int64, (4, 2))
