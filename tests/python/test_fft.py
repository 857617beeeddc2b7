"""torch.fft on the device (torch_mimic/ops_fft.py over torch_backend/ops/fft.h) against a
complex128 reference on the CPU: fft/ifft, rfft/irfft, hfft/ihfft, fft2/fftn/rfftn/irfftn, every
norm, sizes 1 to 1024, batched, every dim, non-contiguous inputs, out=, backward through
autograd, other lengths (Bluestein's algorithm over the power-of-two kernel), lengths past one
workgroup's scratchpad (the four-step FFT), and complex128 (the CPU fallback).

Bound: a radix-2 FFT of length N = prod of the transformed lengths, in float32 with twiddles
accurate to u, is within log2(N) * eta * ||y||_2 of the exact transform y in the 2-norm, with
eta about 7u (Higham, Accuracy and Stability of Numerical Algorithms, 24.1); ||y||_2 =
sqrt(N) * ||x||_2 * scale, each element's error is at most the vector's, and rounding the
normalization and the result adds 2u of the element. ||x||_2 is taken over the whole input,
which bounds every batch's own.

Other lengths n go through Bluestein: x times the chirp (u), a transform of length m (the power
of two >= 2n - 1), a product with a spectrum of elements at most (2n - 1) / m <= 1, and an
unnormalized inverse transform of length m: the two transforms' bounds, the second carrying
the first's error through its norm sqrt(m), give (2 * 7 log2(m) + 4) * u * m * ||x||_2."""
import math

import pytest
import torch

import torch_mimic

U32 = 2.0 ** -24
NORMS = [None, "forward", "ortho"]


def _input(shape, dtype=torch.complex64, seed=0):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_complex:
        return torch.randn(shape, generator=g, dtype=torch.complex128).to(dtype)
    return torch.randn(shape, generator=g, dtype=torch.float64).to(dtype)


def _scale(norm, n, inverse):
    if norm == "ortho":
        return 1 / math.sqrt(n)
    by_n = (norm == "forward") != inverse  # "forward" scales the forward transform
    return 1 / n if by_n else 1.0


def _growth(n):
    """The bound's factor of u * ||x||_2 * scale for a transform of length n."""
    if n & (n - 1) == 0:
        return 7 * math.log2(n) * math.sqrt(n)
    m = 1 << (2 * n - 2).bit_length()
    return (14 * math.log2(m) + 4) * m


def _check(actual, x, reference, n, scale):
    """actual (on the device) against reference (complex128 CPU result), within the bound."""
    assert actual.device.type == torch_mimic.DEVICE_TYPE
    expected = reference(x.cpu().to(torch.complex128 if x.is_complex() else torch.float64))
    assert actual.shape == expected.shape
    assert actual.dtype == (torch.complex64 if expected.is_complex() else torch.float32)
    if expected.numel() == 0:
        return
    norm = x.cpu().to(torch.complex128).abs().pow(2).sum().sqrt().item()
    if x.is_complex() and not expected.is_complex():
        norm *= math.sqrt(2)  # a one-sided spectrum stands for up to twice its energy
    bound = (_growth(n) * norm * scale + 2 * expected.abs().max().item()) * U32
    error = (actual.cpu().to(expected.dtype) - expected).abs().max().item()
    assert error <= bound, f"error {error} above its bound {bound}"


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 8, 64, 1024])
def test_fft_and_ifft_match_the_exact_transform(device, fallbacks, n, norm):
    x = _input((3, n))
    for fn, inverse in ((torch.fft.fft, False), (torch.fft.ifft, True)):
        actual = fn(x.to(device), norm=norm)
        _check(actual, x, lambda t: fn(t, norm=norm), n, _scale(norm, n, inverse))
    assert fallbacks() == {}


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_batched_along_every_dim_and_non_contiguous(device, fallbacks, dim):
    x = _input((4, 8, 16))
    for source in (x, x.transpose(0, 2)):
        n = source.shape[dim]
        actual = torch.fft.fft(source.to(device), dim=dim)
        _check(actual, source, lambda t: torch.fft.fft(t, dim=dim), n, 1.0)
    strided = x.to(device)[:, ::2, :]  # a dim of stride 2 inside the batch
    actual = torch.fft.fft(strided, dim=-1)
    _check(actual, x[:, ::2, :], lambda t: torch.fft.fft(t, dim=-1), 16, 1.0)
    assert fallbacks() == {}


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [1, 2, 16, 512])
def test_rfft_irfft_and_their_round_trip(device, fallbacks, n, norm):
    x = _input((5, n), torch.float32)
    spectrum = torch.fft.rfft(x.to(device), norm=norm)
    _check(spectrum, x, lambda t: torch.fft.rfft(t, norm=norm), n, _scale(norm, n, False))
    back = torch.fft.irfft(spectrum, n=n, norm=norm)
    # irfft's input is the device's rfft: compare with the exact irfft of that input.
    _check(back, spectrum, lambda t: torch.fft.irfft(t, n=n, norm=norm), n, _scale(norm, n, True))
    # The round trip: rfft's error carried through irfft (whose norm on a one-sided spectrum is
    # at most sqrt(2n) times its scale) plus irfft's own; the scales multiply to 1/n.
    error = (back.cpu().double() - x.double()).abs().max().item()
    norm_x = x.double().norm().item()
    assert error <= (1 + math.sqrt(2)) * (7 * math.log2(max(n, 1)) + 2) * norm_x * U32
    assert fallbacks() == {}


def test_hfft_ihfft_and_the_multidimensional_transforms(device, fallbacks):
    x = _input((4, 8, 16))
    r = _input((4, 8, 16), torch.float32)
    cases = [
        (torch.fft.fft2, x, 128, 1.0),
        (lambda t: torch.fft.fftn(t, dim=(0, 2), norm="ortho"), x, 64, 1 / 8),
        (lambda t: torch.fft.ifftn(t), x, 512, 1 / 512),
        (lambda t: torch.fft.rfftn(t), r, 512, 1.0),
        (lambda t: torch.fft.rfft2(t, norm="forward"), r, 128, 1 / 128),
        (lambda t: torch.fft.ihfft(t), r, 16, 1 / 16),
        (lambda t: torch.fft.hfft(t, n=16), x[..., :9], 16, 1.0),
        (lambda t: torch.fft.irfftn(t, s=(8, 16)), x[..., :9], 128, 1 / 128),
        (lambda t: torch.fft.irfft2(t, s=(8, 16), norm="ortho"), x[..., :9], 128, 1 / math.sqrt(128)),
    ]
    for fn, source, n, scale in cases:
        _check(fn(source.to(device)), source, fn, n, scale)
    assert fallbacks() == {}


def test_out_variants(device, fallbacks):
    x = _input((2, 32))
    out = torch.empty(0, dtype=torch.complex64, device=device)
    torch.fft.fft(x.to(device), out=out)
    _check(out, x, torch.fft.fft, 32, 1.0)
    r = _input((2, 32), torch.float32)
    real_out = torch.empty(0, dtype=torch.float32, device=device)
    torch.fft.irfft(x[:, :17].to(device), n=32, out=real_out)
    _check(real_out, x[:, :17], lambda t: torch.fft.irfft(t, n=32), 32, 1 / 32)
    spectrum = torch.empty(0, dtype=torch.complex64, device=device)
    torch.fft.rfft(r.to(device), out=spectrum)
    _check(spectrum, r, torch.fft.rfft, 32, 1.0)
    assert fallbacks() == {}
    message = "Expected all tensors to be on the same device"
    for fn, source, out in ((torch.fft.fft, x, torch.empty(0, dtype=torch.complex64)),
                            (torch.fft.fft, x[:, :12], torch.empty(0, dtype=torch.complex64)),
                            (torch.fft.rfft, r, torch.empty(0, dtype=torch.complex64)),
                            (torch.fft.irfft, x, torch.empty(0))):
        with pytest.raises(RuntimeError, match=message):
            fn(source.to(device), out=out)


def test_backward_matches_cpu(device, fallbacks):
    x = _input((3, 16), torch.float32)
    weights = _input((3, 9), torch.complex64, seed=1)

    def loss(t, w):
        spectrum = torch.fft.rfft(t, norm="ortho")
        mixed = torch.fft.ifft(spectrum * w)
        return torch.view_as_real(mixed).pow(2).sum()

    mine = x.to(device).requires_grad_()
    loss(mine, weights.to(device)).backward()
    ref = x.double().requires_grad_()
    loss(ref, weights.to(torch.complex128)).backward()
    # The forward and backward passes are four transforms of length 16, each within its bound
    # relative to the norm of what it transforms (at most |w|^2 and a factor 2 of the one-sided
    # spectra times the norms of x and of the gradient).
    scale = ref.grad.abs().max().item() + x.double().norm().item()
    bound = 4 * (7 * 4 + 2) * math.sqrt(16) * scale * weights.abs().max().item() ** 2 * U32
    error = (mine.grad.cpu().double() - ref.grad).abs().max().item()
    assert error <= bound, f"error {error} above {bound}"


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [3, 5, 6, 7, 12, 31, 100])
def test_other_lengths_by_bluestein(device, fallbacks, n, norm):
    x = _input((3, n))
    r = _input((3, n), torch.float32)
    half = x[:, :n // 2 + 1]
    cases = [
        (lambda t: torch.fft.fft(t, norm=norm), x, _scale(norm, n, False)),
        (lambda t: torch.fft.ifft(t, norm=norm), x, _scale(norm, n, True)),
        (lambda t: torch.fft.rfft(t, norm=norm), r, _scale(norm, n, False)),
        (lambda t: torch.fft.irfft(t, n=n, norm=norm), half, _scale(norm, n, True)),
        (lambda t: torch.fft.hfft(t, n=n, norm=norm), half, _scale(norm, n, False)),
    ]
    for fn, source, scale in cases:
        _check(fn(source.to(device)), source, fn, n, scale)
    mixed = _input((5, 6, 8))  # Bluestein and the direct kernel in one fftn
    _check(torch.fft.fftn(mixed.to(device)), mixed, torch.fft.fftn, 240, 1.0)
    assert fallbacks() == {}


def test_lengths_past_the_scratchpad_in_four_steps(device, fallbacks):
    """Powers of two longer than one workgroup holds (and Bluestein's m beyond it) run as two
    rounds of shorter transforms; each element's error is then within the sum of the two
    rounds' bounds, below the bound of one transform of the whole length times 2."""
    limit = torch.ops.mimic.fft_max_length(0)
    n = 2 * limit
    x = _input((2, n))
    _check(torch.fft.fft(x.to(device)), x, torch.fft.fft, n, 2.0)
    _check(torch.fft.ifft(x.to(device), norm="ortho"), x,
           lambda t: torch.fft.ifft(t, norm="ortho"), n, 2 / math.sqrt(n))
    r = _input((1, n), torch.float32)
    _check(torch.fft.rfft(r.to(device)), r, torch.fft.rfft, n, 2.0)
    half = x[:1, :n // 2 + 1]
    _check(torch.fft.irfft(half.to(device), n=n), half, lambda t: torch.fft.irfft(t, n=n), n, 2 / n)
    odd = limit + 3  # Bluestein's m = 4 * limit
    y = x[:, :odd]
    _check(torch.fft.fft(y.to(device)), y, torch.fft.fft, odd, 1.0)
    assert fallbacks() == {}


def test_complex128_takes_the_fallback(device, fallbacks):
    x = _input((2, 8), torch.complex128)
    torch.testing.assert_close(torch.fft.fft(x.to(device)).cpu(), torch.fft.fft(x))
    assert "aten::_fft_c2c" in fallbacks()


def test_empty_batch_launches_nothing_and_keeps_its_shape(device, fallbacks):
    x = torch.empty((0, 8), dtype=torch.complex64, device=device)
    assert torch.fft.fft(x).shape == (0, 8)
    assert torch.fft.rfft(torch.empty((0, 8), device=device)).shape == (0, 5)
    assert fallbacks() == {}


def test_tables_are_uploaded_again_after_a_device_reset(device, fallbacks):
    """The twiddle and chirp tables live on the device: a reset loses them, not the op."""
    inputs = {12: _input((2, 12)), 16: _input((2, 16))}  # Bluestein, the kernel directly
    for x in inputs.values():
        torch.fft.fft(x.to(device))  # uploads their tables
    torch_mimic.reset_device(0)
    for n, x in inputs.items():
        _check(torch.fft.fft(x.to(device)), x, torch.fft.fft, n, 1.0)
    assert fallbacks() == {}
