"""histogram and histogramdd on the device (torch_mimic/ops_histogram.py) against the CPU: given
edges (sorted and unsorted, as the OpInfo samples pass them), weights, density, empty, 0-dim,
non-contiguous and long inputs, and the fallback of what the device leaves to the CPU.

Unweighted counts and the edges are exact. A weighted bin adds up to n weights in float32 in an
order that may differ from the CPU's: it is then off by at most n units of float32 roundoff of
the sum of their magnitudes; density adds two divisions per dimension (a few units more)."""
import pytest
import torch

U32 = 2.0 ** -24
# With a bin count the device rebuilds the CPU's own edges, whose rounding is that of PyTorch's
# AVX2 kernels (the default on x86-64 with AVX2, AVX-512 hosts included); another CPU path
# rounds them otherwise.
CPU_EDGES = pytest.mark.skipif(
    "CPU capability usage: AVX2" not in torch.__config__.show(),
    reason="the bin-count edges follow the CPU's AVX2 kernel, and this CPU runs another path")


def _values(shape, seed, low=-9.0, high=9.0):
    g = torch.Generator().manual_seed(seed)
    return torch.rand(shape, generator=g, dtype=torch.float64).mul(high - low).add(low).float()


def _bound(x, weight, n_dims):
    if weight is None:
        return 0.0
    n = max(weight.numel(), 1)
    return (n + 4 * n_dims + 4) * U32 * float(weight.abs().sum()) + 0.0


def _close(actual, expected, bound, density):
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if density:
        # Normalised bins: relative to the total, then divided by widths.
        torch.testing.assert_close(actual.cpu(), expected, rtol=64 * U32 * max(expected.numel(), 1) + bound,
                                   atol=0, equal_nan=True)
    else:
        torch.testing.assert_close(actual.cpu(), expected, rtol=0, atol=bound, equal_nan=True)


SHAPES = [(), (0,), (7,), (5, 5), (5, 0, 5), (3, 1, 4), (2, 3000)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("sorted_edges", [False, True])
def test_histogram_bins_tensor(device, fallbacks, shape, weighted, density, sorted_edges):
    x = _values(shape, 1)
    edges = _values((5,), 2, -6.0, 6.0)
    if sorted_edges:
        edges = edges.sort().values
    weight = _values(shape, 3) if weighted else None
    hist, bin_edges = torch.histogram(x, edges, weight=weight, density=density)
    dev_weight = None if weight is None else weight.to(device)
    d_hist, d_edges = torch.histogram(x.to(device), edges.to(device), weight=dev_weight, density=density)
    assert fallbacks() == {}
    assert torch.equal(d_edges.cpu(), bin_edges)
    _close(d_hist, hist, _bound(x, weight, 1), density)


def test_histogram_edges_and_nan(device, fallbacks):
    # Values on the edges (the last one closes the last bin), outside them, infinite, and NaN,
    # which this PyTorch's CPU kernel counts in the last bin.
    x = torch.tensor([0.0, 1.0, 2.0, 3.0, -1.0, 4.0, float("nan"), float("inf"), 2.5, 1.0])
    edges = torch.tensor([0.0, 1.0, 2.0, 3.0])
    hist, _ = torch.histogram(x, edges)
    d_hist, _ = torch.histogram(x.to(device), edges.to(device))
    assert fallbacks() == {}
    assert torch.equal(d_hist.cpu(), hist)


def test_histogram_non_contiguous(device, fallbacks):
    x = _values((6, 8), 4)
    weight = _values((8, 6), 5)
    edges = torch.tensor([-5.0, -1.0, 0.5, 7.0])
    hist, _ = torch.histogram(x.t(), edges, weight=weight)
    d_hist, _ = torch.histogram(x.to(device).t(), edges.to(device), weight=weight.to(device))
    assert fallbacks() == {}
    _close(d_hist, hist, _bound(x, weight, 1), False)


@pytest.mark.parametrize("shape", [(5, 3), (4, 0, 2), (3, 1, 2), (700, 2)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("density", [False, True])
def test_histogramdd_bin_tensors(device, fallbacks, shape, weighted, density):
    x = _values(shape, 6)
    edges = [_values((k,), 7 + k, -8.0, 8.0) for k in (3, 4, 2)][: shape[-1]]
    weight = _values(shape[:-1], 8) if weighted else None
    expected = torch.histogramdd(x, edges, weight=weight, density=density)
    dev_weight = None if weight is None else weight.to(device)
    actual = torch.histogramdd(x.to(device), [e.to(device) for e in edges], weight=dev_weight, density=density)
    assert fallbacks().keys() <= {"aten::_histogramdd_bin_edges", "aten::_histogramdd_from_bin_cts"}
    _close(actual.hist, expected.hist, _bound(x, weight, shape[-1]), density)
    for a, e in zip(actual.bin_edges, expected.bin_edges):
        assert torch.equal(a.cpu(), e)


def test_single_edge_is_empty(device, fallbacks):
    x = _values((4, 2), 9)
    edges = [torch.tensor([0.0]), torch.tensor([-1.0, 1.0])]
    actual = torch.histogramdd(x.to(device), [e.to(device) for e in edges])
    assert actual.hist.shape == (0, 1)


def test_float64_falls_back(device, fallbacks):
    x = _values((9,), 10).double()
    edges = torch.tensor([-3.0, 0.0, 3.0], dtype=torch.float64)
    hist, _ = torch.histogram(x, edges)
    d_hist, _ = torch.histogram(x.to(device), edges.to(device))
    assert fallbacks() == {"aten::histogram.bins_tensor": 1}
    assert torch.equal(d_hist.cpu(), hist)


def test_errors_as_the_cpu(device):
    x = _values((4,), 11)
    edges = torch.tensor([0.0, 1.0], dtype=torch.float64)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histogram(x, edges)
    with pytest.raises(RuntimeError, match="same dtype"):
        torch.histogram(x.to(device), edges.to(device))
    weight = _values((3,), 12)
    with pytest.raises(RuntimeError, match="same shape"):
        torch.histogram(x.to(device), edges.float().to(device), weight=weight.to(device))


RANGES = [None, (-3.0, 4.0), (0.1, 0.1), (-1e5, 2e5), (2.5, 2.5000002)]


@CPU_EDGES
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("bounds", RANGES)
@pytest.mark.parametrize("bins", [1, 3, 10, 37, 300])
def test_histogram_bin_ct(device, fallbacks, shape, bounds, bins):
    x = _values(shape, 13)
    weight = _values(shape, 14)
    for w, density in ((None, False), (weight, True)):
        hist, edges = torch.histogram(x, bins, range=bounds, weight=w, density=density)
        dev_weight = None if w is None else w.to(device)
        d_hist, d_edges = torch.histogram(x.to(device), bins, range=bounds, weight=dev_weight, density=density)
        assert fallbacks() == {}
        assert torch.equal(d_edges.cpu(), edges)
        _close(d_hist, hist, _bound(x, w, 1), density)


@CPU_EDGES
def test_linspace_edges_exact(device, fallbacks):
    # The edges of many ranges and counts, with the CPU's vector loop covering some of them.
    g = torch.Generator().manual_seed(15)
    for _ in range(60):
        low = float(torch.rand((), generator=g, dtype=torch.float64) * 20 - 10)
        width = float(torch.rand((), generator=g, dtype=torch.float64)) * 10.0 ** int(torch.randint(-3, 6, (), generator=g))
        bins = int(torch.randint(1, 700, (), generator=g))
        x = torch.tensor([low], device=device)
        _, edges = torch.histogram(x, bins, range=(low, low + width))
        assert torch.equal(edges.cpu(), torch.linspace(low, low + width, bins + 1))
    assert fallbacks() == {}


@CPU_EDGES
def test_bin_ct_edge_values_and_nan(device, fallbacks):
    # The edges themselves (each in the bin it opens, the last in the last bin), values one ulp
    # either side, outside the range, infinite, and NaN (in the second bin on this CPU).
    edges = torch.linspace(-1.3, 2.9, 8)
    x = torch.cat([edges, edges.nextafter(torch.tensor(-10.0)), edges.nextafter(torch.tensor(10.0)),
                   torch.tensor([-5.0, 5.0, float("inf"), -float("inf"), float("nan")])])
    hist, _ = torch.histogram(x, 7, range=(-1.3, 2.9))
    d_hist, _ = torch.histogram(x.to(device), 7, range=(-1.3, 2.9))
    assert fallbacks() == {}
    assert torch.equal(d_hist.cpu(), hist)


@CPU_EDGES
@pytest.mark.parametrize("shape", [(5, 3), (4, 0, 2), (3, 1, 2), (700, 2)])
@pytest.mark.parametrize("bounds", [None, (-2.0, 3.0, 0.5, 0.5, -9.0, 9.0)])
@pytest.mark.parametrize("weighted", [False, True])
def test_histogramdd_bin_cts(device, fallbacks, shape, bounds, weighted):
    x = _values(shape, 16)
    counts = [3, 1, 5][: shape[-1]]
    bounds = None if bounds is None else list(bounds[: 2 * shape[-1]])
    weight = _values(shape[:-1], 17) if weighted else None
    dev_weight = None if weight is None else weight.to(device)
    for density in (False, True):
        expected = torch.histogramdd(x, counts, range=bounds, weight=weight, density=density)
        actual = torch.histogramdd(x.to(device), counts, range=bounds, weight=dev_weight, density=density)
        assert fallbacks() == {}
        _close(actual.hist, expected.hist, _bound(x, weight, shape[-1]), density)
        for a, e in zip(actual.bin_edges, expected.bin_edges):
            assert torch.equal(a.cpu(), e)


@pytest.mark.parametrize("kwargs, message", [
    (dict(bins=0), "bins must be > 0"),
    (dict(bins=3, range=(1.0, 0.0)), "min should not exceed max"),
    (dict(bins=3, range=(0.0, float("inf"))), "is not finite"),
])
def test_bin_ct_errors_as_the_cpu(device, kwargs, message):
    x = _values((6,), 18)
    with pytest.raises(RuntimeError, match=message):
        torch.histogram(x, **kwargs)
    with pytest.raises(RuntimeError, match=message):
        torch.histogram(x.to(device), **kwargs)


def test_data_range_of_nan_is_an_error(device):
    x = torch.tensor([1.0, float("nan")])
    with pytest.raises(RuntimeError, match="is not finite"):
        torch.histogram(x, 3)
    with pytest.raises(RuntimeError, match="is not finite"):
        torch.histogram(x.to(device), 3)


@CPU_EDGES
def test_bin_ct_nan_per_dimension(device, fallbacks):
    # NaN one stride into the histogram in its dimension (with one bin: into the next bin of
    # the dimension before). Past the histogram's end the CPU writes outside its buffer: not
    # compared.
    rows = torch.tensor([[float("nan"), 0.2], [0.3, float("nan")], [0.1, 0.1], [float("nan"), float("nan")]])
    for counts, x in (([3, 2], rows), ([2, 1], rows[:3])):
        expected = torch.histogramdd(x, counts, range=[0.0, 1.0, 0.0, 1.0])
        actual = torch.histogramdd(x.to(device), counts, range=[0.0, 1.0, 0.0, 1.0])
        assert torch.equal(actual.hist.cpu(), expected.hist)
    assert fallbacks() == {}
