"""Scans on the device: cumsum, cumprod, logcumsumexp and cummax/cummin, on the scan primitive
(torch_backend/ops/scan.h: one launch, a sequential fold per lane in PyTorch's order). In 1.13
logcumsumexp, cummax and cummin are composite over the kernel ops _logcumsumexp,
_cummax_helper and _cummin_helper, which are registered here; their backward formulas
(cumprod_backward, cummaxmin_backward, logcumsumexp's) are composite or plain aten ops.

Float scans compute in float32 where PyTorch's CPU kernels accumulate float32 in double: the
results agree within float32's error bound, not bit for bit."""
import torch

from ._lib import NATIVE_DTYPES, Unsupported, empty, impl, prepare_out
from .ops_complex import by_parts, into

_ops = torch.ops.mimic

_INTEGRAL = frozenset({torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64})
_FLOATS_IN_F32 = frozenset({torch.float32, torch.float16, torch.bfloat16})


def wrap_dim(dim, rank):
    """dim made non-negative as maybe_wrap_dim does (a 0-dim tensor takes dims -1 and 0)."""
    span = max(rank, 1)
    if not -span <= dim < span:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-span}, {span - 1}], but got {dim})")
    return dim + span if dim < 0 else dim


def _require_device(*dtypes):
    if any(d not in NATIVE_DTYPES for d in dtypes):
        raise Unsupported()  # float64, int8, int16, complex: the CPU fallback computes them


def _check_cpu_dtype(dtype, kernel, floats_only=False):
    """The '"kernel" not implemented' errors of PyTorch 1.13's CPU scans: float16 for all of
    them, integers for logcumsumexp."""
    names = {torch.float16: "Half", torch.int32: "Int", torch.int64: "Long", torch.uint8: "Byte",
             torch.bool: "Bool", torch.int8: "Char", torch.int16: "Short"}
    if dtype == torch.float16 or (floats_only and dtype in _INTEGRAL):
        raise RuntimeError(f"\"{kernel}\" not implemented for '{names[dtype]}'")


def _scan_input(self, out_dtype):
    """self as the kernel reads it for an ``out_dtype`` result. PyTorch converts self to the
    result's dtype first; the kernel's own conversion (integers summed in int64, float16 and
    bfloat16 in float32) gives the same values where the result is an integer or float32, so
    only the other pairs take a conversion launch."""
    if self.dtype == out_dtype:
        return self
    if self.dtype in _INTEGRAL and out_dtype != torch.bool:
        return self
    if self.dtype in _FLOATS_IN_F32 and out_dtype == torch.float32:
        return self
    return self.to(out_dtype)


def complex_cumprod(self, dim):
    """The running products of complex64 ``self`` along ``dim`` by doubling (Hillis-Steele):
    after the step of span s every element holds the product of the 2s elements ending at it;
    ceil(log2 n) steps of one complex multiply each, on the device's complex pointwise ops."""
    result = self.clone(memory_format=torch.contiguous_format) if self.dim() else self.clone()
    n = result.shape[dim] if result.dim() else 1
    span = 1
    while span < n:
        later = result.narrow(dim, span, n - span)
        later.copy_(later * result.narrow(dim, 0, n - span))
        span *= 2
    return result


def _cumulative(kind, kernel, self, dim, dtype, out=None):
    dim = wrap_dim(dim, self.dim())
    if self.dtype == torch.complex64 and dtype in (None, torch.complex64) and \
            (out is None or out.dtype == torch.complex64):
        if kind == "sum":
            result = by_parts(lambda part: _cumulative(kind, kernel, part, dim, None), self)
        else:
            result = complex_cumprod(self, dim)
        return result if out is None else into(out, result)
    if out is None:
        out_dtype = dtype or (torch.int64 if self.dtype in _INTEGRAL else self.dtype)
    else:
        out_dtype = dtype or out.dtype
        if out.dtype != out_dtype:
            raise Unsupported()  # the CPU kernel's dtype error
    _require_device(self.dtype, out_dtype)
    _check_cpu_dtype(out_dtype, kernel)
    source = _scan_input(self, out_dtype)
    if out is None:
        out = empty(self.shape, out_dtype, self.device)
    else:
        prepare_out(out, self.shape, out_dtype)
    _ops.scan(out, None, source, dim, kind)
    return out


def _register_cumulative(name, kind, kernel):
    @impl(name)
    def functional(self, dim, *, dtype=None):
        return _cumulative(kind, kernel, self, dim, dtype)

    @impl(f"{name}.out")
    def out_variant(self, dim, *, dtype=None, out):
        return _cumulative(kind, kernel, self, dim, dtype, out)

    @impl(f"{name}_")
    def in_place(self, dim, *, dtype=None):
        if dtype is not None and dtype != self.dtype:
            raise Unsupported()  # the CPU kernel's dtype error
        return _cumulative(kind, kernel, self, dim, None, self)


_register_cumulative("cumsum", "sum", "cumsum_out_cpu")
_register_cumulative("cumprod", "prod", "cumprod_out_cpu")


def _logcumsumexp_into(out, self, dim):
    dim = wrap_dim(dim, self.dim())
    _require_device(self.dtype)
    _check_cpu_dtype(self.dtype, "logcumsumexp_out_cpu", floats_only=True)
    _ops.scan(out, None, self, dim, "logsumexp")
    return out


@impl("_logcumsumexp")
def logcumsumexp(self, dim):
    _require_device(self.dtype)
    return _logcumsumexp_into(empty(self.shape, self.dtype, self.device), self, dim)


@impl("_logcumsumexp.out")
def logcumsumexp_out(self, dim, *, out):
    if out.dtype != self.dtype:
        raise Unsupported()  # the CPU kernel's dtype error
    _require_device(self.dtype)
    prepare_out(out, self.shape, self.dtype)
    return _logcumsumexp_into(out, self, dim)


def _register_extreme(name, kind, kernel):
    @impl(name)
    def helper(self, values, indices, dim):
        # cummax/cummin (composite) sized values and indices and handled 0-dim inputs.
        if values.dtype != self.dtype or indices.dtype != torch.int64:
            raise Unsupported()
        _require_device(self.dtype)
        _check_cpu_dtype(self.dtype, kernel)
        _ops.scan(values, indices, self, wrap_dim(dim, self.dim()), kind)

    return helper


_register_extreme("_cummax_helper", "max", "cummax_cpu")
_register_extreme("_cummin_helper", "min", "cummin_cpu")
