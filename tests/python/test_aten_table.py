"""The C++ aten layer (torch_backend/aten): the op table read from Python, the pointwise,
reduction and _foreach_ kernels registered from it, against PyTorch's CPU device."""
import re
import subprocess
import sys
import types
import warnings

import pytest
import torch

import torch_mimic

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8,
          torch.bool)


def _operands(dtype, shape=(4, 6)):
    generator = torch.Generator().manual_seed(1)
    if dtype == torch.bool:
        return torch.randint(0, 2, shape, generator=generator).bool()
    if dtype in (torch.int32, torch.int64, torch.uint8):
        low = 0 if dtype == torch.uint8 else -9
        return torch.randint(low, 10, shape, generator=generator).to(dtype)
    return torch.randn(shape, generator=generator).to(dtype)


F32_EPS = torch.finfo(torch.float32).eps


def _close(expected, actual, ulps=16, atol=0.0):
    """Both sides compute in float32, whatever the host's SIMD width or math library. Each
    operation of a program is within about 2 ulps on either side (the transcendental functions;
    the rest round correctly), so a program of k operations differs by at most about 4k ulps of
    max(1, |result|), the 1 for cancellation (log1p as log(1 + x)). The default covers programs
    of up to 4 operations; longer ones pass more ulps, and reductions add their summation bound
    as `atol`. f16/bf16 results round once from those float32 values on each side: one ulp of
    the type apart at most, 4 allowed."""
    actual = actual.cpu()
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if expected.dtype in (torch.float16, torch.bfloat16):
        tolerance = 4 * torch.finfo(expected.dtype).eps
    else:
        tolerance = ulps * F32_EPS
    torch.testing.assert_close(actual, expected, rtol=tolerance, atol=tolerance + atol,
                               equal_nan=True)


def _summation_bound(x):
    """The worst difference of two float32 sums of x's elements in any orders (a CPU's SIMD width
    picks its order): (n - 1) eps sum |x| for each, so twice that between them."""
    return 2 * (x.numel() - 1) * F32_EPS * x.double().abs().sum().item()


def test_the_table_is_read_only_and_complete():
    table = torch_mimic.op_table()
    assert isinstance(table, types.MappingProxyType)
    with pytest.raises(TypeError):
        table[("add", "")] = None
    add = table[("add", "alpha")]
    assert add.kind == "pointwise" and add.operands == ("self", "other", "alpha")
    assert add.promoted == ("self", "other") and "{2}" in add.program
    assert {entry.kind for entry in table.values()} == {"pointwise", "reduction", "gemm", "index"}
    assert table[("sum", "")].program == "sum" and table[("all", "")].program == "min"
    for entry in table.values():
        if entry.kind == "pointwise":  # every placeholder names an operand
            used = {int(token[1:-1]) for token in entry.program.split() if token.startswith("{")}
            assert used <= set(range(len(entry.operands))), entry


def test_importing_overrides_no_kernel():
    """Each overload has one PrivateUse1 kernel: C++ and Python never both register it."""
    result = subprocess.run([sys.executable, "-W", "always", "-c", "import torch_mimic"],
                            capture_output=True, text=True, check=True)
    assert not re.search("Overriding a previously registered kernel", result.stderr), result.stderr


@pytest.mark.parametrize("overload", [
    "add.Tensor", "add_.Tensor", "add.out", "add.Scalar_out", "mul.Scalar_out", "maximum",
    "div.Tensor_mode", "div_.Scalar_mode", "clamp.Tensor", "clamp_min.out", "gelu_backward",
    "fill_.Scalar", "zero_", "masked_fill_.Tensor", "where.self", "sum.dim_IntList", "max.dim",
    "argmax.out", "any.dim", "_foreach_add_.List", "_foreach_maximum_.List",
    "_foreach_add.Scalar_out"])
def test_every_leaf_overload_has_a_kernel(overload):
    assert torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{overload}", "PrivateUse1")


UNARY = ["abs", "neg", "exp", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "erf", "sin", "floor",
         "round", "reciprocal", "relu", "sign", "bitwise_not", "logical_not", "isnan"]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("name", UNARY)
def test_unary(name, dtype, device, fallbacks):
    x = _operands(dtype)
    if dtype.is_floating_point and name in ("log1p", "sqrt", "rsqrt"):
        x = x.abs()
    try:
        expected = getattr(torch, name)(x)
    except RuntimeError:
        pytest.skip(f"the CPU has no {name} for {dtype}")
    _close(expected, getattr(torch, name)(x.to(device)))
    assert not fallbacks()


BINARY = [
    ("add", lambda a, b: a + b), ("sub alpha", lambda a, b: torch.sub(a, b, alpha=2)),
    ("mul", lambda a, b: a * b), ("div", lambda a, b: a / b),
    ("div floor", lambda a, b: torch.div(a, b, rounding_mode="floor")),
    ("div trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc")),
    ("maximum", torch.maximum), ("fmod", torch.fmod), ("remainder", torch.remainder),
    ("eq", torch.eq), ("lt", torch.lt), ("logical_xor", torch.logical_xor),
    ("bitwise_and", torch.bitwise_and), ("where", lambda a, b: torch.where(a > b, a, b)),
    ("clamp", lambda a, b: torch.clamp(a, min=b)), ("pow 2", lambda a, b: torch.pow(a, 2)),
]


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.int32, torch.int64),
                         ids=str)
@pytest.mark.parametrize("name,fn", BINARY, ids=[name for name, _ in BINARY])
def test_binary_with_broadcast(name, fn, dtype, device, fallbacks):
    a, b = _operands(dtype), _operands(dtype, (6,)).flip(0)
    if not dtype.is_floating_point and name.startswith(("div", "fmod", "remainder")):
        b = b.masked_fill(b == 0, 3)  # integer division by zero differs by design
    try:
        expected = fn(a, b)
    except RuntimeError:
        pytest.skip(f"the CPU has no {name} for {dtype}")
    _close(expected, fn(a.to(device), b.to(device)))
    assert not fallbacks()


def test_mixed_dtypes_and_scalars_promote_as_pytorch(device, fallbacks):
    i = torch.arange(6, dtype=torch.int32)
    h = torch.linspace(-1, 1, 6).half()
    for fn in (lambda a, b: a + b, lambda a, b: a * 2.5, lambda a, b: b + 1,
               lambda a, b: a + torch.tensor(3, dtype=torch.int64), lambda a, b: a / 4,
               lambda a, b: torch.where(a > 2, a, b), lambda a, b: a > b,
               lambda a, b: torch.addcmul(b.float(), a, b.float(), value=0.5)):
        _close(fn(i, h), fn(i.to(device), h.to(device)))
    assert not fallbacks()


def test_in_place_and_out_variants(device, fallbacks):
    x, y = torch.randn(3, 4), torch.randn(4)
    dx = x.to(device)
    dx.add_(y.to(device), alpha=-0.5)
    _close(x.add(y, alpha=-0.5), dx)
    out = torch.empty(0, device=device)
    torch.mul(x.to(device), y.to(device), out=out)
    _close(x * y, out)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.mul(x.to(device), y.to(device), out=torch.empty(5, device=device))
    assert any("resized" in str(w.message) for w in caught)
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        torch.arange(4, device=device).add_(0.5)
    with pytest.raises(RuntimeError, match=r"output with shape \[4\] doesn't match the broadcast"):
        torch.zeros(4, device=device).add_(torch.ones(3, 4, device=device))
    assert not fallbacks()


def test_variant_arguments_are_checked(device):
    x = torch.ones(3, device=device)
    with pytest.raises(RuntimeError, match="rounding_mode"):
        torch.div(x, x, rounding_mode="down")
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        torch.clamp(x)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        torch.ops.aten.gelu(x, approximate="fast")
    with pytest.raises(RuntimeError, match="boolean masks"):
        x.masked_fill_(torch.ones(3, dtype=torch.uint8, device=device), 0)
    with pytest.raises(RuntimeError, match="same device"):
        x + torch.ones(3)


def test_activation_variants(device, fallbacks):
    x = torch.linspace(-3, 3, 25, requires_grad=True)
    dx = x.detach().to(device).requires_grad_()
    for fn in (lambda t: torch.nn.functional.gelu(t, approximate="tanh"),
               torch.nn.functional.gelu, torch.nn.functional.elu, torch.nn.functional.silu,
               lambda t: torch.nn.functional.leaky_relu(t, 0.2), torch.nn.functional.logsigmoid,
               lambda t: torch.nn.functional.threshold(t, 0.5, -1.0)):
        expected = fn(x)
        (grad,) = torch.autograd.grad(expected.sum(), x)
        actual = fn(dx)
        (dgrad,) = torch.autograd.grad(actual.sum(), dx)
        # The gelu and elu programs and their gradients run up to about 30 operations.
        _close(expected.detach(), actual.detach(), ulps=128)
        _close(grad, dgrad, ulps=128)
    assert not fallbacks()


def test_unsupported_dtypes_fall_back_and_are_counted(device, fallbacks):
    # complex128: the device computes float64 and complex64, not complex128. The CPU does the
    # same operations, so the result is exact.
    x = torch.randn(5, dtype=torch.complex128)
    assert torch.equal((x.to(device) * 3).cpu(), x * 3)
    assert fallbacks() == {"aten::mul.Tensor": 1}


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.int64, torch.bool), ids=str)
def test_reductions(dtype, device, fallbacks):
    x = _operands(dtype, (4, 5, 6))
    cases = [lambda t: t.sum(), lambda t: t.sum((0, -1), keepdim=True),
             lambda t: t.sum(1, dtype=torch.float32), lambda t: t.amax((0, 2)),
             lambda t: t.max(1), lambda t: t.min(-1, keepdim=True), lambda t: t.all(),
             lambda t: t.any(2)]
    if dtype.is_floating_point:
        cases += [lambda t: t.mean(), lambda t: t.mean(-1)]
    if dtype != torch.float16:  # the CPU has no half prod
        cases.append(lambda t: t.prod(2))
    if dtype != torch.bool:
        cases += [lambda t: t.argmax(), lambda t: t.argmin(1, keepdim=True)]
    for fn in cases:
        expected, actual = fn(x), fn(x.to(device))
        for e, a in zip(expected if isinstance(expected, tuple) else (expected,),
                        actual if isinstance(actual, tuple) else (actual,)):
            _close(e, a, atol=_summation_bound(x.float()))
    assert not fallbacks()


def test_reduction_errors_and_out(device):
    empty = torch.empty(0, 3, device=device)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim"):
        empty.max()
    with pytest.raises(IndexError, match=r"argmax\(\): Expected reduction dim"):
        empty.argmax()
    with pytest.raises(IndexError, match="Dimension out of range"):
        empty.sum(2)
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        torch.ones(3, dtype=torch.int64, device=device).mean()
    assert empty.all().item() and not empty.any().item() and empty.sum().item() == 0
    x = torch.randn(3, 4)
    values = torch.empty(0, device=device)
    indices = torch.empty(0, dtype=torch.int64, device=device)
    torch.max(x.to(device), 1, out=(values, indices))
    _close(x.max(1).values, values)
    _close(x.max(1).indices, indices)


def test_foreach_ops(device, fallbacks):
    a = [torch.randn(5), torch.randn(2, 3)]
    b = [torch.randn(5), torch.randn(2, 3)]
    da, db = [t.to(device) for t in a], [t.to(device) for t in b]
    torch._foreach_add_(a, b, alpha=0.5)
    torch._foreach_add_(da, db, alpha=0.5)
    torch._foreach_maximum_(a, b)
    torch._foreach_maximum_(da, db)
    torch._foreach_addcdiv_(a, b, b, 0.1)
    torch._foreach_addcdiv_(da, db, db, 0.1)
    torch._foreach_mul_(a, [2.0, 3.0])
    torch._foreach_mul_(da, [2.0, 3.0])
    for expected, actual in zip(a, da):
        _close(expected, actual)
    out = [torch.empty(0, device=device) for _ in a]
    torch.ops.aten._foreach_add.List_out(da, db, out=out)
    _close(a[1] + b[1], out[1])
    # sqrt of a sum of squares: the sum's bound, halved by the root, relative to the norm.
    _close(torch._foreach_norm(a)[0], torch._foreach_norm(da)[0], ulps=2 * a[0].numel())
    assert not fallbacks()
    with pytest.raises(RuntimeError, match="Tensor lists must have the same number of tensors, got 2 and 1"):
        torch._foreach_add_(da, db[:1])


def _launches(fn):
    """The op kernels ``fn`` launched: each launch looks its kernel up in the cache once."""
    stats = torch_mimic.kernel_cache_stats()
    before = stats["hits"] + stats["misses"]
    fn()
    stats = torch_mimic.kernel_cache_stats()
    return stats["hits"] + stats["misses"] - before


def test_foreach_lists_are_one_launch_per_32_tensors(device, fallbacks):
    """As CUDA's multi_tensor_apply: contiguous lists of one dtype take one launch per 32
    tensors, and give exactly what one launch per tensor gives."""
    shapes = [(3, 5), (700,), (1,), (64, 65)] * 10 + [(0,)]  # 40 with elements: 2 launches
    params = [torch.randn(shape) for shape in shapes]
    grads = [torch.randn(shape) for shape in shapes]
    dparams = [p.to(device) for p in params]
    dgrads = [g.to(device) for g in grads]
    one_by_one = [p.clone().add_(g, alpha=-0.1) for p, g in zip(dparams, dgrads)]
    versions = [p._version for p in dparams]
    assert _launches(lambda: torch._foreach_add_(dparams, dgrads, alpha=-0.1)) == 2
    assert all(p._version > v for p, v in zip(dparams, versions))
    for p, g, single, listed in zip(params, grads, one_by_one, dparams):
        assert torch.equal(single.cpu(), listed.cpu())  # the same program, element for element
        _close(p.add(g, alpha=-0.1), listed)
    # Per-tensor scalars or a strided tensor split the list where they differ.
    assert _launches(lambda: torch._foreach_mul_(dparams[:3], [1.0, 2.0, 2.0])) == 2
    transposed = [torch.randn(4, 6, device=device).t(), torch.randn(6, 4, device=device)]
    assert _launches(lambda: torch._foreach_mul_(transposed, 2.0)) == 2
    results = torch._foreach_sqrt([g.abs() for g in dgrads])
    for g, r in zip(grads, results):
        _close(g.abs().sqrt(), r)
    assert not fallbacks()
