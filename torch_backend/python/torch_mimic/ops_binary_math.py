"""Binary pointwise math that the op table (torch_backend/aten/op_table.cpp) does not hold, for
every dtype the device computes in: atan2, copysign, fmax/fmin, heaviside, xlogy,
special_xlog1py and the integer bitwise shifts as elementwise programs with PyTorch's type
promotion, and rsub, hardtanh (with
its backward) and floor_divide of floats as the device's own sub, clamp and floor division with
the checks of PyTorch's CPU kernels. Half types compute in float32 and round once; float64,
int8/int16 and complex operands take the counted CPU fallback (launch raises Unsupported)."""
import torch

from ._dtype_checks import type_name
from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, prepare_out
from .ops_complex import _ANGLE, _ATAN_RATIO, _ATAN_REDUCED, _ATAN_REDUCED_VALUE
from .ops_pointwise import _run

_F32 = torch.float32


def _promoted(self, other, to_float):
    dtype = torch.result_type(self, other)
    if to_float and not (dtype.is_floating_point or dtype.is_complex):
        return torch.get_default_dtype()
    return dtype


def _binary(template, self, other, to_float, out=None, inplace=None):
    return _run(template, [self, other], _promoted(self, other, to_float),
                _promoted(self, other, to_float), out=out, inplace=inplace)


# --- atan2: the Cephes atanf of ops_complex (angle(x + iy) = atan2(y, x)) -----------------------


def _on_device(t, device):
    return t.to(device) if isinstance(t, torch.Tensor) and t.device != device else t


def _atan2_into(target, self, other):
    if target.numel() == 0:
        return target
    shape = target.shape
    x, y = (_on_device(t, target.device).expand(shape) for t in (other, self))
    temporaries = [empty(shape, _F32, target.device) for _ in range(3)]
    programs = [_ATAN_RATIO, _ATAN_REDUCED, _ATAN_REDUCED_VALUE, _ANGLE]
    torch.ops.mimic.elementwise_multi(temporaries + [target], [x, y], programs, _F32, [])
    return target


_REAL = frozenset({torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int64,
                   torch.uint8, torch.bool})


def _not_implemented(kernel, dtype):
    """PyTorch 1.13's CPU error for a dtype its kernel does not take."""
    return RuntimeError(f"\"{kernel}\" not implemented for '{type_name(dtype)}'")


def _atan2_operands(self, other):
    dtype = _promoted(self, other, True)
    if dtype not in FLOAT_DTYPES or any(t.dtype not in _REAL for t in (self, other)):
        raise Unsupported()
    if dtype == torch.float16:
        raise _not_implemented("atan2_cpu", dtype)
    return dtype, torch.broadcast_shapes(self.shape, other.shape)


@impl("atan2")
def atan2(self, other):
    dtype, shape = _atan2_operands(self, other)
    device = other.device if self.is_cpu else self.device
    return _atan2_into(empty(shape, dtype, device), self, other)


@impl("atan2.out")
def atan2_out(self, other, *, out):
    dtype, shape = _atan2_operands(self, other)
    if out.dtype not in FLOAT_DTYPES:
        raise Unsupported()  # the CPU's casting error, or float64
    if not torch.can_cast(dtype, out.dtype):
        raise RuntimeError(f"result type {dtype} can't be cast to the desired output type "
                           f"{out.dtype}")
    return _atan2_into(prepare_out(out, shape, out.dtype), self, other)


@impl("atan2_")
def atan2_(self, other):
    dtype, shape = _atan2_operands(self, other)
    if self.dtype not in FLOAT_DTYPES:
        raise RuntimeError(f"result type {dtype} can't be cast to the desired output type "
                           f"{self.dtype}")
    if shape != self.shape:
        raise RuntimeError(f"output with shape {list(self.shape)} doesn't match the broadcast "
                           f"shape {list(shape)}")
    return _atan2_into(self, self, other.clone() if other is self else other)


# --- copysign, fmax, fmin, heaviside ---------------------------------------------------------

# |self| with other's sign bit: 1 / other is negative for negative numbers and -0.
_COPYSIGN = "1 {1} div 0 lt {0} abs neg {0} abs where"
# The other operand where one is NaN (ints never are); the max or min otherwise.
_FMAX = "{0} {0} ne {1} {1} {1} ne {0} {0} {1} max where where"
_FMIN = "{0} {0} ne {1} {1} {1} ne {0} {0} {1} min where where"
# values where self == 0, else self > 0 (NaN gives 0, as the CPU's comparison does).
_HEAVISIDE = "{0} 0 eq {1} {0} 0 gt where"


@impl("copysign.Tensor")
def copysign(self, other):
    return _binary(_COPYSIGN, self, other, True)


@impl("copysign.out")
def copysign_out(self, other, *, out):
    return _binary(_COPYSIGN, self, other, True, out=out)


@impl("copysign_.Tensor")
def copysign_(self, other):
    return _binary(_COPYSIGN, self, other, True, inplace=self)


@impl("fmax")
def fmax(self, other):
    return _binary(_FMAX, self, other, False)


@impl("fmax.out")
def fmax_out(self, other, *, out):
    return _binary(_FMAX, self, other, False, out=out)


@impl("fmin")
def fmin(self, other):
    return _binary(_FMIN, self, other, False)


@impl("fmin.out")
def fmin_out(self, other, *, out):
    return _binary(_FMIN, self, other, False, out=out)


def _heaviside_check(self, values):
    if self.dtype != values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")


@impl("heaviside")
def heaviside(self, values):
    _heaviside_check(self, values)
    return _binary(_HEAVISIDE, self, values, False)


@impl("heaviside.out")
def heaviside_out(self, values, *, out):
    _heaviside_check(self, values)
    return _binary(_HEAVISIDE, self, values, False, out=out)


@impl("heaviside_")
def heaviside_(self, values):
    _heaviside_check(self, values)
    return _binary(_HEAVISIDE, self, values, False, inplace=self)


# --- xlogy and xlog1py -----------------------------------------------------------------------

# NaN where other is NaN, 0 where self is 0, else self * log(other) (PyTorch's CPU kernel).
_XLOGY = "{1} {1} ne {1} {0} 0 eq 0 {0} {1} log mul where where"
# log1p(y) accurate near 0 without a log1p instruction: with u = 1 + y rounded, log(u) y / (u - 1)
# (exact where u == 1: y itself); beyond |y| > 1, log(u) alone is accurate to the float's
# precision (and right for u = inf).
_U = "{1} 1 add"
_LOG1P = (f"{{1}} abs 1 gt {_U} log {_U} 1 eq {{1}} {_U} log {{1}} mul {_U} 1 sub div where "
          f"where")
_XLOG1PY = f"{{1}} {{1}} ne {{1}} {{0}} 0 eq 0 {{0}} {_LOG1P} mul where where"


@impl("xlogy.Tensor")
def xlogy(self, other):
    return _binary(_XLOGY, self, other, True)


@impl("xlogy.OutTensor")
def xlogy_out(self, other, *, out):
    return _binary(_XLOGY, self, other, True, out=out)


@impl("xlogy_.Tensor")
def xlogy_(self, other):
    return _binary(_XLOGY, self, other, True, inplace=self)


@impl("special_xlog1py")
def xlog1py(self, other):
    return _binary(_XLOG1PY, self, other, True)


@impl("special_xlog1py.out")
def xlog1py_out(self, other, *, out):
    return _binary(_XLOG1PY, self, other, True, out=out)


# --- rsub, hardtanh, floor_divide: the device's sub, clamp and floor division -------------------


@impl("rsub.Tensor")
def rsub(self, other, *, alpha=1):
    """other - alpha self: sub's checks (bool operands, alpha's type) and promotion."""
    return torch.sub(other, self, alpha=alpha)


def _hardtanh_bounds(self, min_val, max_val):
    if self.dtype == torch.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if self.dtype == torch.float16:
        raise _not_implemented("clamp_scalar_cpu", self.dtype)
    if self.dtype.is_floating_point or self.dtype.is_complex:
        return min_val, max_val
    # Integer bounds do not promote: they are truncated to integers first.
    low, high = int(min_val), int(max_val)
    if self.dtype == torch.uint8 and (low < 0 or high < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    return low, high


@impl("hardtanh")
def hardtanh(self, min_val=-1, max_val=1):
    return torch.clamp(self, *_hardtanh_bounds(self, min_val, max_val))


@impl("hardtanh.out")
def hardtanh_out(self, min_val=-1, max_val=1, *, out):
    return torch.clamp(self, *_hardtanh_bounds(self, min_val, max_val), out=out)


@impl("hardtanh_")
def hardtanh_(self, min_val=-1, max_val=1):
    return self.clamp_(*_hardtanh_bounds(self, min_val, max_val))


# The gradient is zero where self is at or beyond a bound (NaN passes it through).
_HARDTANH_BACKWARD = "{1} {2} le {1} {3} ge or 0 {0} where"


def _hardtanh_backward_dtype(grad_output, self):
    dtype = _promoted(grad_output, self, False)
    if dtype in (torch.float16, torch.bfloat16):
        raise _not_implemented("hardshrink_backward_cpu", dtype)  # the CPU kernel's name
    return dtype


@impl("hardtanh_backward")
def hardtanh_backward(grad_output, self, min_val, max_val):
    dtype = _hardtanh_backward_dtype(grad_output, self)
    return _run(_HARDTANH_BACKWARD, [grad_output, self, min_val, max_val], dtype, dtype)


@impl("hardtanh_backward.grad_input")
def hardtanh_backward_out(grad_output, self, min_val, max_val, *, grad_input):
    dtype = _hardtanh_backward_dtype(grad_output, self)
    return _run(_HARDTANH_BACKWARD, [grad_output, self, min_val, max_val], dtype, dtype,
                out=grad_input)


def _floor_operands(self, other):
    """Floats only: integer floor division raises ZeroDivisionError per element on the CPU,
    which the counted fallback reproduces."""
    if _promoted(self, other, False) not in FLOAT_DTYPES:
        raise Unsupported()


@impl("floor_divide")
def floor_divide(self, other):
    _floor_operands(self, other)
    return torch.div(self, other, rounding_mode="floor")


@impl("floor_divide.out")
def floor_divide_out(self, other, *, out):
    _floor_operands(self, other)
    return torch.div(self, other, rounding_mode="floor", out=out)


@impl("floor_divide_.Tensor")
def floor_divide_(self, other):
    _floor_operands(self, other)
    return self.div_(other, rounding_mode="floor")


# --- bitwise shifts of int32, int64 and uint8 -------------------------------------------------
# PyTorch's CPU kernel shifts with C's << and >> on x86: the count is taken modulo the width the
# shift runs in (64 for int64; 32 for int32, and for uint8, which C promotes to int before
# shifting and truncates after). A left shift is a wrapping multiply by 2^count; a right shift a
# floor division by it (2^63 wraps negative: int64's count 63 gives the sign fill).


def _shift_program(dtype, left):
    mask = 63 if dtype == torch.int64 else 31
    count = f"{{1}} {mask} and"
    if dtype == torch.uint8:
        value = f"{{0}} 2 {count} pow {'mul' if left else 'div'}"
        return f"{count} 8 ge 0 {value} where"
    if left:
        return f"{{0}} 2 {count} pow mul"
    power = f"2 {count} pow"
    floor = f"{{0}} {power} div {{0}} {power} rem 0 ne {{0}} 0 lt and 1 0 where sub"
    return f"{count} {mask} eq {{0}} 0 lt -1 0 where {floor} where"


def _shift(kernel, left, self, other, out=None, inplace=None):
    dtype = _promoted(self, other, False)
    if dtype not in (torch.int64, torch.int32, torch.uint8):
        if dtype in (torch.int8, torch.int16):
            raise Unsupported()  # stored only: the CPU fallback shifts them
        raise _not_implemented(kernel, dtype)
    return _run(_shift_program(dtype, left), [self, other], dtype, dtype, out=out, inplace=inplace)


@impl("bitwise_left_shift.Tensor")
def bitwise_left_shift(self, other):
    return _shift("lshift_cpu", True, self, other)


@impl("bitwise_left_shift.Tensor_out")
def bitwise_left_shift_out(self, other, *, out):
    return _shift("lshift_cpu", True, self, other, out=out)


@impl("bitwise_left_shift_.Tensor")
def bitwise_left_shift_(self, other):
    return _shift("lshift_cpu", True, self, other, inplace=self)


@impl("bitwise_right_shift.Tensor")
def bitwise_right_shift(self, other):
    return _shift("rshift_cpu", False, self, other)


@impl("bitwise_right_shift.Tensor_out")
def bitwise_right_shift_out(self, other, *, out):
    return _shift("rshift_cpu", False, self, other, out=out)


@impl("bitwise_right_shift_.Tensor")
def bitwise_right_shift_(self, other):
    return _shift("rshift_cpu", False, self, other, inplace=self)
