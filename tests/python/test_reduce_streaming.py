"""Full reductions on the device against PyTorch's CPU: dot, vdot, inner and 1 x K x 1 matmuls,
vector norms, mean and sum to a scalar, split over the compute units and fused with their
elementwise map. Float tolerances come from the error bound of a float32 sum of n terms in any
order, (n + 1) * u * sum |term| (u = 2^-24; the one extra u covers a rounded product), then the
rounding of the result to its dtype. A timing check compares a full sum with a copy of the same
bytes in simulated time, on the tiny and default presets."""
import json
import math
import os
import subprocess
import sys

import pytest
import torch

U32 = 2.0 ** -24
# Unit roundoff of a result rounded to its dtype.
UNIT = {torch.float32: U32, torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}
SIZES = [0, 1, 7, 1000, 300_000, 2_000_000]
FLOATS = [torch.float32, torch.float16, torch.bfloat16]


def _sum_bound(terms):
    """|float32 sum - exact sum| for any summation order of these (float64) terms."""
    return (terms.numel() + 1) * U32 * terms.abs().sum().item()


def _assert_within(actual, exact, bound, dtype, what):
    """actual (a device scalar of dtype) is the float32 result, within `bound` of `exact`,
    rounded to dtype."""
    assert actual.dtype == dtype, what
    value = actual.item()
    if abs(exact) - bound > torch.finfo(dtype).max * (1 + UNIT[dtype]):  # rounds to inf, as on the CPU
        assert value == math.copysign(math.inf, exact), f"{what}: {value} vs {exact}"
        return
    allowed = bound + UNIT[dtype] * (abs(exact) + bound)
    assert abs(value - exact) <= allowed, f"{what}: {value} vs {exact} (bound {allowed})"


def _inputs(n, dtype, seed):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=generator).to(dtype), torch.randn(n, generator=generator).to(dtype)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_dot_vdot_inner_and_matmul_match_the_cpu(n, dtype, device, fallbacks):
    x, y = _inputs(n, dtype, n)
    products = x.double() * y.double()
    exact, bound = products.sum().item(), _sum_bound(products)
    xd, yd = x.to(device), y.to(device)
    results = {"dot": torch.dot(xd, yd), "vdot": torch.vdot(xd, yd), "inner": torch.inner(xd, yd),
               "matmul": xd @ yd, "mm 1xKx1": (xd.view(1, -1) @ yd.view(-1, 1)).view(())}
    for what, result in results.items():
        _assert_within(result, exact, bound, dtype, what)
    assert not fallbacks()


def test_dot_of_strided_views_and_integers(device, fallbacks):
    x, y = _inputs(600_001, torch.float32, 1)
    xd, yd = x.to(device), y.to(device)
    products = x[::3].double() * y.flip(0)[::3].double()
    _assert_within(torch.dot(xd[::3], yd.flip(0)[::3]), products.sum().item(), _sum_bound(products),
                   torch.float32, "strided dot")
    for dtype in (torch.int32, torch.int64, torch.uint8):
        a = torch.randint(0, 200, (100_003,)).to(dtype)
        b = torch.randint(0, 200, (100_003,)).to(dtype)
        assert torch.equal(torch.dot(a.to(device), b.to(device)).cpu(), torch.dot(a, b)), dtype
    assert not fallbacks()


def test_dot_errors_are_the_cpus(device):
    for a, b in [(torch.ones(3), torch.ones(4)), (torch.ones(3), torch.ones(3, dtype=torch.int32)),
                 (torch.ones(2, 2), torch.ones(2))]:
        with pytest.raises(RuntimeError) as on_cpu:
            torch.dot(a, b)
        with pytest.raises(RuntimeError) as on_device:
            torch.dot(a.to(device), b.to(device))
        assert str(on_device.value) == str(on_cpu.value)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_vector_norms_match_the_cpu(n, dtype, device, fallbacks):
    x, _ = _inputs(n, dtype, n + 1)
    xd = x.to(device)
    wide = x.double()
    ones = wide.abs()
    _assert_within(torch.linalg.vector_norm(xd, 1), ones.sum().item(), _sum_bound(ones), dtype, "1-norm")
    squares = wide * wide
    total, bound = squares.sum().item(), _sum_bound(squares)
    root = math.sqrt(total)
    root_bound = math.sqrt(total + bound) - math.sqrt(max(total - bound, 0.0)) + U32 * root
    for what, result in [("2-norm", torch.linalg.vector_norm(xd)), ("norm", torch.norm(xd)),
                         ("linalg.norm", torch.linalg.norm(xd))]:
        _assert_within(result, root, root_bound, dtype, what)
    if n > 0:
        for ord in (math.inf, -math.inf):
            expected = torch.linalg.vector_norm(x.float(), ord).to(dtype)
            assert torch.equal(torch.linalg.vector_norm(xd, ord).cpu(), expected), ord
    assert not fallbacks()


def test_norms_over_dims_with_a_dtype(device, fallbacks):
    x, _ = _inputs(3 * 400_000, torch.float16, 2)
    rows, wide = x.view(3, -1), x.view(3, -1).double().abs()
    for ord in (1, 2, math.inf):
        result = torch.linalg.vector_norm(rows.to(device), ord, dim=1, dtype=torch.float32)
        assert result.shape == (3,)
        for row in range(3):
            if ord == math.inf:
                assert result[row].item() == wide[row].max().item()
                continue
            terms = wide[row] ** ord
            total, bound = terms.sum().item(), _sum_bound(terms)
            if ord == 2:
                root = math.sqrt(total)
                total, bound = root, math.sqrt(total + bound) - math.sqrt(total - bound) + U32 * root
            _assert_within(result[row], total, bound, torch.float32, f"ord {ord} row {row}")
    assert not fallbacks()


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("n", SIZES)
def test_sum_and_mean_to_a_scalar_match_the_cpu(n, dtype, device, fallbacks):
    x, _ = _inputs(n, dtype, n + 2)
    xd = x.to(device)
    wide = x.double()
    total, bound = wide.sum().item(), _sum_bound(wide)
    _assert_within(xd.sum(), total, bound, dtype, "sum")
    if n == 0:
        assert math.isnan(xd.mean().item())
    else:
        mean = total / n
        _assert_within(xd.mean(), mean, bound / n + U32 * abs(mean), dtype, "mean")
    assert not fallbacks()


def test_gradients_of_dot_and_norm(device):
    x, y = _inputs(50_000, torch.float32, 3)
    xd = x.to(device).requires_grad_()
    yd = y.to(device).requires_grad_()
    torch.dot(xd, yd).backward()
    assert torch.equal(xd.grad.cpu(), y) and torch.equal(yd.grad.cpu(), x)
    xd.grad = None
    torch.linalg.vector_norm(xd).backward()
    norm = x.double().norm().item()
    # x / norm: the norm's relative error (at most (n + 2) u), then one rounding.
    bound = ((x.numel() + 2) * U32 + U32) * (x.double().abs() / norm)
    assert ((xd.grad.cpu().double() - x.double() / norm).abs() <= bound).all()


_TIMING = r"""
import json, torch, torch_mimic
device = torch.device(torch_mimic.DEVICE_TYPE, 0)
props = torch_mimic.get_device_properties(0)
n = NUMEL
# Bandwidth-bound: at least four scratchpads' worth of data per compute unit.
assert 4 * n >= 4 * props.compute_units * props.scratchpad_bytes
warm = torch.ones(1 << 16, device=device)
warm.sum(); warm.clone(); torch_mimic.synchronize()
def timed(fn):
    start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
    start.record(); fn(); end.record(); end.synchronize()
    return start.elapsed_time(end)
# Fresh inputs for each, so that no measurement reads data another one just read.
source, summed, target = (torch.ones(n, device=device) for _ in range(3))
torch_mimic.synchronize()
print(json.dumps({"copy": timed(lambda: target.copy_(source)), "sum": timed(lambda: summed.sum())}))
"""


@pytest.mark.parametrize("preset, numel", [("tiny", 4 << 20), ("default", 16 << 20)])
def test_a_full_sum_streams_like_a_copy_of_its_bytes(preset, numel):
    done = subprocess.run([sys.executable, "-c", _TIMING.replace("NUMEL", str(numel))], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "MIMIC_PRESET": preset})
    assert done.returncode == 0, done.stderr
    times = json.loads(done.stdout)
    # The copy reads and writes 4n bytes each, the sum reads 4n: at equal bandwidth it takes half.
    copy_bytes, sum_bytes = 8 * numel, 4 * numel
    assert times["sum"] <= 1.3 * times["copy"] * sum_bytes / copy_bytes, times
