"""Regression tests for failures found by running PyTorch 1.13.1's own test files on mimic
(tests/conformance/pytorch_tests.py), each against the CPU: index_reduce with a source empty
along dim, masked_select of dtypes the index kernels move as the bits of a native dtype of
their width (int8, float64, complex64, complex128), index_fill_ with a complex value.
Selection and index_reduce's amax/amin/prod/mean with an empty source move or compare values
only, so results are exact."""
import itertools
import warnings

import pytest
import torch


def _values(shape, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=dtype)
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=g, dtype=torch.float64) * 4).to(dtype)
    return torch.randint(-8, 8, shape, generator=g).to(dtype)


@pytest.mark.parametrize("reduce", ["amax", "amin", "prod", "mean"])
@pytest.mark.parametrize("dim", [0, 1, -1])
def test_index_reduce_empty_source_along_dim(device, reduce, dim, fallbacks):
    """PyTorch's meta kernel fails on a source empty along dim (it takes the source's first
    slice to run TensorIterator's checks on meta tensors only); the CPU leaves self as it is."""
    self_cpu = _values((3, 4, 5), torch.float32)
    source_shape = [3, 4, 5]
    source_shape[dim] = 0
    source_cpu = torch.empty(source_shape)
    index_cpu = torch.empty(0, dtype=torch.int64)
    for include_self in (True, False):
        expected = self_cpu.clone().index_reduce_(dim, index_cpu, source_cpu, reduce, include_self=include_self)
        actual = self_cpu.to(device).index_reduce_(dim, index_cpu.to(device), source_cpu.to(device), reduce,
                                                   include_self=include_self)
        assert torch.equal(actual.cpu(), expected)
        out = torch.empty(0, device=device)
        torch.index_reduce(self_cpu.to(device), dim, index_cpu.to(device), source_cpu.to(device), reduce,
                           include_self=include_self, out=out)
        assert torch.equal(out.cpu(), expected)
    assert fallbacks() == {}


def test_index_reduce_still_checks_sizes(device):
    x = torch.zeros(3, 4, device=device)
    with pytest.raises(RuntimeError):  # the index has 2 entries, the source 0 rows
        x.index_reduce_(0, torch.tensor([0, 1], device=device), torch.empty(0, 4, device=device), "amax")
    with pytest.raises(IndexError):
        x.index_reduce_(2, torch.empty(0, dtype=torch.int64, device=device), torch.empty(3, 0, device=device),
                        "amax")


SAME_WIDTH = [torch.int8, torch.int16, torch.float64, torch.complex64, torch.complex128]


@pytest.mark.parametrize("dtype", SAME_WIDTH)
def test_masked_select_moves_bits_natively(device, dtype, fallbacks):
    cases = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1), (2, 5)), ((0, 4), (4,)), ((), ())]
    for (shape, mask_shape), seed in zip(cases, itertools.count()):
        x = _values(shape, dtype, seed)
        mask = torch.rand(mask_shape, generator=torch.Generator().manual_seed(seed)) > 0.5
        expected = torch.masked_select(x, mask)
        actual = torch.masked_select(x.to(device), mask.to(device))
        assert actual.dtype == dtype and actual.shape == expected.shape
        assert torch.equal(actual.cpu(), expected)
    strided = _values((5, 6), dtype)[:, ::2]
    mask = torch.rand(5, 3, generator=torch.Generator().manual_seed(9)) > 0.5
    on_device = _values((5, 6), dtype).to(device)[:, ::2]
    on_device.copy_(strided.to(device))
    assert torch.equal(torch.masked_select(on_device, mask.to(device)).cpu(), torch.masked_select(strided, mask))
    assert fallbacks() == {}


def test_masked_select_byte_mask_warns_once_as_indexing(device):
    """PyTorch's test_masked_select expects one warning, indexing's, from a non-CPU device."""
    x = _values((6,), torch.float64)
    mask = torch.tensor([0, 1, 1, 0, 0, 1], dtype=torch.uint8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        actual = torch.masked_select(x.to(device), mask.to(device))
    assert [str(w.message)[:53] for w in caught] == ["indexing with dtype torch.uint8 is now deprecated, pl"]
    assert torch.equal(actual.cpu(), x[mask.bool()])


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool])
def test_index_fill_refuses_a_complex_value_as_the_cpu(device, dtype):
    index = torch.tensor([0])
    with pytest.raises(RuntimeError) as cpu_error:
        torch.zeros(2, 2, dtype=dtype).index_fill_(1, index, 1 + 1j)
    with pytest.raises(RuntimeError) as device_error:
        torch.zeros(2, 2, dtype=dtype, device=device).index_fill_(1, index.to(device), 1 + 1j)
    assert str(device_error.value) == str(cpu_error.value)


def test_torch_manual_seed_seeds_the_device(device):
    """PyTorch's test_randn/test_rand reseed with torch.manual_seed and expect the same numbers
    (1.13's torch.manual_seed seeds CUDA; mimic's devices are seeded with it as well)."""
    torch.manual_seed(123456)
    first = torch.randn(10, 10, device=device)
    torch.randn(3, device=device)
    torch.manual_seed(123456)
    again = torch.empty(0, device=device)
    torch.randn(10, 10, out=again)
    assert torch.equal(first.cpu(), again.cpu())
    torch.manual_seed(654321)
    assert not torch.equal(torch.randn(10, 10, device=device).cpu(), first.cpu())


def _error_or_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fn()
        except RuntimeError as error:
            return str(error), []
    return None, [str(w.message).split(" (Triggered internally")[0] for w in caught]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                                   torch.uint8, torch.bool, torch.complex64])
def test_random_bounds_checked_as_the_cpu(device, dtype):
    """random_(from, to): from and to - 1 must fit the dtype, floats warn past their
    significand (PyTorch's check_from_to_in_range), with the CPU's messages."""
    ranges = [(-2 ** 63, 0), (-42, 2 ** 62), (0, 300), (250, 257), (-1, 1), (2, 1), (0, 2 ** 25 + 1),
              (-(2 ** 12), 3)]
    for low, high in ranges:
        expected = _error_or_warnings(lambda: torch.empty(4, dtype=dtype).random_(low, high))
        actual = _error_or_warnings(lambda: torch.empty(4, dtype=dtype, device=device).random_(low, high))
        assert [w for w in actual[1] if not w.startswith("mimic:")] == expected[1], (low, high)
        assert actual[0] == expected[0], (low, high)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_uniform_refuses_a_range_past_the_dtype(device, dtype):
    big = float(torch.finfo(dtype).max)
    with pytest.raises(RuntimeError) as cpu_error:
        torch.empty(3, dtype=dtype).uniform_(-big, big)
    with pytest.raises(RuntimeError) as device_error:
        torch.empty(3, dtype=dtype, device=device).uniform_(-big, big)
    assert str(device_error.value) == str(cpu_error.value)


def test_is_set_to_compares_storage_and_geometry(device, fallbacks):
    """PyTorch's test_is_set_to: through the CPU fallback the copies never shared a storage."""
    t1 = torch.empty(3, 4, 9, 10, device=device)
    t3 = torch.tensor([], device=device).set_(t1)
    assert t1.is_set_to(t3) and t3.is_set_to(t1)
    assert not t1.is_set_to(torch.empty(3, 4, 9, 10, device=device))
    assert not t1.is_set_to(t3.clone())
    assert not t1.is_set_to(t1.view(3, 4, 90))  # same storage, other sizes
    assert not t1.is_set_to(t1[1:])  # other offset
    assert not t1.is_set_to(t1.transpose(0, 1))  # other strides
    assert not torch.tensor([], device=device).is_set_to(torch.tensor([], device=device))
    assert fallbacks() == {}


def _resize_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message)[:60] for w in caught if "was resized" in str(w.message)]


OUT_OPS = {
    "angle": lambda x, out: torch.angle(x, out=out),
    "atan2": lambda x, out: torch.atan2(x, x, out=out),
    "cumsum": lambda x, out: torch.cumsum(x, 0, out=out),
    "sort": lambda x, out: torch.sort(x, out=(out, torch.empty(out.shape, dtype=torch.int64, device=out.device))),
    "searchsorted": lambda x, out: torch.searchsorted(x.sort()[0], x, out=out.long()),
    "scatter_reduce": lambda x, out: torch.scatter_reduce(x, 0, torch.zeros(3, dtype=torch.int64, device=x.device),
                                                          x[:3], "amax", out=out),
}


@pytest.mark.parametrize("name", sorted(OUT_OPS))
def test_out_resize_warns_as_the_cpu(device, name):
    """PyTorch's test_out_warning: resizing an out= tensor that holds elements warns."""
    x = _values((4,), torch.float32)
    op = OUT_OPS[name]
    expected = _resize_warnings(lambda: op(x, torch.empty(7)))
    assert expected, "the CPU warns"
    assert _resize_warnings(lambda: op(x.to(device), torch.empty(7, device=device))) == expected  # one per output
    assert _resize_warnings(lambda: op(x.to(device), torch.empty(0, device=device))) == []


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int32, torch.int64, torch.float32])
def test_amin_of_unsigned_and_integer_values(device, dtype):
    """scatter_reduce/index_reduce amin sort by -value: uint8's own negation wraps (0 sorted
    before 3), which PyTorch's test_index_reduce found."""
    for seed in range(4):
        g = torch.Generator().manual_seed(seed)
        x = torch.randint(0, 5, (6, 5), generator=g).to(dtype)
        src = torch.randint(0, 5, (8, 5), generator=g).to(dtype)
        index = torch.randint(0, 6, (8, 5), generator=g)
        for include_self in (True, False):
            expected = x.scatter_reduce(0, index, src, "amin", include_self=include_self)
            actual = x.to(device).scatter_reduce(0, index.to(device), src.to(device), "amin", include_self=include_self)
            assert torch.equal(actual.cpu(), expected)
            rows = index[:, 0]
            expected = x.clone().index_reduce_(0, rows, src, "amin", include_self=include_self)
            actual = x.to(device).index_reduce_(0, rows.to(device), src.to(device), "amin", include_self=include_self)
            assert torch.equal(actual.cpu(), expected)


@pytest.mark.parametrize("op", [torch.linspace, torch.logspace])
def test_linspace_logspace_refuse_an_overlapping_out(device, op):
    """PyTorch's test_linlogspace_mem_overlap: an out= whose elements share memory is refused."""
    with pytest.raises(RuntimeError) as cpu_error:
        op(1, 10, 10, out=torch.rand(1).expand(10))
    with pytest.raises(RuntimeError) as device_error:
        op(1, 10, 10, out=torch.rand(1, device=device).expand(10))
    assert str(device_error.value) == str(cpu_error.value)
    out = torch.empty(20, device=device)[::2]  # strided, but no element shared
    assert torch.equal(op(1, 10, 10, out=out).cpu(), op(1, 10, 10))


def test_arange_into_a_strided_out_of_as_many_elements(device):
    """PyTorch's arange_out resizes only an out= of another element count (test_arange)."""
    expected = torch.zeros(2, 3)
    torch.arange(0, 4, out=expected.narrow(1, 1, 2))
    actual = torch.zeros(2, 3, device=device)
    torch.arange(0, 4, out=actual.narrow(1, 1, 2))
    assert torch.equal(actual.cpu(), expected)
    cpu_warnings = _warnings_of(lambda: torch.arange(3, out=torch.ones(7)))
    out = torch.ones(7, device=device)
    assert _warnings_of(lambda: torch.arange(3, out=out)) == cpu_warnings and cpu_warnings  # arange's own
    assert torch.equal(out.cpu(), torch.arange(3.0))
    with pytest.raises(RuntimeError, match="unsupported operation"):
        torch.arange(10, out=torch.empty(1, device=device).expand(10))


def _warnings_of(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_takes_byte_targets_as_the_cpu(device, reduction, fallbacks):
    """PyTorch's CPU nll_loss takes Long or Byte targets (test_nll_loss_byte_target_matches_long);
    log_softmax and the loss are within a few float32 roundings of the CPU's."""
    x = _values((10, 4), torch.float32)
    target = torch.randint(0, 4, (10,), generator=torch.Generator().manual_seed(3)).to(torch.uint8)
    expected_input, input_ = x.clone().requires_grad_(), x.to(device).requires_grad_()
    expected = torch.nn.functional.nll_loss(torch.log_softmax(expected_input, -1), target, reduction=reduction)
    actual = torch.nn.functional.nll_loss(torch.log_softmax(input_, -1), target.to(device), reduction=reduction)
    expected.sum().backward()
    actual.sum().backward()
    torch.testing.assert_close(actual.cpu(), expected, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(input_.grad.cpu(), expected_input.grad, atol=1e-5, rtol=1e-5)
    assert fallbacks() == {}


def test_nll_loss_names_the_target_dtype_as_the_cpu(device):
    x, target = _values((4, 3), torch.float32), torch.tensor([0, 1, 2, 1], dtype=torch.int32)
    with pytest.raises(RuntimeError) as cpu_error:
        torch.nn.functional.nll_loss(x, target)
    with pytest.raises(RuntimeError) as device_error:
        torch.nn.functional.nll_loss(x.to(device), target.to(device))
    assert str(device_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("bounds", [(-5, float("nan")), (0, float("-inf"), -1), (float("inf"),), (float("nan"), 10),
                                    (1.175494351e-38, 3.402823466e+38)])
def test_arange_refuses_unsupported_ranges_as_the_cpu(device, bounds):
    with pytest.raises(RuntimeError) as cpu_error:
        torch.arange(*bounds)
    with pytest.raises(RuntimeError) as device_error:
        torch.arange(*bounds, device=device)
    assert str(device_error.value) == str(cpu_error.value)


@pytest.mark.parametrize("bounds", [(0, 100 * 1449629115440469, 1449629115440469), (10, 0, -3), (-4.0, 4.0, 0.01),
                                    (0.6, 0.89, 0.1)])
def test_arange_length_as_the_cpu(device, bounds):
    """int64 lengths by exact integer division (a double quotient rounds 100 up to 101 here)."""
    assert torch.arange(*bounds, device=device).shape == torch.arange(*bounds).shape
