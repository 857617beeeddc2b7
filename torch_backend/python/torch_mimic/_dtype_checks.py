"""The dtype checks of PyTorch's CPU kernels, as the long-tail ops on the device repeat them:
dtypes the CPU kernel does not take raise its error, float64 (which the device only stores)
takes the counted CPU fallback."""
import torch

from ._lib import Unsupported

_TYPE_NAMES = {torch.float16: "Half", torch.bfloat16: "BFloat16", torch.float32: "Float", torch.float64: "Double",
               torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
               torch.uint8: "Byte", torch.bool: "Bool", torch.complex64: "ComplexFloat",
               torch.complex128: "ComplexDouble", torch.complex32: "ComplexHalf"}


def type_name(dtype):
    """The dtype as PyTorch's error messages name it (c10::toString)."""
    return _TYPE_NAMES.get(dtype, str(dtype))


def check_dtype(x, kernel, dtypes):
    """Raises PyTorch's '"kernel" not implemented for' error for a dtype outside ``dtypes``,
    Unsupported for float64 and complex128 (the CPU fallback computes them)."""
    if x.dtype in (torch.float64, torch.complex128, torch.complex64):
        raise Unsupported()
    if x.dtype not in dtypes:
        raise RuntimeError(f"\"{kernel}\" not implemented for '{type_name(x.dtype)}'")
