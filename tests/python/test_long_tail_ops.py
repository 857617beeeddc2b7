"""The long tail of nn and misc ops as device compositions, against PyTorch's CPU: 3-D max
pooling, max unpooling, im2col/col2im (unfold/fold), cdist, linspace/logspace/eye, nansum, glu,
take/put_, adaptive max pooling, scatter_reduce/index_reduce (sum, mean), over dtypes, empty and
non-contiguous inputs, backward and out=, with no CPU fallback on the native paths, and errors
as the CPU gives them.

Tolerances: ops that only move values (pooling maxima and indices, unpooling, im2col, take, put,
eye) and col2im (the CPU's order of float adds) must match exactly. Sums of n float32 terms
accumulated in another order differ by at most n * 2^-24 times the sum of the terms' magnitudes."""
import math

import pytest
import torch
import torch.nn.functional as F

# PyTorch's own kernels warn that scatter_reduce and index_reduce are in beta.
pytestmark = pytest.mark.filterwarnings("ignore:.*is in beta:UserWarning")

aten = torch.ops.aten
EPS32 = 2.0 ** -24
# grid_sample's coordinates pass through about 8 float32 operations (unnormalise, clip or
# reflect, floor, weights), each a rounding relative to the grid's range (at most 8).
GRID_RTOL = 8 * 8 * EPS32 * 8


def _to(x, device):
    return x.to(device) if isinstance(x, torch.Tensor) else x


def _run(fn, args, device, grad=False):
    """fn on CPU and device copies of args; with ``grad`` the gradients of the floating inputs
    after a backward pass with the same output gradient."""
    results = []
    for where in ("cpu", device):
        leaves = [_to(a, where).detach().requires_grad_(grad and a.is_floating_point())
                  if isinstance(a, torch.Tensor) else a for a in args]
        out = fn(*leaves)
        outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
        grads = ()
        if grad:
            first = outs[0]
            torch.manual_seed(0)
            weight = torch.randn(first.shape, dtype=first.dtype).to(where)
            first.backward(weight)
            grads = tuple(leaf.grad for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad)
        results.append((outs, grads))
    return results


def _assert_same(actual, expected, rtol=0.0, atol=0.0):
    assert actual.device.type != "cpu"
    assert actual.dtype == expected.dtype
    torch.testing.assert_close(actual.cpu(), expected, rtol=rtol, atol=atol, equal_nan=True)


def _sum_atol(terms, magnitude):
    """The bound on reordering a float32 sum of ``terms`` terms of at most ``magnitude`` each."""
    return terms * EPS32 * terms * magnitude


def _assert_errors_match(fn, args, device):
    with pytest.raises(Exception) as on_cpu:
        fn(*[_to(a, "cpu") for a in args])
    with pytest.raises(Exception) as on_device:
        fn(*[_to(a, device) for a in args])
    assert type(on_device.value) is type(on_cpu.value)
    assert str(on_device.value).split("\n")[0] == str(on_cpu.value).split("\n")[0]


def _no_fallbacks(fallbacks):
    assert fallbacks() == {}


# --- max_pool3d ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 5, 6, 7), dict(kernel_size=2)),
    ((2, 3, 5, 6, 7), dict(kernel_size=3, stride=(2, 1, 2), padding=1, dilation=(1, 2, 1))),
    ((1, 2, 6, 5, 5), dict(kernel_size=(3, 2, 3), stride=2, padding=(1, 1, 0), ceil_mode=True)),
    ((3, 4, 4, 4), dict(kernel_size=2, stride=1)),
    ((0, 2, 4, 4, 4), dict(kernel_size=2)),
])
def test_max_pool3d(shape, kwargs, device, fallbacks):
    x = torch.randn(shape)
    (cpu, cpu_grads), (dev, dev_grads) = _run(lambda t: F.max_pool3d(t, return_indices=True, **kwargs), [x], device,
                                              grad=True)
    for actual, expected in zip(dev, cpu):
        _assert_same(actual, expected)
    kernel = kwargs["kernel_size"]
    window = math.prod(kernel) if isinstance(kernel, tuple) else kernel ** 3
    _assert_same(dev_grads[0], cpu_grads[0], atol=_sum_atol(window, 5.0))
    _no_fallbacks(fallbacks)


def test_max_pool3d_non_contiguous_and_all_minus_inf(device, fallbacks):
    x = torch.randn(2, 3, 6, 5, 4).transpose(2, 4)
    x[0, 0] = float("-inf")
    for source in (x, x.contiguous(memory_format=torch.channels_last_3d)):
        (cpu, _), (dev, _) = _run(lambda t: F.max_pool3d(t, 3, 2, 1, return_indices=True), [source], device)
        for actual, expected in zip(dev, cpu):
            _assert_same(actual, expected)
    _no_fallbacks(fallbacks)


def test_max_pool3d_dtypes(device, fallbacks):
    x = torch.randn(1, 2, 4, 4, 4)
    (cpu, _), (dev, _) = _run(lambda t: F.max_pool3d(t, 2), [x.double()], device)
    _assert_same(dev[0], cpu[0])
    assert fallbacks() == {"aten::max_pool3d_with_indices": 1}
    _assert_errors_match(lambda t: F.max_pool3d(t, 2), [x.half()], device)


@pytest.mark.parametrize("shape, kwargs", [
    ((0, 1, 49, 50), dict(kernel_size=2, stride=50, padding=-1)),
    ((0, 1, 49, 50), dict(kernel_size=(3, 2, 2), stride=50, padding=4)),
    ((0, 1, 2, 10), dict(kernel_size=1)),
    ((2, 3), dict(kernel_size=1)),
    ((1, 1, 1, 2, 2), dict(kernel_size=3, stride=1)),
    ((1, 2, 3, 3), dict(kernel_size=2, dilation=0)),
    ((1, 2, 3, 3, 3), dict(kernel_size=(2, 2))),
])
def test_max_pool3d_errors(shape, kwargs, device):
    _assert_errors_match(lambda t: aten.max_pool3d_with_indices(t, **kwargs), [torch.randn(shape)], device)


# --- max_unpool ----------------------------------------------------------------------------


@pytest.mark.parametrize("dims", [1, 2, 3])
def test_max_unpool(dims, device, fallbacks):
    pool = (F.max_pool1d, F.max_pool2d, F.max_pool3d)[dims - 1]
    unpool = (F.max_unpool1d, F.max_unpool2d, F.max_unpool3d)[dims - 1]
    x = torch.randn(2, 3, *(6,) * dims)
    values, indices = pool(x, 3, 2, 1, return_indices=True)
    (cpu, cpu_grads), (dev, dev_grads) = _run(lambda v, i: unpool(v, i, 3, 2, 1, output_size=x.shape),
                                              [values, indices], device, grad=True)
    _assert_same(dev[0], cpu[0])
    _assert_same(dev_grads[0], cpu_grads[0])
    _no_fallbacks(fallbacks)


def test_max_unpool_empty_batch_and_non_contiguous(device, fallbacks):
    values = torch.randn(3, 2, 4, 4).transpose(2, 3)
    indices = torch.randint(0, 64, (3, 2, 4, 4)).transpose(2, 3)
    (cpu, _), (dev, _) = _run(lambda v, i: aten.max_unpool2d(v, i, [8, 8]), [values, indices], device)
    _assert_same(dev[0], cpu[0])
    empty = torch.zeros(0, 2, 4, 4)
    (cpu, _), (dev, _) = _run(lambda v, i: aten.max_unpool2d(v, i, [8, 8]), [empty, empty.long()], device)
    _assert_same(dev[0], cpu[0])
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("fn, args", [
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2), torch.zeros(1, 2, 2, 2), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2), torch.zeros(1, 2, 2, 2, dtype=torch.long), [4])),
    (aten.max_unpool2d, (torch.randn(2, 2), torch.zeros(2, 2, dtype=torch.long), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2), torch.zeros(2, 2, 2, dtype=torch.long), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 0, 2, 2), torch.zeros(1, 0, 2, 2, dtype=torch.long), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2), torch.full((1, 2, 2, 2), 16), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2), torch.full((1, 2, 2, 2), -1), [4, 4])),
    (aten.max_unpool2d, (torch.randn(1, 2, 2, 2, dtype=torch.bfloat16), torch.zeros(1, 2, 2, 2, dtype=torch.long),
                         [4, 4])),
    (aten.max_unpool3d, (torch.randn(1, 1, 2, 2, 2), torch.full((1, 1, 2, 2, 2), 64), [4, 4, 4], [1, 1, 1],
                         [0, 0, 0])),
    (aten.max_unpool3d, (torch.randn(1, 1, 2, 2, 2), torch.zeros(1, 1, 2, 2, 2, dtype=torch.long), [4, 4, 4],
                         [0, 1, 1], [0, 0, 0])),
    (aten.max_unpool3d, (torch.randn(1, 1, 2, 2, 2), torch.zeros(1, 1, 2, 2, 2, dtype=torch.long), [4, 4, 4],
                         [1, 1], [0, 0, 0])),
    (aten.max_unpool3d, (torch.randn(2, 2), torch.zeros(2, 2, dtype=torch.long), [4, 4, 4], [1, 1, 1], [0, 0, 0])),
])
def test_max_unpool_errors(fn, args, device):
    _assert_errors_match(fn, args, device)


# --- im2col / col2im -----------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16])
@pytest.mark.parametrize("shape, kwargs", [
    ((2, 3, 6, 7), dict(kernel_size=2)),
    ((2, 3, 6, 7), dict(kernel_size=(3, 2), dilation=(1, 2), padding=1, stride=(2, 1))),
    ((3, 5, 5), dict(kernel_size=3, padding=2, stride=2)),
    ((0, 2, 4, 4), dict(kernel_size=2)),
])
def test_unfold_and_fold(shape, kwargs, dtype, device, fallbacks):
    x = torch.randn(shape).to(dtype)
    (cpu, cpu_grads), (dev, dev_grads) = _run(lambda t: F.unfold(t, **kwargs), [x], device, grad=True)
    _assert_same(dev[0], cpu[0])
    _assert_same(dev_grads[0], cpu_grads[0])
    columns = cpu[0].detach()
    (cpu, _), (dev, _) = _run(lambda c: F.fold(c, shape[-2:], **kwargs), [columns.transpose(-1, -2).contiguous()
                                                                          .transpose(-1, -2)], device)
    _assert_same(dev[0], cpu[0])
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("fn, args", [
    (aten.im2col, (torch.randn(1, 2, 4, 4), [2], [1, 1], [0, 0], [1, 1])),
    (aten.im2col, (torch.randn(2, 4), [2, 2], [1, 1], [0, 0], [1, 1])),
    (aten.im2col, (torch.randn(1, 2, 4, 4), [0, 2], [1, 1], [0, 0], [1, 1])),
    (aten.im2col, (torch.randn(1, 2, 4, 4), [2, 2], [1, 1], [-1, 0], [1, 1])),
    (aten.im2col, (torch.randn(1, 2, 4, 4), [5, 5], [1, 1], [0, 0], [1, 1])),
    (aten.im2col, (torch.randn(1, 0, 4, 4), [2, 2], [1, 1], [0, 0], [1, 1])),
    (aten.im2col, (torch.ones(1, 2, 4, 4, dtype=torch.long), [2, 2], [1, 1], [0, 0], [1, 1])),
    (aten.col2im, (torch.randn(1, 7, 9), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])),
    (aten.col2im, (torch.randn(1, 8, 8), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])),
    (aten.col2im, (torch.randn(1, 8, 9), [4, 4], [2, 2], [1, 1], [0, 0], [0, 1])),
    (aten.col2im, (torch.randn(1, 8, 0), [4, 4], [2, 2], [1, 1], [0, 0], [1, 1])),
])
def test_fold_errors(fn, args, device):
    _assert_errors_match(fn, args, device)


# --- cdist ---------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 0.5, 1.5, 3.0, float("inf")])
@pytest.mark.parametrize("shapes", [((4, 5), (3, 5)), ((2, 1, 4, 6), (3, 5, 6)), ((3, 0), (2, 0)), ((0, 4), (3, 4))])
def test_cdist(p, shapes, device, fallbacks):
    torch.manual_seed(0)
    x1, x2 = (torch.randn(shape) for shape in shapes)
    (cpu, cpu_grads), (dev, dev_grads) = _run(lambda a, b: torch.cdist(a, b, p, "donot_use_mm_for_euclid_dist"),
                                              [x1, x2], device, grad=p != 0.0)
    columns = shapes[0][-1]
    # |x| < 6 for these seeds; each distance sums `columns` terms of at most 12^max(p, 1).
    _assert_same(dev[0], cpu[0], rtol=4 * columns * EPS32 * 8, atol=columns * EPS32 * 8)
    # The gradient divides by the distance raised to p - 1, which doubles the relative error
    # per operation it takes: a few dozen roundings of the distance's bound.
    for actual, expected in zip(dev_grads, cpu_grads):
        _assert_same(actual, expected, rtol=64 * columns * EPS32 * 8,
                     atol=_sum_atol(max(shapes[1][-2], 1), 12.0))
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("args", [
    (torch.ones(3), torch.ones(2, 3), 2.0, None),
    (torch.ones(2, 3), torch.ones(2, 4), 2.0, None),
    (torch.ones(2, 3), torch.ones(2, 3), -1.0, None),
    (torch.ones(2, 3), torch.ones(2, 3), 1.0, 3),
    (torch.ones(2, 3, dtype=torch.long), torch.ones(2, 3, dtype=torch.long), 1.0, None),
    (torch.ones(2, 3, dtype=torch.half), torch.ones(2, 3, dtype=torch.half), 1.0, None),
])
def test_cdist_errors(args, device):
    _assert_errors_match(aten._cdist_forward, args, device)


# --- linspace, logspace, eye ---------------------------------------------------------------


@pytest.mark.parametrize("start, end, steps", [(0, 7, 50), (-2.0, 4.3, 1), (50, -3, 50), (4.3, 1, 0), (1, 3, 1000)])
def test_linspace(start, end, steps, device, fallbacks):
    expected = torch.linspace(start, end, steps)
    actual = torch.linspace(start, end, steps, device=device)
    # The CPU's vector loop adds i * step to each vector's first element: an ulp of the largest
    # magnitude per add.
    tolerance = dict(rtol=0, atol=4 * EPS32 * max(abs(start), abs(end), 1) * 2)
    _assert_same(actual, expected, **tolerance)
    out = torch.empty(2 * steps, device=device)[::2]
    torch.linspace(start, end, steps, out=out)
    _assert_same(out, expected, **tolerance)
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("base", [10.0, 2.0, 1.1, 5.0])
def test_logspace(base, device, fallbacks):
    for start, end, steps in [(-2.0, 4.3, 4), (0, 1.2, 2), (4.3, -3, 50), (1, 3, 1)]:
        expected = torch.logspace(start, end, steps, base)
        actual = torch.logspace(start, end, steps, base, device=device)
        # float32 exponents (|e| <= 4.3, error 2 ulps) through pow: relative 4.3 ln(base) 2^-22.
        _assert_same(actual, expected, rtol=8 * 4.3 * math.log(base) * EPS32 + 4 * EPS32, atol=0)
        bf16 = torch.logspace(start, end, steps, base, dtype=torch.bfloat16, device=device)
        _assert_same(bf16, torch.logspace(start, end, steps, base, dtype=torch.bfloat16), rtol=2 ** -8, atol=0)
    _no_fallbacks(fallbacks)


def test_linspace_fallbacks_and_errors(device, fallbacks):
    for dtype in (torch.int64, torch.float16, torch.float64):
        _assert_same(torch.linspace(0, 7, 50, dtype=dtype, device=device), torch.linspace(0, 7, 50, dtype=dtype))
    assert fallbacks() == {"aten::linspace.out": 3}
    _assert_errors_match(lambda d: torch.linspace(0, 3, -1, device=d.device), [torch.empty(0)], device)
    _assert_errors_match(lambda d: torch.logspace(0, 3, -1, device=d.device), [torch.empty(0)], device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64, torch.uint8, torch.bool])
def test_eye(dtype, device, fallbacks):
    for n, m in [(0, 0), (1, 3), (7, 4), (4, 7), (300, 301)]:
        _assert_same(torch.eye(n, m, dtype=dtype, device=device), torch.eye(n, m, dtype=dtype))
    out = torch.empty(1, dtype=dtype, device=device)
    torch.eye(5, out=out)
    _assert_same(out, torch.eye(5, dtype=dtype))
    _no_fallbacks(fallbacks)
    _assert_errors_match(lambda d: torch.eye(-1, device=d.device), [torch.empty(0)], device)
    _assert_errors_match(lambda d: torch.eye(2, -3, device=d.device), [torch.empty(0)], device)
    _assert_errors_match(lambda d: torch.eye(2, dtype=torch.bfloat16, device=d.device), [torch.empty(0)], device)


# --- nansum, glu, take, put_ ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int64])
def test_nansum(dtype, device, fallbacks):
    x = torch.randn(5, 6, 7).to(dtype)
    if dtype.is_floating_point:
        x[x > 1] = float("nan")
    x = x.transpose(0, 2)
    for dim, keepdim in [(None, False), (0, True), ((1, 2), False)]:
        expected = torch.nansum(x, dim, keepdim) if dim is not None else torch.nansum(x)
        actual = torch.nansum(x.to(device), dim, keepdim) if dim is not None else torch.nansum(x.to(device))
        _assert_same(actual, expected, rtol=1e-2 if dtype != torch.float32 else 0, atol=_sum_atol(210, 1.0) * 64)
    out = torch.empty(0, device=device)
    torch.nansum(x.float().to(device), 1, out=out)
    _assert_same(out, torch.nansum(x.float(), 1), atol=_sum_atol(6, 1.0) * 8)
    assert torch.nanmean(torch.tensor([1.0, float("nan"), 3.0], device=device)).item() == 2.0
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_glu(dtype, device, fallbacks):
    x = torch.randn(4, 6, 3).to(dtype)
    for dim in (0, 1, -3):
        (cpu, cpu_grads), (dev, dev_grads) = _run(lambda t: F.glu(t, dim), [x], device, grad=True)
        tolerance = dict(rtol=8 * EPS32, atol=8 * EPS32) if dtype == torch.float32 else dict(rtol=2 ** -7, atol=2 ** -8)
        _assert_same(dev[0], cpu[0], **tolerance)
        _assert_same(dev_grads[0], cpu_grads[0], **tolerance)
    _no_fallbacks(fallbacks)
    for bad in (torch.randn(()), torch.randn(3), torch.randn(4).half(), torch.ones(4, dtype=torch.long)):
        _assert_errors_match(aten.glu, [bad], device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.int64])
def test_take_and_put(dtype, device, fallbacks):
    x = torch.arange(24).to(dtype).view(4, 6).t()
    index = torch.tensor([[0, -1, 5], [23, -24, 7]])
    _assert_same(torch.take(x.to(device), index.to(device)), torch.take(x, index))
    source = torch.arange(6).to(dtype).view(2, 3) + 100
    for accumulate in (False, True):
        expected = x.clone().put_(index, source, accumulate)
        actual = x.to(device).put_(index.to(device), source.to(device), accumulate)
        _assert_same(actual, expected)
    _assert_same(torch.take(x.to(device), index[:0].to(device)), torch.take(x, index[:0]))
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("fn, args", [
    (aten.take, (torch.randn(2, 3), torch.tensor([6]))),
    (aten.take, (torch.randn(2, 3), torch.tensor([-7]))),
    (aten.take, (torch.randn(2, 3), torch.tensor([1], dtype=torch.int32))),
    (aten.take, (torch.randn(0), torch.tensor([0]))),
    (aten.put_, (torch.randn(2, 3), torch.tensor([6]), torch.tensor([1.0]))),
    (aten.put_, (torch.randn(2, 3), torch.tensor([1, 2]), torch.tensor([1.0]))),
    (aten.put_, (torch.randn(2, 3), torch.tensor([1]), torch.tensor([1.0], dtype=torch.float64))),
    (aten.put_, (torch.randn(0), torch.tensor([0]), torch.tensor([1.0]))),
])
def test_take_and_put_errors(fn, args, device):
    _assert_errors_match(fn, args, device)


# --- adaptive max pooling ------------------------------------------------------------------


@pytest.mark.parametrize("shape, output_size", [
    ((2, 3, 7, 9), (3, 4)), ((3, 5, 5), (5, 2)), ((1, 2, 4, 4), (1, 1)), ((0, 2, 4, 4), (2, 2)),
    ((2, 2, 5, 6, 7), (2, 3, 4)), ((2, 3, 3, 4), (2, 0, 2)),
])
def test_adaptive_max_pool(shape, output_size, device, fallbacks):
    pool = F.adaptive_max_pool2d if len(output_size) == 2 else F.adaptive_max_pool3d
    x = torch.randn(shape).transpose(-1, -2)
    (cpu, cpu_grads), (dev, dev_grads) = _run(lambda t: pool(t, output_size, return_indices=True), [x], device,
                                              grad=True)
    for actual, expected in zip(dev, cpu):
        _assert_same(actual, expected)
    _assert_same(dev_grads[0], cpu_grads[0], atol=_sum_atol(8, 5.0))
    _no_fallbacks(fallbacks)


def test_adaptive_max_pool_errors(device):
    for fn, args in [(aten.adaptive_max_pool2d, (torch.randn(1, 2, 3), [2])),
                     (aten.adaptive_max_pool2d, (torch.randn(2, 3), [2, 2])),
                     (aten.adaptive_max_pool2d, (torch.randn(1, 0, 3, 3), [2, 2])),
                     (aten.adaptive_max_pool2d, (torch.randn(1, 2, 3, 3).half(), [2, 2])),
                     (aten.adaptive_max_pool3d, (torch.randn(3, 3), [2, 2, 2]))]:
        _assert_errors_match(fn, args, device)


# --- scatter_reduce and index_reduce -------------------------------------------------------


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
@pytest.mark.parametrize("reduce", ["sum", "mean", "amax", "amin", "prod"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce(dtype, reduce, include_self, device, fallbacks):
    torch.manual_seed(0)
    self = (torch.randn(5, 4) * 8).to(dtype)
    src = (torch.randn(6, 5) * 8).to(dtype)
    index = torch.randint(0, 5, (6, 3))
    expected = self.scatter_reduce(0, index, src, reduce, include_self=include_self)
    actual = self.to(device).scatter_reduce(0, index.to(device), src.to(device), reduce, include_self=include_self)
    if reduce == "prod":
        self, src = self / 8, src / 8  # products of up to 7 factors stay near 1
    # bfloat16 sums and means round differently; products of 7 factors below 4 are exact to 7
    # roundings of float32 (bfloat16 products round as the CPU's, step by step).
    tolerance = dict(rtol=2 ** -7, atol=0.25) if dtype == torch.bfloat16 else dict(rtol=8 * EPS32,
                                                                                   atol=_sum_atol(7, 32.0))
    _assert_same(actual, expected, **tolerance)
    inplace = self.to(device)
    inplace.scatter_reduce_(1, index[:, :2].t().contiguous()[:, :4].clamp(max=3).to(device),
                            src.t().contiguous().to(device), reduce, include_self=include_self)
    _assert_same(inplace, self.clone().scatter_reduce_(1, index[:, :2].t().contiguous()[:, :4].clamp(max=3),
                                                      src.t().contiguous(), reduce, include_self=include_self),
                 **tolerance)
    _no_fallbacks(fallbacks)


def test_index_reduce_and_fallbacks(device, fallbacks):
    self, source = torch.randn(5, 3), torch.randn(4, 3)
    index = torch.tensor([0, 4, 0, 2])
    for include_self in (True, False):
        expected = self.index_reduce(0, index, source, "mean", include_self=include_self)
        actual = self.to(device).index_reduce(0, index.to(device), source.to(device), "mean", include_self=include_self)
        _assert_same(actual, expected, atol=_sum_atol(3, 4.0))
    _no_fallbacks(fallbacks)
    for reduce in ("amax", "amin", "prod"):
        for include_self in (True, False):
            expected = self.index_reduce(0, index, source, reduce, include_self=include_self)
            actual = self.to(device).index_reduce(0, index.to(device), source.to(device), reduce,
                                                  include_self=include_self)
            _assert_same(actual, expected, rtol=4 * EPS32, atol=0)
    with_nan = source.clone()
    with_nan[1, 1] = float("nan")
    for reduce in ("amax", "amin"):
        expected = self.scatter_reduce(0, index[:, None].expand(4, 3), with_nan, reduce)
        actual = self.to(device).scatter_reduce(0, index[:, None].expand(4, 3).to(device), with_nan.to(device), reduce)
        _assert_same(actual, expected)
    scalar = torch.tensor(2.0)
    _assert_same(scalar.to(device).scatter_reduce(0, torch.tensor(0, device=device), torch.tensor(5.0, device=device),
                                                  "amax"),
                 scalar.scatter_reduce(0, torch.tensor(0), torch.tensor(5.0), "amax"))
    _no_fallbacks(fallbacks)
    # Products of many values into few of many targets would need a table far larger than the
    # values: the CPU computes them.
    wide, crowded = torch.ones(6000), torch.rand(100) + 0.5
    expected = wide.scatter_reduce(0, torch.zeros(100, dtype=torch.long), crowded, "prod")
    actual = wide.to(device).scatter_reduce(0, torch.zeros(100, dtype=torch.long, device=device), crowded.to(device),
                                            "prod")
    _assert_same(actual, expected, rtol=128 * EPS32, atol=0)
    assert fallbacks() == {"aten::scatter_reduce.two": 1}
    _assert_errors_match(lambda s, i, x: s.scatter_reduce(0, i, x, "max"), [self, index[:, None], source], device)


# --- segment_reduce ------------------------------------------------------------------------


@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_segment_reduce(reduce, initial, dtype, device, fallbacks):
    torch.manual_seed(0)
    data = torch.randn(9, 3, 2).to(dtype)
    data[4, 1, 0] = 0.0  # prod's gradient at a zero
    data[6, :, 1] = data[7, :, 1]  # a tie inside the segment [5, 9)
    lengths = torch.tensor([2, 0, 2, 5])
    cases = [dict(lengths=lengths), dict(offsets=torch.tensor([0, 2, 2, 4, 9])),
             dict(lengths=torch.tensor([[1, 2], [3, 0], [0, 3]]).repeat(3, 1), axis=1)]
    # A segment reduces at most 5 rows of |x| < 4 (prod: 4^5), each result a few roundings off.
    tolerance = dict(rtol=2 ** -7, atol=2 ** -7) if dtype == torch.bfloat16 else dict(
        rtol=32 * 5 * EPS32, atol=_sum_atol(5, 4.0 ** 5))
    for kwargs in cases:
        def fn(d):
            return torch.segment_reduce(d, reduce, initial=initial, **{k: _to(v, d.device) for k, v in kwargs.items()})
        (cpu, cpu_grads), (dev, dev_grads) = _run(fn, [data], device, grad=True)
        _assert_same(dev[0], cpu[0], **tolerance)
        _assert_same(dev_grads[0], cpu_grads[0], **tolerance)
    _no_fallbacks(fallbacks)


def test_segment_reduce_unsafe_and_errors(device, fallbacks):
    data = torch.randn(10, 2)
    lengths = torch.tensor([1, 2, 0, 6])  # covers 9 of 10 rows
    (cpu, cpu_grads), (dev, dev_grads) = _run(
        lambda d: torch.segment_reduce(d, "mean", lengths=lengths.to(d.device), unsafe=True, initial=1), [data],
        device, grad=True)
    # A mean of at most 6 rows of |x| < 5.
    _assert_same(dev[0], cpu[0], rtol=8 * 6 * EPS32, atol=_sum_atol(6, 5.0))
    _assert_same(dev_grads[0], cpu_grads[0])
    _no_fallbacks(fallbacks)
    for args, kwargs in [((data, "sum"), dict(lengths=torch.tensor([2, 3]))),
                         ((data, "sum"), dict(lengths=torch.tensor([-1, 11]))),
                         ((data, "foo"), dict(lengths=torch.tensor([4, 6]))),
                         ((data, "sum"), dict()),
                         ((data, "sum"), dict(lengths=torch.tensor([4, 6]), axis=1)),
                         ((data.long(), "sum"), dict(lengths=torch.tensor([4, 6])))]:
        _assert_errors_match(lambda d, r, kw=kwargs: torch.segment_reduce(
            d, r, **{k: _to(v, d.device) for k, v in kw.items()}), args, device)


# --- lgamma, digamma, polygamma ------------------------------------------------------------


def _gamma_inputs():
    torch.manual_seed(0)
    x = torch.rand(400) * 18 - 9
    x = x[(x - x.round()).abs() > 1e-3]  # away from the poles at 0, -1, -2, ... (tested below)
    return torch.cat([x, torch.tensor([1e-6, 0.5, 1.0, 2.0, 10.0, 10.5, 123.25, 1e5, 3e30])])


def _assert_within(actual, expected, bound):
    assert actual.device.type != "cpu" and actual.dtype == expected.dtype
    actual, expected = actual.cpu().double(), expected.double()
    same = (actual == expected) | (actual.isnan() & expected.isnan())
    error = torch.where(same, torch.zeros(()), (actual - expected).abs())
    excess = torch.where(same, torch.zeros(()), error - bound)
    assert bool((excess <= 0).all()), f"worst excess {excess.max().item()} at x index {excess.argmax().item()}"


def test_lgamma(device, fallbacks):
    x = _gamma_inputs()
    exact = torch.lgamma(x.double())
    # x < 8 is shifted: lgamma(y + 8) - log(y (y+1) ... (y+7)) subtracts two values below
    # 8 ln 16 + 9 ln 18 < 50 with a few ulps each; Stirling's series is a few ulps of |result|.
    bound = 32 * EPS32 * (exact.abs() + 50)
    _assert_within(torch.lgamma(x.to(device)), torch.lgamma(x), bound + (torch.lgamma(x).double() - exact).abs())
    (cpu, cpu_grads), (dev, dev_grads) = _run(torch.lgamma, [x], device, grad=True)
    # lgamma's gradient is digamma's, bounded as in test_digamma, times the output gradient.
    r = (x.double() - x.double().trunc()).abs()
    reflection = torch.where(x < 0, 4 / r.clamp(min=1e-30), torch.zeros(()))
    digamma_bound = 64 * EPS32 * (torch.digamma(x.double()).abs() + reflection + 10 / x.double().abs() + 10)
    torch.manual_seed(0)
    weight = torch.randn(x.shape).double()  # _run's output gradient
    cpu_error = (cpu_grads[0].double() - weight * torch.digamma(x.double())).abs()
    _assert_within(dev_grads[0], cpu_grads[0], digamma_bound * weight.abs() + cpu_error)
    specials = torch.tensor([0.0, -0.0, -1.0, -7.0, float("inf"), float("-inf"), float("nan")])
    torch.testing.assert_close(torch.lgamma(specials.to(device)).cpu(), torch.lgamma(specials), equal_nan=True)
    _no_fallbacks(fallbacks)


def test_digamma(device, fallbacks):
    x = _gamma_inputs()
    exact = torch.digamma(x.double())
    # The reflection adds pi / tan(pi r), below 4 / |r| for the fractional part r, to psi(1 - x)
    # with a few ulps each; the recurrence sums up to 10 terms 1/(t + k) of at most 1/|t|.
    r = (x.double() - x.double().trunc()).abs()
    reflection = torch.where(x < 0, 4 / r.clamp(min=1e-30), torch.zeros(()))
    bound = 64 * EPS32 * (exact.abs() + reflection + 10 / x.double().abs() + 10)
    _assert_within(torch.digamma(x.to(device)), torch.digamma(x),
                   bound + (torch.digamma(x).double() - exact).abs())
    specials = torch.tensor([0.0, -0.0, -1.0, -7.0, float("inf"), float("-inf"), float("nan")])
    torch.testing.assert_close(torch.digamma(specials.to(device)).cpu(), torch.digamma(specials), equal_nan=True)
    out = torch.empty(0, device=device)
    torch.digamma(x.to(device), out=out)
    inplace = x.to(device).digamma_()
    torch.testing.assert_close(inplace.cpu(), out.cpu(), rtol=0, atol=0)
    _no_fallbacks(fallbacks)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_polygamma(n, device, fallbacks):
    x = _gamma_inputs()[:-1]  # polygamma(n, 3e30) underflows to 0 on both sides
    exact = torch.special.polygamma(n, x.double())
    # x < 0: (-1)^n psi_n(1 - x) - pi^(n+1) P_n(cot(pi x)), each evaluated to a few ulps of
    # its magnitude (P_n's Horner sum to n+2 ulps of the sum of its terms' magnitudes).
    cot = 1 / torch.tan(math.pi * x.double())
    reflected = torch.special.polygamma(n, 1 - x.double()).abs()
    reflected += math.pi ** (n + 1) * math.factorial(n + 1) * (1 + cot.abs()) ** (n + 1)
    magnitude = exact.abs() + torch.where(x < 0, reflected, torch.zeros(()))
    bound = 64 * (n + 2) * EPS32 * magnitude
    _assert_within(torch.polygamma(n, x.to(device)), torch.polygamma(n, x),
                   bound + (torch.polygamma(n, x).double() - exact).abs())
    _no_fallbacks(fallbacks)


def test_gamma_fallbacks(device, fallbacks):
    x = torch.tensor([0.5, 2.5, -1.5])
    for fn in (torch.lgamma, torch.digamma, lambda t: torch.polygamma(6, t)):
        _assert_same(fn(x.double().to(device)), fn(x.double()))
    _assert_same(torch.polygamma(6, x.to(device)), torch.polygamma(6, x))
    _assert_same(torch.lgamma(torch.arange(1, 5).to(device)), torch.lgamma(torch.arange(1, 5)))
    assert fallbacks() == {"aten::lgamma": 2, "aten::digamma": 1, "aten::polygamma": 2}
    _assert_errors_match(lambda t: torch.polygamma(-1, t), [x], device)
    bf16 = torch.linspace(0.25, 6, 24, dtype=torch.bfloat16)
    for fn in (torch.lgamma, torch.digamma):
        _assert_same(fn(bf16.to(device)), fn(bf16), rtol=2 ** -7, atol=2 ** -7)


# --- embedding_bag -------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("padding_idx", [None, 4])
def test_embedding_bag(mode, padding_idx, device, fallbacks):
    torch.manual_seed(0)
    weight = torch.randn(10, 3)
    indices = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9, 4])
    offsets = torch.tensor([0, 4, 4, 6, 8])  # an empty bag and a bag of padding only
    (cpu, cpu_grads), (dev, dev_grads) = _run(
        lambda w: F.embedding_bag(_to(indices, w.device), w, _to(offsets, w.device), mode=mode,
                                  padding_idx=padding_idx), [weight], device, grad=True)
    # Each bag sums at most 4 rows of magnitude below 4.
    _assert_same(dev[0], cpu[0], atol=_sum_atol(4, 4.0))
    _assert_same(dev_grads[0], cpu_grads[0], atol=_sum_atol(9, 4.0))
    aux_cpu = aten._embedding_bag(weight, indices, offsets, False, ("sum", "mean", "max").index(mode), False, None,
                                  False, -1 if padding_idx is None else padding_idx)
    aux_dev = aten._embedding_bag(weight.to(device), indices.to(device), offsets.to(device), False,
                                  ("sum", "mean", "max").index(mode), False, None, False,
                                  -1 if padding_idx is None else padding_idx)
    for actual, expected in zip(aux_dev[1:], aux_cpu[1:]):
        _assert_same(actual, expected)
    _no_fallbacks(fallbacks)


def test_embedding_bag_per_sample_weights_and_2d(device, fallbacks):
    torch.manual_seed(0)
    weight, indices, weights = torch.randn(10, 5), torch.randint(0, 10, (4, 3)), torch.randn(4, 3)
    (cpu, cpu_grads), (dev, dev_grads) = _run(
        lambda w, p: F.embedding_bag(_to(indices, w.device), w, mode="sum", per_sample_weights=p), [weight, weights],
        device, grad=True)
    _assert_same(dev[0], cpu[0], atol=_sum_atol(3, 16.0))
    for actual, expected in zip(dev_grads, cpu_grads):
        _assert_same(actual, expected, atol=_sum_atol(5, 16.0))
    _no_fallbacks(fallbacks)


def test_embedding_bag_errors(device):
    weight, indices = torch.randn(10, 3), torch.tensor([1, 2, 4])
    for offsets in (torch.tensor([1, 2]), torch.tensor([0, 4])):
        _assert_errors_match(lambda w, i, o: aten._embedding_bag(w, i, o), [weight, indices, offsets], device)
    _assert_errors_match(lambda w, i, o: aten._embedding_bag(w, i, o),
                         [weight.bfloat16(), indices, torch.tensor([0])], device)


# --- grid_sampler_2d -----------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample(mode, padding_mode, align_corners, device, fallbacks):
    torch.manual_seed(0)
    input = torch.rand(2, 3, 5, 6) * 4 - 2
    grid = (torch.rand(2, 4, 7, 2) * 4 - 2).transpose(1, 2)  # non-contiguous, partly outside [-1, 1]
    (cpu, cpu_grads), (dev, dev_grads) = _run(
        lambda i, g: F.grid_sample(i, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
        [input, grid], device, grad=True)
    # Four taps of weight at most 1 and magnitude at most 2; the grid's gradient sums them over
    # three channels, times the unnormalising scale (at most 3).
    _assert_same(dev[0], cpu[0], rtol=GRID_RTOL, atol=_sum_atol(4, 2.0))
    _assert_same(dev_grads[0], cpu_grads[0], rtol=GRID_RTOL, atol=_sum_atol(8, 4.0))
    _assert_same(dev_grads[1], cpu_grads[1], rtol=GRID_RTOL, atol=_sum_atol(12, 8.0) * 3)
    _no_fallbacks(fallbacks)


def test_grid_sample_fallbacks(device, fallbacks):
    input, grid = torch.rand(1, 2, 4, 4), torch.rand(1, 3, 3, 2) * 2 - 1
    _assert_same(F.grid_sample(input.to(device), grid.to(device), mode="bicubic", align_corners=False),
                 F.grid_sample(input, grid, mode="bicubic", align_corners=False))
    assert fallbacks() == {"aten::grid_sampler_2d": 1}
    for bad_input, bad_grid in [(input, grid[..., :1]), (input, grid.double()), (input[:, :, :0], grid),
                                (input.expand(2, 2, 4, 4), grid), (input[0], grid[0])]:
        _assert_errors_match(lambda i, g: aten.grid_sampler_2d(i, g, 0, 0, False), [bad_input, bad_grid], device)


@pytest.mark.parametrize("mode", ["bilinear", "nearest"])
@pytest.mark.parametrize("padding_mode", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding_mode, device, fallbacks):
    torch.manual_seed(0)
    input = torch.rand(2, 2, 3, 4, 5) * 4 - 2
    grid = torch.rand(2, 3, 2, 4, 3) * 4 - 2
    for align_corners in (False, True):
        (cpu, cpu_grads), (dev, dev_grads) = _run(
            lambda i, g: F.grid_sample(i, g, mode=mode, padding_mode=padding_mode, align_corners=align_corners),
            [input, grid], device, grad=True)
        # Eight taps; the grid's gradient sums them over two channels, times a scale below 3.
        _assert_same(dev[0], cpu[0], rtol=GRID_RTOL, atol=_sum_atol(8, 2.0))
        _assert_same(dev_grads[0], cpu_grads[0], rtol=GRID_RTOL, atol=_sum_atol(16, 4.0))
        _assert_same(dev_grads[1], cpu_grads[1], rtol=GRID_RTOL, atol=_sum_atol(16, 8.0) * 3)
    _no_fallbacks(fallbacks)


def test_mvlgamma(device, fallbacks):
    x = torch.linspace(2.1, 9, 30).view(5, 6)
    for p in (1, 3, 5):
        # p lgamma terms of test_lgamma's bound, plus the sum's rounding.
        _assert_same(torch.mvlgamma(x.to(device), p), torch.mvlgamma(x, p), rtol=p * 2e-6, atol=p * 3e-5)
    _no_fallbacks(fallbacks)
    integers = torch.arange(3, 9)
    _assert_same(torch.mvlgamma(integers.to(device), 3), torch.mvlgamma(integers, 3))
    assert fallbacks() == {"aten::mvlgamma": 1}
    _assert_errors_match(lambda t: torch.mvlgamma(t, 0), [x], device)
