"""addbmm on the device (ops_addbmm.py) against PyTorch's CPU, float32 and complex64: real and
complex beta/alpha, beta 0 (self ignored, NaN included), broadcast self, empty batches and
inner dimensions, non-contiguous and conjugate inputs, out= and in place, and backward.

Tolerance from the error bound of a sum of products: each result element is beta s + alpha
sum over b k products, whose rounding error is at most gamma_(b k + 2) times the same sum of
absolute values (Higham, 3.1), for each side, so the two differ by at most twice that; complex
products add a few ulps per part (Higham 3.6), hence a factor 4 there."""
import pytest
import torch

C64 = torch.complex64
DTYPES = [torch.float32, C64]


def _make(*shape, dtype, seed):
    return torch.randn(tuple(shape), dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _bound(self, batch1, batch2, beta, alpha):
    """2 gamma_(b k + 2) (|beta| |self| + |alpha| sum |batch1| |batch2|), elementwise."""
    b, n, k = batch1.shape
    magnitudes = torch.bmm(batch1.abs().double(), batch2.abs().double()).sum(0)
    total = abs(beta) * self.abs().double() + abs(alpha) * magnitudes
    eps = torch.finfo(torch.float32).eps
    factor = 4 if batch1.is_complex() else 1
    return factor * 2 * (b * k + 2) * eps * total + 1e-30


def _check(actual, expected, bound):
    actual = actual.cpu()
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    assert torch.all((actual - expected).abs().double() <= bound), (actual - expected).abs().max()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("self_shape,b,n,k,p", [
    ((3, 5), 4, 3, 2, 5), ((1,), 4, 3, 2, 5), ((), 2, 6, 7, 3), ((3, 5), 0, 3, 2, 5), ((3, 5), 4, 3, 0, 5),
    ((0, 5), 2, 0, 3, 5),
])
@pytest.mark.parametrize("beta,alpha", [(1, 1), (0.6, 0.2), (1 + 2j, 2 + 3j)])
def test_addbmm_matches_cpu(dtype, self_shape, b, n, k, p, beta, alpha, device, fallbacks):
    if not dtype.is_complex and isinstance(beta, complex):
        pytest.skip("complex scalars with float32 tensors: the CPU raises (test_calls_the_cpu_rejects_...)")
    s, b1, b2 = (_make(*shape, dtype=dtype, seed=i) for i, shape in enumerate((self_shape, (b, n, k), (b, k, p))))
    expected = torch.addbmm(s, b1, b2, beta=beta, alpha=alpha)
    actual = torch.addbmm(s.to(device), b1.to(device), b2.to(device), beta=beta, alpha=alpha)
    _check(actual, expected, _bound(s.expand(n, p), b1, b2, beta, alpha))
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_non_contiguous_conjugate_out_and_in_place(dtype, device, fallbacks):
    s = _make(5, 3, dtype=dtype, seed=0).mT  # [3, 5], column-major
    b1 = _make(4, 2, 3, dtype=dtype, seed=1).mT  # [4, 3, 2]
    b2 = _make(4, 2, 5, dtype=dtype, seed=2)[:, :, :]
    if dtype.is_complex:
        b1 = b1.conj()
    args = dict(beta=0.5, alpha=-1.5)
    expected = torch.addbmm(s, b1, b2, **args)
    bound = _bound(s, b1.resolve_conj(), b2, 0.5, 1.5)
    _check(torch.addbmm(s.to(device), b1.to(device), b2.to(device), **args), expected, bound)
    out = torch.empty(0, dtype=dtype, device=device)
    torch.addbmm(s.to(device), b1.to(device), b2.to(device), **args, out=out)
    _check(out, expected, bound)
    inplace = s.to(device).contiguous()
    inplace.addbmm_(b1.to(device), b2.to(device), **args)
    _check(inplace, expected, bound)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", DTYPES)
def test_beta_zero_ignores_self(dtype, device, fallbacks):
    s = torch.full((3, 4), float("nan"), dtype=dtype)
    b1, b2 = _make(2, 3, 5, dtype=dtype, seed=1), _make(2, 5, 4, dtype=dtype, seed=2)
    expected = torch.addbmm(s, b1, b2, beta=0, alpha=2)
    actual = torch.addbmm(s.to(device), b1.to(device), b2.to(device), beta=0, alpha=2)
    assert not actual.cpu().isnan().any()
    _check(actual, expected, _bound(torch.zeros(3, 4), b1, b2, 0, 2))
    assert fallbacks() == {}


def test_calls_the_cpu_rejects_raise_its_errors(device):
    cases = [
        (torch.randn(3, 5), torch.randn(4, 3, 2), torch.randn(3, 2, 5), {}),  # batch counts differ
        (torch.randn(3, 5), torch.randn(4, 3, 2), torch.randn(4, 3, 5), {}),  # inner sizes differ
        (torch.randn(2, 3, 5), torch.randn(4, 3, 2), torch.randn(4, 2, 5), {}),  # self not [n, p]
        (torch.randn(3, 5), torch.randn(4, 3, 2), torch.randn(4, 2, 5), {"alpha": 2 + 3j}),  # complex alpha
    ]
    for s, b1, b2, kwargs in cases:
        with pytest.raises(RuntimeError) as on_cpu:
            torch.addbmm(s, b1, b2, **kwargs)
        with pytest.raises(RuntimeError) as on_device:
            torch.addbmm(s.to(device), b1.to(device), b2.to(device), **kwargs)
        assert str(on_device.value) == str(on_cpu.value)


@pytest.mark.parametrize("dtype", DTYPES)
def test_backward(dtype, device, fallbacks):
    inputs = [_make(3, 5, dtype=dtype, seed=0), _make(4, 3, 2, dtype=dtype, seed=1), _make(4, 2, 5, dtype=dtype, seed=2)]
    weight = _make(3, 5, dtype=dtype, seed=3)
    grads = []
    for where in ("cpu", device):
        leaves = [t.to(where).requires_grad_() for t in inputs]
        total = (torch.addbmm(*leaves, beta=0.5, alpha=2) * weight.to(where)).sum()
        grads.append([g.cpu() for g in torch.autograd.grad(total.real if dtype.is_complex else total, leaves)])
    eps = torch.finfo(torch.float32).eps
    largest = max(t.abs().max().item() for t in inputs + [weight])
    for got, want in zip(*reversed(grads)):
        # Each gradient element is alpha (2) times a sum of at most 5 products of an input and
        # the weight: gamma_7 of 2 * 5 largest^2 for each side, 4 times that for complex.
        bound = 4 * 2 * 7 * eps * 2 * 5 * largest ** 2
        torch.testing.assert_close(got, want, rtol=0, atol=bound)
    assert fallbacks() == {}
