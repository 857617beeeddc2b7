"""Factory ops whose values follow from the element's position: linspace, logspace and eye, as
one elementwise launch over `idx` (the element's row-major index) each.

linspace and logspace count from `start` in the first half and back from `end` in the second,
as PyTorch's CPU kernels do, so that both ends are exact. logspace computes in float32 from
start, end and step as PyTorch's CPU kernel rounds them, and rounds once to bfloat16.

What runs on the CPU instead: integer and float64 outputs (PyTorch computes them from a double
step or in double, which the device cannot match), and float16/bfloat16 linspace, whose CPU
values depend on the host's vector width (its vector loop adds i * step to the first element of
each vector, in the half type) and differ from one rounding per element by far more than an ulp
near zero."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, impl, launch
from .ops_complex import linspace_complex64, logspace_complex64, real_parts

_F32 = torch.float32


def _typed(value, dtype):
    return torch.tensor(value, dtype=dtype)


def _check_steps(steps, out, dtypes):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if torch._debug_has_internal_overlap(out) == 1:  # 1: certainly overlaps, as PyTorch's check
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    if out.dtype not in dtypes:
        raise Unsupported()


def _resized(out, steps):
    if out.numel() != steps:
        out.resize_((steps,))
    return out


def _real(value):
    if isinstance(value, complex) or (isinstance(value, torch.Tensor) and value.is_complex()):
        raise Unsupported()
    return float(value)


# s0 start, s1 end, s2 step, s3 halfway, s4 steps - 1: start + step * i below halfway, else
# end - step * (steps - 1 - i).
_LINEAR = "idx s3 lt s0 s2 idx mul add s1 s2 s4 idx sub mul sub where"


def _linear_scalars(start, end, steps, dtype, step_dtype):
    """start and end as ``dtype`` holds them and the step as PyTorch's CPU kernel computes it:
    their difference in ``dtype``, divided in ``step_dtype``."""
    start, end = _typed(_real(start), dtype), _typed(_real(end), dtype)
    step = (end - start).to(step_dtype) / _typed(steps - 1, step_dtype)
    return [start.item(), end.item(), step.item(), steps // 2, steps - 1]


@impl("linspace.out")
def linspace_out(start, end, steps, *, out):
    _check_steps(steps, out, (_F32, torch.complex64))
    _resized(out, steps)
    if out.dtype == torch.complex64:
        return linspace_complex64(start, end, steps, out, _LINEAR)
    if steps == 1:
        return launch(out, [], "s0", _F32, [_real(start)])
    if steps > 1:
        launch(out, [], _LINEAR, _F32, _linear_scalars(start, end, steps, _F32, _F32))
    return out


@impl("logspace.out")
def logspace_out(start, end, steps, base=10.0, *, out):
    _check_steps(steps, out, FLOAT_DTYPES | {torch.complex64})
    _resized(out, steps)
    if out.dtype == torch.complex64:
        return logspace_complex64(start, end, steps, base, out, _LINEAR)
    if steps == 1:
        return launch(out, [], "s0 s1 pow", _F32, [base, _real(start)])
    if steps > 1:
        scalars = _linear_scalars(start, end, steps, out.dtype, torch.float64)
        launch(out, [], f"s5 {_LINEAR} pow", _F32, scalars + [base])
    return out


_EYE = "idx s0 div idx s0 rem eq"


def _eye(n, m, out):
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    if out.dtype == torch.bfloat16:
        raise RuntimeError("\"eye\" not implemented for 'BFloat16'")  # as PyTorch 1.13's CPU kernel
    out.resize_((n, m))
    # In int64: the row and column of a large matrix are not exact in a float compute type.
    if out.dtype == torch.complex64:
        if out.numel():
            torch.ops.mimic.elementwise_multi(list(real_parts(out)), [], [_EYE, "0"], torch.int64,
                                              [m])
        return out
    return launch(out, [], _EYE, torch.int64, [m])


@impl("eye.out")
def eye_out(n, *, out):
    return _eye(n, n, out)


@impl("eye.m_out")
def eye_m_out(n, m, *, out):
    return _eye(n, m, out)
