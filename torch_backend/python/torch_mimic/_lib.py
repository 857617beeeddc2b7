"""Shared machinery of the op registrations: the aten library for PrivateUse1, the generic CPU
fallback for inputs the device cannot compute, and launching the elementwise primitive."""
import functools
import numbers
import warnings

import torch

LIB = torch.library.Library("aten", "IMPL", "PrivateUse1")
_ops = torch.ops.mimic

# dtypes the device computes in; others (float64, complex) are stored only.
NATIVE_DTYPES = frozenset(
    {torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64, torch.uint8, torch.bool,
     torch.int8, torch.int16}
)
FLOAT_DTYPES = frozenset({torch.float32, torch.float16, torch.bfloat16})


class Unsupported(Exception):
    """Raised by a kernel wrapper for inputs the device cannot compute; the op then runs on the
    CPU through the counted fallback."""


def _overload_name(op):
    name = op._schema.name
    return name if op._overloadname == "default" else f"{name}.{op._overloadname}"


def cpu_fallback(op, args, kwargs):
    """Runs ``op`` on the CPU through the C++ boxed fallback (torch_backend/src/aten_core.cpp):
    counted, device tensors copied there and back, mutated arguments written back, and a crash
    of the CPU kernel raised as an error naming the op. Python reaches that boxed function through
    the dispatch key it also serves."""
    return op._op_dk(_FALLBACK_KEY, *args, **kwargs)


_FALLBACK_KEY = torch._C.DispatchKey.PrivateUse2


def impl(*names):
    """Registers the decorated function for the named aten overloads. Raising ``Unsupported``
    in it sends that call through the counted CPU fallback."""

    def register(fn):
        for name in names:
            packet, _, overload = name.partition(".")
            op = getattr(getattr(torch.ops.aten, packet), overload or "default")

            def kernel(*args, _fn=fn, _op=op, **kwargs):
                try:
                    return _fn(*args, **kwargs)
                except Unsupported:
                    return cpu_fallback(_op, args, kwargs)
                except RuntimeError as error:
                    # A device failure surfaces at the next synchronising call: name the op
                    # that met it (the driver's message names the error and the kernel).
                    if "MIMIC_ERROR_" not in str(error) or "while running aten::" in str(error):
                        raise
                    raise RuntimeError(f"{error} (while running {_overload_name(_op)})") from None

            functools.update_wrapper(kernel, fn)
            LIB.impl(name, kernel)
        return fn

    return register


# compute_dtype of the dtypes that compute in themselves or in float32, without the checks.
_COMPUTE = {torch.float32: torch.float32, torch.float16: torch.float32,
            torch.bfloat16: torch.float32, torch.int32: torch.int32, torch.int64: torch.int64,
            torch.uint8: torch.uint8, torch.bool: torch.uint8, torch.int8: torch.int8,
            torch.int16: torch.int16}


def require_native(*tensors):
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.dtype not in NATIVE_DTYPES:
            raise Unsupported()


def compute_dtype(dtype):
    """The dtype a kernel computes in: float for the half types (as PyTorch's CPU kernels do),
    uint8 for bool, the dtype itself otherwise."""
    if dtype in (torch.float16, torch.bfloat16):
        return torch.float32
    if dtype == torch.bool:
        return torch.uint8
    if dtype not in NATIVE_DTYPES:
        raise Unsupported()
    return dtype


_PYTHON_NUMBERS = (int, float, bool)


def is_scalar(x):
    """A Python number or a CPU 0-dim tensor: an operand passed as a kernel scalar."""
    if isinstance(x, torch.Tensor):
        return x.is_cpu and x.dim() == 0
    return type(x) in _PYTHON_NUMBERS or isinstance(x, numbers.Number)


def scalar_value(x):
    return x.item() if isinstance(x, torch.Tensor) else x


def _exact(value):
    """A scalar as the op schema's Scalar takes it: integers stay integers (exact beyond 2^53)."""
    if type(value) in (int, float, bool):
        return value
    return int(value) if isinstance(value, numbers.Integral) else float(value)


def launch(out, inputs, program, compute, scalars=(), key=(0, 0)):
    """Runs ``program`` (see torch_backend/ops/elementwise.h) over ``out``'s shape; inputs are
    broadcast to it. A zero-element output launches nothing."""
    require_native(out, *inputs)
    if out.numel() == 0:
        return out
    shape = out.shape
    expanded = [t if t.shape == shape else t.expand(shape) for t in inputs]
    _ops.elementwise(out, expanded, program, _COMPUTE.get(compute) or compute_dtype(compute),
                     [_exact(s) for s in scalars], key[0], key[1])
    return out


def empty(shape, dtype, device):
    return torch.empty(shape, dtype=dtype, device=device)


def resize_output(out, shape):
    """Resizes an out= tensor to ``shape`` as PyTorch's resize_output does: with its warning
    when the tensor held elements (PyTorch's test_out_warning checks it)."""
    shape = tuple(shape)
    if tuple(out.shape) != shape:
        if out.numel():
            warnings.warn(f"An output with one or more elements was resized since it had shape {list(out.shape)}, "
                          f"which does not match the required output shape {list(shape)}. This behavior is "
                          "deprecated, and in a future PyTorch release outputs will not be resized unless they "
                          "have zero elements. You can explicitly reuse an out tensor t by resizing it, "
                          "inplace, to zero elements with t.resize_(0).")
        out.resize_(shape)
    return out


def prepare_out(out, shape, dtype):
    """Resizes an out= tensor to ``shape`` as PyTorch's out= variants do, and checks its dtype
    can hold a ``dtype`` result."""
    if not torch.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype} can't be cast to the desired output type {out.dtype}")
    return resize_output(out, shape)
