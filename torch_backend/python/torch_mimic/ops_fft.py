"""torch.fft on the device: the kernel ops _fft_c2c, _fft_r2c and _fft_c2r (and their out=
variants) that PyTorch 1.13 lowers every torch.fft function and stft/istft to, on the
torch.ops.mimic.fft primitive (torch_backend/ops/fft.h: radix-2, one launch per transformed
dim). A transform over several dims is one launch per dim, each normalized by its own length.

Power-of-two lengths that fit one workgroup's scratchpad (fft_max_length) run on the kernel
directly; longer ones as the four-step FFT: n = n1 * n2, x viewed as [n1][n2], length-n1
transforms down the columns, a product with the twiddles w_n^(k1 * j2), length-n2 transforms
along the rows, and the result read transposed. Other lengths n run as Bluestein's chirp
z-transform: with the chirp c_k = exp(-+ i pi k^2 / n), X_j = c_j sum_k (x_k c_k)
conj(c_{j-k}), a circular convolution of length m (a power of two >= 2n - 1) computed as two
power-of-two transforms and a product with the transform of the zero-padded conj(c). Lengths
beyond fft_max_length squared, complex128 and float64 take the counted CPU fallback.

Tables, computed on the host in double and rounded to float32 once, uploaded once and kept per
device like a cuFFT plan: the kernel's twiddles per length and direction
(torch.ops.mimic.fft_twiddles), and Bluestein's chirps (k^2 reduced mod 2n in integers) and
the convolution's spectrum (divided by m) per length, direction and normalization, and the
four-step twiddles per length and direction."""
import functools
import math

import torch

from ._device import current_device
from ._lib import Unsupported, impl, prepare_out

_ops = torch.ops.mimic
_C64 = torch.complex64
_F32 = torch.float32

_twiddle_tables = {}  # (device index, n, forward) -> the table on that device
_chirp_tables = {}  # Bluestein's tables, the four-step twiddles and the c2r weights
_max_lengths = {}  # device index -> the longest length the kernel takes
_RESET_ERROR = "was lost when torch_mimic.reset_device"


def _index(device):
    return device.index if device.index is not None else current_device()


def _power_of_two(n):
    return n > 0 and n & (n - 1) == 0


def _convolution_length(n):
    """Bluestein's m: the power of two >= 2n - 1."""
    return 1 << (2 * n - 2).bit_length()


def _max_length(device):
    index = _index(device)
    if index not in _max_lengths:
        _max_lengths[index] = _ops.fft_max_length(index)
    return _max_lengths[index]


def _fits(device, n):
    """Whether the device computes a length-n transform (directly, in four steps or by
    Bluestein)."""
    if n < 1:
        return False
    return (n if _power_of_two(n) else _convolution_length(n)) <= _max_length(device) ** 2


def _twiddles(device, n, forward):
    key = (_index(device), n, forward)
    table = _twiddle_tables.get(key)
    if table is None:
        table = _ops.fft_twiddles(n, forward).to(device)
        _twiddle_tables[key] = table
    return table


def _cached(key, make):
    table = _chirp_tables.get(key)
    if table is None:
        table = _chirp_tables[key] = make()
    return table


def _scale(normalization, n):
    """fft_norm_mode: 0 none, 1 by 1/sqrt(n), 2 by 1/n."""
    return (1.0, 1.0 / math.sqrt(n), 1.0 / n)[normalization]


def _kernel(out, source, dim, n, forward, scale):
    _ops.fft(out, source, _twiddles(out.device, n, forward), dim, n, scale)


def _tables_survive_resets(kernel):
    """Runs ``kernel`` again with fresh tables when the device was reset since they were
    uploaded (torch_mimic.reset_device): their memory is gone then. An input made before the
    reset raises the same error again, naming the reset."""

    @functools.wraps(kernel)
    def run(*args, **kwargs):
        try:
            return kernel(*args, **kwargs)
        except RuntimeError as error:
            if _RESET_ERROR not in str(error) or not (_twiddle_tables or _chirp_tables):
                raise
            _twiddle_tables.clear()
            _chirp_tables.clear()
            return kernel(*args, **kwargs)

    return run


def _c2r_weights(rows, n):
    """The weights of a one-sided spectrum's rows in a real inverse transform of length n: 1
    for rows 0 and n/2, 2 for the others (each stands for its conjugate row too)."""
    weights = torch.full((rows,), 2.0, dtype=torch.float64)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[n // 2] = 1.0
    return weights


def _bluestein_tables(device, n, forward, scale, weighted):
    """complex64 on the device: the chirp the input is multiplied by (times the c2r weights
    of a one-sided spectrum's rows when ``weighted``), the spectrum of the zero-padded
    conj(chirp) divided by m, and the chirp times ``scale`` for the output."""
    def make():
        m = _convolution_length(n)
        sign = -1.0 if forward else 1.0
        k = torch.arange(n, dtype=torch.int64)
        angle = (k * k % (2 * n)).to(torch.float64) * (sign * math.pi / n)
        chirp = torch.polar(torch.ones(n, dtype=torch.float64), angle)
        padded = torch.zeros(m, dtype=torch.complex128)
        padded[:n] = chirp.conj()
        padded[m - n + 1:] = chirp.conj()[1:].flip(0)
        spectrum = torch.fft.fft(padded) / m
        inward = chirp
        if weighted:
            rows = n // 2 + 1
            inward = chirp[:rows] * _c2r_weights(rows, n)
        return tuple(t.to(_C64).to(device) for t in (inward, spectrum, chirp * scale))

    return _cached(("bluestein", _index(device), n, forward, scale, weighted), make)


def _along(table, dim, rank):
    return table.view(list(table.shape) + [1] * (rank - table.dim() - dim))


def _four_step_twiddles(device, n1, n2, forward):
    """w_n^(k1 * j2) as [n1][n2] complex64, n = n1 * n2 (k1 * j2 reduced mod n in integers)."""
    def make():
        n = n1 * n2
        exponent = torch.arange(n1).view(n1, 1) * torch.arange(n2).view(1, n2) % n
        angle = exponent.to(torch.float64) * ((-2.0 if forward else 2.0) * math.pi / n)
        return torch.polar(torch.ones_like(angle), angle).to(_C64).to(device)

    return _cached(("four-step", _index(device), n1, n2, forward), make)


def _power_of_two_transform(out, source, dim, n, forward, scale):
    """The length-n complex transform along dim, n a power of two: one kernel launch when n
    fits, else the four steps (their transforms as long as fits, then what remains)."""
    limit = _max_length(out.device)
    if n <= limit:
        _kernel(out, source, dim, n, forward, scale)
        return
    n1 = limit
    n2 = n // n1
    shape = list(source.shape)
    split = shape[:dim] + [n1, n2] + shape[dim + 1:]
    columns = torch.empty(split, dtype=_C64, device=out.device)
    _power_of_two_transform(columns, source.reshape(split), dim, n1, forward, 1.0)
    columns.mul_(_along(_four_step_twiddles(out.device, n1, n2, forward), dim, len(split)))
    _power_of_two_transform(columns, columns, dim + 1, n2, forward, scale)
    # X[k1 + n1 * k2] is columns[k1][k2]: out viewed as [n2][n1] takes it transposed.
    out.unflatten(dim, (n2, n1)).copy_(columns.transpose(dim, dim + 1))


def _weights(device, rows, n):
    def make():
        return _c2r_weights(rows, n).to(_C64).to(device)

    return _cached(("weights", _index(device), rows, n), make)


def _bluestein(source, dim, n, forward, scale, weighted=False):
    """The length-n transform along dim of complex64 ``source`` (whose rows past its own along
    dim are zeros), times ``scale``, as a new complex64 tensor."""
    inward, spectrum, outward = _bluestein_tables(source.device, n, forward, scale, weighted)
    rank = source.dim()
    m = _convolution_length(n)
    rows = source.shape[dim]
    shape = list(source.shape)
    shape[dim] = m
    work = torch.zeros(shape, dtype=_C64, device=source.device)
    work.narrow(dim, 0, rows).copy_(source * _along(inward[:rows], dim, rank))
    _power_of_two_transform(work, work, dim, m, True, 1.0)
    work.mul_(_along(spectrum, dim, rank))
    _power_of_two_transform(work, work, dim, m, False, 1.0)
    return work.narrow(dim, 0, n) * _along(outward, dim, rank)


def _full_transform(source, dim, n, forward, scale, weighted=False):
    """The length-n complex transform along dim of complex64 ``source`` (whose rows past its
    own are zeros; times the c2r weights when ``weighted``), times scale, as a new tensor."""
    if not _power_of_two(n):
        return _bluestein(source, dim, n, forward, scale, weighted)
    rows = source.shape[dim]
    shape = list(source.shape)
    shape[dim] = n
    if rows < n or weighted:
        padded = torch.zeros(shape, dtype=_C64, device=source.device)
        rows_of = padded.narrow(dim, 0, rows)
        if weighted:
            torch.mul(source, _along(_weights(source.device, rows, n), dim, source.dim()),
                      out=rows_of)
        else:
            rows_of.copy_(source)
        source = padded
    out = torch.empty(shape, dtype=_C64, device=source.device)
    _power_of_two_transform(out, source, dim, n, forward, scale)
    return out


def _transform(out, source, dim, n, forward, normalization):
    """The complex length-n transform along dim of complex64 source into out (which may be
    source itself)."""
    scale = _scale(normalization, n)
    if _power_of_two(n):
        _power_of_two_transform(out, source, dim, n, forward, scale)
    else:
        out.copy_(_bluestein(source, dim, n, forward, scale))


def _as_complex(x):
    z = torch.zeros(x.shape, dtype=_C64, device=x.device)
    torch.view_as_real(z).select(-1, 0).copy_(x)
    return z


def _dims(self, dim):
    rank = self.dim()
    dims = [d + rank if d < 0 else d for d in dim]
    if not dims or any(not 0 <= d < rank for d in dims):
        raise Unsupported()  # the CPU kernel's errors
    return dims


def _require(self, dtype, dims, lengths):
    if self.dtype != dtype or self.is_neg():
        raise Unsupported()  # complex128, float64: the fallback computes them
    if any(not _fits(self.device, n) for n in lengths):
        raise Unsupported()  # longer than the four steps reach


def _check_out(self, out, dtype):
    """out= on the input's device (the CPU kernels' error otherwise), of the result's dtype
    (else the fallback gives the CPU kernel's error), resized as out= variants are."""
    if out.device != self.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {out.device}!")
    if out.dtype != dtype:
        raise Unsupported()


def _c2c_into(out, self, dims, normalization, forward):
    """c2c along every dim of ``dims``: the first from self into out, the others in place."""
    source = self
    for d in dims:
        _transform(out, source, d, self.shape[d], forward, normalization)
        source = out
    return out


def _c2c_source(self):
    if self.is_conj():
        return self.resolve_conj()
    return self


@_tables_survive_resets
def _c2c(self, dim, normalization, forward, out=None):
    dims = _dims(self, dim)
    _require(self, _C64, dims, [self.shape[d] for d in dims])
    if out is None:
        out = torch.empty(self.shape, dtype=_C64, device=self.device)
    else:
        _check_out(self, out, _C64)
        prepare_out(out, self.shape, _C64)
    if self.numel() == 0:
        return out
    return _c2c_into(out, _c2c_source(self), dims, normalization, forward)


@impl("_fft_c2c")
def fft_c2c(self, dim, normalization, forward):
    return _c2c(self, dim, normalization, forward)


@impl("_fft_c2c.out")
def fft_c2c_out(self, dim, normalization, forward, *, out):
    return _c2c(self, dim, normalization, forward, out)


@_tables_survive_resets
def _r2c(self, dim, normalization, onesided, out=None):
    dims = _dims(self, dim)
    _require(self, _F32, dims, [self.shape[d] for d in dims])
    last = dims[-1]
    n = self.shape[last]
    shape = list(self.shape)
    if onesided:
        shape[last] = n // 2 + 1
    if out is None:
        out = torch.empty(shape, dtype=_C64, device=self.device)
    else:
        _check_out(self, out, _C64)
        prepare_out(out, shape, _C64)
    if self.numel() == 0:
        return out
    if _power_of_two(n) and n <= _max_length(self.device):
        _kernel(out, self, last, n, True, _scale(normalization, n))
    else:
        full = _full_transform(_as_complex(self), last, n, True, _scale(normalization, n))
        out.copy_(full.narrow(last, 0, shape[last]))
    return _c2c_into(out, out, dims[:-1], normalization, True)


@impl("_fft_r2c")
def fft_r2c(self, dim, normalization, onesided):
    return _r2c(self, dim, normalization, onesided)


@impl("_fft_r2c.out")
def fft_r2c_out(self, dim, normalization, onesided, *, out):
    return _r2c(self, dim, normalization, onesided, out)


@_tables_survive_resets
def _c2r(self, dim, normalization, last_dim_size, out=None):
    dims = _dims(self, dim)
    last = dims[-1]
    rows = last_dim_size // 2 + 1
    _require(self, _C64, dims, [self.shape[d] for d in dims[:-1]] + [last_dim_size])
    if self.shape[last] < rows:
        raise Unsupported()  # the CPU kernel's error
    shape = list(self.shape)
    shape[last] = last_dim_size
    if out is None:
        out = torch.empty(shape, dtype=_F32, device=self.device)
    else:
        _check_out(self, out, _F32)
        prepare_out(out, shape, _F32)
    if out.numel() == 0:
        return out
    spectrum = self.narrow(last, 0, rows)
    # The conjugate of a spectrum transforms to the same real signal as the spectrum itself
    # taken forward (Re(conj(z)) = Re(z)): a conjugate view (hfft's) needs no copy then.
    forward = spectrum.is_conj()
    if forward:
        spectrum = spectrum.conj()
    if dims[:-1]:
        partial = torch.empty(spectrum.shape, dtype=_C64, device=self.device)
        spectrum = _c2c_into(partial, spectrum, dims[:-1], normalization, forward)
    n = last_dim_size
    if _power_of_two(n) and n <= _max_length(self.device):
        _kernel(out, spectrum, last, n, forward, _scale(normalization, n))
    else:
        # Re(sum over all n rows) = Re(sum over the one-sided rows, each but row 0 and row n/2
        # counted twice): the rows past them are the conjugates of rows n/2 - 1 .. 1.
        full = _full_transform(spectrum, last, n, forward, _scale(normalization, n), weighted=True)
        out.copy_(torch.view_as_real(full).select(-1, 0))
    return out


@impl("_fft_c2r")
def fft_c2r(self, dim, normalization, last_dim_size):
    return _c2r(self, dim, normalization, last_dim_size)


@impl("_fft_c2r.out")
def fft_c2r_out(self, dim, normalization, last_dim_size, *, out):
    return _c2r(self, dim, normalization, last_dim_size, out)
