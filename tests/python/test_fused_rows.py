"""The fused row kernels and the GEMM bias epilogue through aten: softmax, log_softmax and layer
norm, forward and backward (autograd), against a float64 reference on the CPU computed from the
same rounded inputs; float32, bfloat16 and float16; whole rows, long rows (the chunked passes:
rows beyond what fits half the scratchpad), empty tensors, non-contiguous inputs and dims other
than the last. Launch counts come from the kernel cache (every op launch looks its kernel up
once): one per fused op. cross_entropy and nll_loss read nothing back to the host.

Tolerances are error bounds: float32 arithmetic over a row of n elements is off by at most
k * n units of roundoff of the magnitudes involved, and each output is rounded once to its
dtype (whose unit then dominates for bfloat16 and float16)."""
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_mimic

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
UNIT = {torch.float32: 2.0 ** -24, torch.bfloat16: 2.0 ** -8, torch.float16: 2.0 ** -11}
U32 = UNIT[torch.float32]
# Half the spacing of the dtype's subnormals: the absolute error of rounding a tiny value.
TINY = {torch.float32: 2.0 ** -150, torch.bfloat16: 2.0 ** -134, torch.float16: 2.0 ** -25}
LONG = 30000  # beyond half the default preset's scratchpad for every kind: the chunked passes


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)


def launches(fn):
    """fn's result and the op kernels it launched."""
    def lookups():
        stats = torch_mimic.kernel_cache_stats()
        return stats["hits"] + stats["misses"]

    before = lookups()
    result = fn()
    return result, lookups() - before


def assert_within(actual, expected, bound, what):
    """|actual - expected| <= bound elementwise (float64 on the CPU; NaN where both are)."""
    actual = actual.detach().cpu().double()
    expected = expected.detach().double()
    both_nan = actual.isnan() & expected.isnan()
    error = (actual - expected).abs().where(~both_nan, torch.zeros_like(actual))
    worst = (error - bound).argmax() if error.numel() else None
    assert error.numel() == 0 or bool((error <= bound).all()), (
        f"{what}: error {error.flatten()[worst].item():.3g} > bound {bound.flatten()[worst].item():.3g} "
        f"(actual {actual.flatten()[worst].item()}, expected {expected.flatten()[worst].item()})")


def _peak(t):
    return t.detach().abs().max().item() if t.numel() else 0.0


def _input(shape, dtype, device, scale=4.0, transpose=False):
    """A random input rounded to dtype, on the CPU and (as a leaf) on the device; with
    ``transpose``, the device tensor is a non-contiguous view with the given shape."""
    if transpose:
        base = (torch.rand(tuple(reversed(shape))) * 2 - 1) * scale
        cpu = base.to(dtype).t()
        dev = base.to(dtype).to(device).t()
    else:
        cpu = ((torch.rand(shape) * 2 - 1) * scale).to(dtype)
        dev = cpu.to(device)
    return cpu, dev.detach().requires_grad_()


# --- softmax -------------------------------------------------------------------------------

SOFTMAX_CASES = [((4, 7), 1, False), ((4, 7), 0, False), ((2, 3, 5), 1, False), ((2, 3, 5), -1, False),
                 ((), 0, False), ((3, LONG), -1, False), ((LONG, 2), 0, False), ((9, 6), 1, True),
                 ((0, 5), 1, False), ((5, 0), 1, False)]


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, dim, transpose", SOFTMAX_CASES)
def test_softmax_forward_and_backward(log, dtype, shape, dim, transpose, device):
    fn = torch.log_softmax if log else torch.softmax
    x_cpu, x = _input(shape, dtype, device, transpose=transpose)
    y = fn(x, dim)
    assert y.dtype == dtype
    x64 = x_cpu.double().requires_grad_()
    y64 = fn(x64, dim)
    n = max(x_cpu.shape[dim] if x_cpu.dim() else 1, 1)
    unit = UNIT[dtype]
    # exp(x - max) carries the argument's roundoff (|x - max| <= 8 here); the sum n of them.
    if log:
        bound = (n + 48) * U32 * (y64.abs() + 1) + unit * y64.abs()
    else:
        bound = ((n + 48) * U32 + unit) * y64.abs() + TINY[dtype]
    assert_within(y, y64, bound, "output")

    grad_cpu = torch.randn(x_cpu.shape).to(dtype)
    y.backward(grad_cpu.to(device))
    y64.backward(grad_cpu.double())
    # The device's backward reads its own rounded output: that roundoff is in the bound too.
    dy, out = grad_cpu.double(), y64.detach()
    if log:
        total = dy.abs().sum(dim, keepdim=True) if dy.dim() else dy.abs()
        scale = dy.abs() + out.exp() * total * (1 + out.abs())
    else:
        total = (dy * out).abs().sum(dim, keepdim=True) if dy.dim() else (dy * out).abs()
        scale = out.abs() * (dy.abs() + total) + out.abs() * dy.abs().sum(dim, keepdim=True) if dy.dim() \
            else out.abs() * (dy.abs() + total)
    bound = ((n + 48) * U32 + 4 * unit) * scale + unit * x64.grad.abs() + TINY[dtype]
    assert_within(x.grad, x64.grad, bound, "grad")


def test_half_to_float_softmax(device):
    x_cpu = torch.randn(5, 300).half()
    for log in (False, True):
        y = torch.ops.aten._log_softmax if log else torch.ops.aten._softmax
        out = y(x_cpu.to(device), 1, True)
        assert out.dtype == torch.float32
        ref = y(x_cpu.double(), 1, False)
        assert_within(out, ref, (300 + 48) * U32 * (ref.abs() + 1), "half_to_float")


@pytest.mark.parametrize("log", [False, True])
def test_softmax_is_one_launch_each_way(log, device):
    fn = torch.log_softmax if log else torch.softmax
    for shape in ((64, 100), (3, LONG)):
        x = torch.randn(shape, device=device, requires_grad=True)
        y, forward = launches(lambda: fn(x, -1))
        grad = torch.randn(shape, device=device)
        _, backward = launches(lambda: y.backward(grad))
        assert (forward, backward) == (1, 1), shape


def test_permuted_input_is_made_contiguous_first(device):
    """Kept dims that merge into no two [G, C] dims: one copy, then the kernel."""
    x_cpu = torch.randn(2, 3, 4, 5)
    x = x_cpu.to(device).permute(0, 2, 3, 1)
    y, count = launches(lambda: torch.softmax(x, 1))
    ref = torch.softmax(x_cpu.double().permute(0, 2, 3, 1), 1)
    assert_within(y, ref, 60 * U32 * ref.abs() + TINY[torch.float32], "permuted")
    assert count == 2


# --- layer norm ----------------------------------------------------------------------------

NORM_CASES = [((4, 16), [16], False), ((2, 3, 40), [3, 40], False), ((2, LONG), [LONG], False),
              ((6, 16), [16], True), ((0, 8), [8], False)]


@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape, normalized, transpose", NORM_CASES)
def test_layer_norm_forward_and_backward(affine, dtype, shape, normalized, transpose, device):
    x_cpu, x = _input(shape, dtype, device, scale=2.0, transpose=transpose)
    x_cpu = x_cpu + 1  # a mean away from zero
    x = (x.detach() + 1).requires_grad_()
    params_cpu = [((torch.rand(normalized) * 2 - 1) * 2).to(dtype) for _ in range(2)] if affine else [None, None]
    params = [None if p is None else p.to(device).requires_grad_() for p in params_cpu]
    y = F.layer_norm(x, normalized, *params, eps=1e-5)
    x64 = x_cpu.double().requires_grad_()
    params64 = [None if p is None else p.double().requires_grad_() for p in params_cpu]
    y64 = F.layer_norm(x64, normalized, *params64, eps=1e-5)
    n = int(torch.tensor(normalized).prod())
    rows = max(1, x_cpu.numel() // n)
    unit = UNIT[dtype]
    w = params64[0].detach().abs() if affine else 1
    b = params64[1].detach().abs() if affine else 0
    # The mean's and the variance's roundoff over n elements, relative to the normalised values.
    bound = ((n + 64) * U32 * 8 + 2 * unit) * ((y64.detach().abs() if not affine else 0) + 4 * w + b + 1)
    assert_within(y, y64, bound, "output")

    grad_cpu = torch.randn(shape).to(dtype)
    y.backward(grad_cpu.to(device))
    y64.backward(grad_cpu.double())
    # The device's backward reads mean and rstd saved in the input's dtype: a relative error of
    # a unit in rstd, and of a unit of the spread in the mean.
    length = max(n, rows) + 64
    scale_x = _peak(x64.grad) + _peak(grad_cpu.double()) * (4 if affine else 1) * 8
    assert_within(x.grad, x64.grad, (length * U32 + 8 * unit) * scale_x + TINY[dtype], "grad input")
    if affine:
        for p, p64, name in ((params[0], params64[0], "weight"), (params[1], params64[1], "bias")):
            scale = grad_cpu.double().abs().sum().item() * 8 / n + _peak(p64.grad)
            assert_within(p.grad, p64.grad, (length * U32 + 8 * unit) * scale + TINY[dtype], f"grad {name}")


def test_layer_norm_launches(device):
    x = torch.randn(64, 256, device=device, requires_grad=True)
    weight = torch.randn(256, device=device, requires_grad=True)
    bias = torch.randn(256, device=device, requires_grad=True)
    grad = torch.ones(64, 256, device=device)
    y, forward = launches(lambda: F.layer_norm(x, [256], weight, bias))
    _, backward = launches(lambda: y.backward(grad))
    # Backward: the input gradient's kernel, then one reduction each for weight and bias.
    assert (forward, backward) == (1, 3)
    plain = torch.randn(64, 256, device=device, requires_grad=True)
    z, forward = launches(lambda: F.layer_norm(plain, [256]))
    _, backward = launches(lambda: z.backward(grad))
    assert (forward, backward) == (1, 1)


# --- addmm / linear bias epilogue ----------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_linear_bias_is_the_gemm_epilogue(dtype, device):
    x_cpu, w_cpu, b_cpu = (torch.randn(s).to(dtype) for s in ((33, 40), (20, 40), (20,)))
    out, count = launches(lambda: F.linear(x_cpu.to(device), w_cpu.to(device), b_cpu.to(device)))
    assert count == 1  # no copy of the bias, no separate add
    ref = F.linear(x_cpu.double(), w_cpu.double(), b_cpu.double())
    magnitude = x_cpu.double().abs() @ w_cpu.double().abs().t() + b_cpu.double().abs()
    assert_within(out, ref, (40 + 8) * U32 * magnitude + UNIT[dtype] * ref.abs(), "linear")


@pytest.mark.parametrize("self_shape", [(7,), (5, 1), (5, 7), ()])
def test_addmm_broadcasts_self(self_shape, device):
    a, b, c = torch.randn(5, 9), torch.randn(9, 7), torch.randn(self_shape)
    out = torch.addmm(c.to(device), a.to(device), b.to(device), beta=0.5, alpha=2.0)
    ref = torch.addmm(c.double(), a.double(), b.double(), beta=0.5, alpha=2.0)
    magnitude = 2 * a.double().abs() @ b.double().abs() + 0.5 * c.double().abs()
    assert_within(out, ref, 20 * U32 * magnitude, "addmm")
    batched = torch.baddbmm(c.to(device), a.expand(3, 5, 9).to(device), b.expand(3, 9, 7).to(device), beta=2.0)
    ref = torch.baddbmm(c.double(), a.double().expand(3, 5, 9), b.double().expand(3, 9, 7), beta=2.0)
    assert_within(batched, ref, 20 * U32 * (magnitude + 2 * c.double().abs()), "baddbmm")


def test_addmm_with_a_nan_self_and_beta_zero_ignores_it(device):
    out = torch.addmm(torch.full((3, 4), float("nan"), device=device), torch.ones(3, 2, device=device),
                      torch.ones(2, 4, device=device), beta=0)
    assert out.cpu().eq(2).all()


# --- cross_entropy / nll_loss --------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy(dtype, reduction, device):
    logits_cpu = (torch.randn(16, 10) * 3).to(dtype)
    target = torch.randint(0, 10, (16,))
    target[3] = -100
    logits = logits_cpu.to(device).requires_grad_()
    loss = F.cross_entropy(logits, target.to(device), reduction=reduction)
    logits64 = logits_cpu.double().requires_grad_()
    loss64 = F.cross_entropy(logits64, target, reduction=reduction)
    unit = UNIT[dtype]
    assert_within(loss, loss64, (64 * U32 + 2 * unit) * (loss64.detach().abs() * 16 + 16), "loss")
    loss.sum().backward()
    loss64.sum().backward()
    assert_within(logits.grad, logits64.grad, (64 * U32 + 4 * unit) * 2, "grad")


def test_nll_loss_reads_nothing_back(device):
    """A target out of range is the device's fault at the next synchronisation, as on CUDA:
    no host read checks it when the op is called."""
    code = ("import torch, torch_mimic\n"
            "dev = torch.device('privateuseone', 0)\n"
            "x = torch.randn(3, 4, device=dev)\n"
            "loss = torch.nn.functional.nll_loss(x, torch.tensor([0, 4, 1], device=dev))\n"
            "print('queued', flush=True)\n"
            "try:\n"
            "    torch_mimic.synchronize()\n"
            "except RuntimeError as error:\n"
            "    print(error)\n")
    # The program faults on purpose: later kernels read what the faulted gather never wrote,
    # which a sanitizer run (run_sanitized.py) would report of this process.
    env = {name: value for name, value in os.environ.items() if not name.startswith("MIMIC_SANITIZE")}
    env["SYSTEMC_DISABLE_COPYRIGHT_MESSAGE"] = "1"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    queued, error = result.stdout.split("queued", 1)
    assert "MIMIC_ERROR_ILLEGAL_ADDRESS" in error and "gather" in error, result.stdout
