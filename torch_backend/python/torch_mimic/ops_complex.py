"""complex64 in the Python op kernels: a complex64 tensor is read and written through the float32
views of its parts (torch.view_as_real(x)[..., 0] and [..., 1]), both parts in one
elementwise_multi launch: conj_physical, and linspace and logspace for ops_range.py. The pointwise ops,
sum/mean and the matrix products of complex64 are C++ kernels (torch_backend/aten/complex_*.h);
the random fills are in ops_random.py."""
import math

import torch

from ._lib import Unsupported, impl, prepare_out

_F32 = torch.float32


def _parts(out):
    if out.is_conj() or out.is_neg():
        raise Unsupported()
    pairs = torch.view_as_real(out)
    return [pairs.select(-1, 0), pairs.select(-1, 1)]


def real_parts(t):
    """(real, imaginary) float32 views of complex64 ``t``'s values: a conjugate or negative view
    is resolved into memory first."""
    if t.is_conj():
        t = t.resolve_conj()
    if t.is_neg():
        t = t.resolve_neg()
    pairs = torch.view_as_real(t)
    return pairs.select(-1, 0), pairs.select(-1, 1)


def by_parts(fn, x):
    """fn applied to complex64 ``x`` as a pair of float32 tensors: complex(fn(x.real),
    fn(x.imag)). Right for every op linear over the reals, which covers everything that only
    moves, selects or adds elements (flip, tril, im2col, cumsum, ...)."""
    real, imag = real_parts(x)
    return torch.complex(fn(real), fn(imag))


def into(target, result):
    """``result`` written into ``target`` (an out= tensor resized as PyTorch resizes it, or self
    of an in-place op), which is returned."""
    if target.shape != result.shape:
        prepare_out(target, result.shape, target.dtype)
    return target.copy_(result)


def _with_scalars(program, names):
    """``program`` with s0, s1, s2 renamed to ``names`` (the other part's scalars)."""
    renamed = {"s0": names[0], "s1": names[1], "s2": names[2]}
    return " ".join(renamed.get(word, word) for word in program.split())


def linspace_complex64(start, end, steps, out, linear):
    """linspace into complex64 ``out`` (already of ``steps`` elements) as PyTorch's CPU kernel
    computes it for c10::complex<float>: start and end rounded to complex64, the step their
    difference divided part by part by steps - 1 in float32, and ``linear`` (the real kernel's
    program: s0 start, s1 end, s2 step, s3 halfway, s4 steps - 1) per part."""
    start, end = complex(start), complex(end)
    parts = _parts(out)
    if steps == 0:
        return out
    if steps == 1:
        programs, scalars = ["s0", "s1"], [start.real, start.imag]
    else:
        scalars = []
        for first, last in ((start.real, end.real), (start.imag, end.imag)):
            first, last = torch.tensor(first, dtype=_F32), torch.tensor(last, dtype=_F32)
            step = (last - first) / torch.tensor(steps - 1, dtype=_F32)
            scalars.append([first.item(), last.item(), step.item()])
        programs = [linear, _with_scalars(linear, ["s5", "s6", "s7"])]
        scalars = scalars[0] + [steps // 2, steps - 1] + scalars[1]
    torch.ops.mimic.elementwise_multi(parts, [], programs, _F32, scalars)
    return out


def logspace_complex64(start, end, steps, base, out, linear):
    """logspace into complex64 ``out`` (already of ``steps`` elements) as PyTorch's CPU kernel
    computes it for c10::complex<float>: the exponents z as linspace_complex64 makes them, then
    pow(base, z) = exp(z log(base)) (glibc's cpowf) in float32, log(base) rounded to float32.
    One element (steps 1) is pow(base, start) in double there: base^re (cos, sin)(im ln base).
    Bases <= 0 (a complex logarithm of a negative or zero base) take the CPU fallback."""
    if base <= 0:
        raise Unsupported()
    start, end = complex(start), complex(end)
    parts = _parts(out)
    if steps == 0:
        return out
    if steps == 1:
        angle = start.imag * math.log(base)
        programs = ["s0 s1 pow s2 cos mul", "s0 s1 pow s2 sin mul"]
        torch.ops.mimic.elementwise_multi(parts, [], programs, _F32, [base, start.real, angle])
        return out
    scalars = []
    for first, last in ((start.real, end.real), (start.imag, end.imag)):
        first, last = torch.tensor(first, dtype=_F32), torch.tensor(last, dtype=_F32)
        step = (last - first) / torch.tensor(steps - 1, dtype=_F32)
        scalars.append([first.item(), last.item(), step.item()])
    log_base = repr(torch.tensor(base, dtype=_F32).log().item())
    # z log(base) for a positive base: (z_re ln b, z_im ln b), then exp(re) (cos, sin)(im).
    real, imag = f"{linear} {log_base} mul", f"{_with_scalars(linear, ['s5', 's6', 's7'])} " \
                                             f"{log_base} mul"
    programs = [f"{real} exp {imag} cos mul", f"{real} exp {imag} sin mul"]
    torch.ops.mimic.elementwise_multi(parts, [], programs, _F32,
                                      scalars[0] + [steps // 2, steps - 1] + scalars[1])
    return out


@impl("conj_physical.out")
def conj_physical_out(self, *, out):
    """The conjugate in memory of complex64 ``self`` (which may be a conjugate view: its memory
    is then the result); other dtypes take the fallback, as before."""
    if self.dtype != torch.complex64 or out.dtype != torch.complex64 or self.is_neg():
        raise Unsupported()
    if self.device != out.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {out.device}!")
    prepare_out(out, self.shape, self.dtype)
    outs = _parts(out)
    pairs = torch.view_as_real(self.conj() if self.is_conj() else self)
    programs = ["x0", "x1" if self.is_conj() else "x1 neg"]
    if out.numel():
        torch.ops.mimic.elementwise_multi(outs, [pairs.select(-1, 0), pairs.select(-1, 1)],
                                          programs, _F32, [])
    return out


@impl("conj_physical_")
def conj_physical_(self):
    """In place: PyTorch's kernel calls its CPU stub, which has no device entry."""
    if not self.is_complex():
        return self
    return conj_physical_out(self, out=self)


# angle = atan2(im, re) in one launch of four programs; each reads the earlier outputs (x2, x3,
# x4: two float32 temporaries and the reduced argument) instead of repeating them (RPN has no
# dup). Cephes' atanf: the ratio a = min/max of |re|, |im| in [0, 1], reduced to |a'| <= tan(pi/8)
# by a' = (a - 1) / (a + 1) (plus pi/4), a degree-9 odd polynomial (a few ulps), then the octant.
_TAN_PI_8 = 0.4142135623730950
# 0 for 0 / 0, so that signed zeros give atan2's 0, pi, -0 or -pi through the sign tests below;
# 1 for equal magnitudes, so that two infinities give the diagonals (not inf / inf).
_ATAN_RATIO = ("x0 abs x1 abs max 0 eq 0 x0 abs x1 abs eq 1 x0 abs x1 abs min x0 abs x1 abs max div "
               "where where")
_ATAN_REDUCED = f"x2 {_TAN_PI_8!r} gt x2 1 sub x2 1 add div x2 where"
_Z = "x3 x3 mul"
_ATAN_REDUCED_VALUE = (
    f"8.05374449538e-2 {_Z} mul -1.38776856032e-1 add {_Z} mul 1.99777106478e-1 add {_Z} mul "
    f"-3.33329491539e-1 add {_Z} mul x3 mul x3 add x2 {_TAN_PI_8!r} gt {math.pi / 4!r} 0 where add")
_OCTANT = f"x1 abs x0 abs gt {math.pi / 2!r} x4 sub x4 where"
# Sign bits: x < 0, or 1 / x < 0 for -0 (1 / -inf is -0, so the first test keeps -inf's).
_HALF_PLANE = f"x0 0 lt 1 x0 div 0 lt or {math.pi!r} {_OCTANT} sub {_OCTANT} where"
_ANGLE = f"x1 0 lt 1 x1 div 0 lt or {_HALF_PLANE} neg {_HALF_PLANE} where"
# Real inputs: pi for negative numbers, NaN for NaN, 0 otherwise (as PyTorch's CPU kernel).
_REAL_ANGLE = f"x0 x0 ne x0 x0 0 lt {math.pi!r} 0 where where"


def _angle_into(self, out):
    if self.device != out.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {self.device} and {out.device}!")
    if out.numel() == 0:
        return out
    if self.dtype == _F32:
        torch.ops.mimic.elementwise_multi([out], [self], [_REAL_ANGLE], _F32, [])
        return out
    pairs = torch.view_as_real(self.conj() if self.is_conj() else self)
    re, im = pairs.select(-1, 0), pairs.select(-1, 1)
    if self.is_conj():
        im = im.neg()  # a conjugate view's imaginary part is the negated memory
    temporaries = [torch.empty(self.shape, dtype=_F32, device=self.device) for _ in range(3)]
    programs = [_ATAN_RATIO, _ATAN_REDUCED, _ATAN_REDUCED_VALUE, _ANGLE]
    torch.ops.mimic.elementwise_multi(temporaries + [out], [re, im], programs, _F32, [])
    return out


def _angle_supported(self):
    if self.dtype not in (_F32, torch.complex64) or self.is_neg():
        raise Unsupported()


@impl("angle")
def angle(self):
    _angle_supported(self)
    return _angle_into(self, torch.empty(self.shape, dtype=_F32, device=self.device))


@impl("angle.out")
def angle_out(self, *, out):
    _angle_supported(self)
    if out.dtype != _F32 or out.is_neg():
        raise Unsupported()
    prepare_out(out, self.shape, _F32)
    return _angle_into(self, out)


def _pairs_out(name, first, second, out, programs):
    """out = the complex64 of the programs over float32 ``first`` and ``second`` (broadcast);
    other dtypes take the fallback, which raises PyTorch's errors."""
    if first.dtype != _F32 or second.dtype != _F32 or out.dtype != torch.complex64:
        raise Unsupported()
    if first.device != out.device or second.device != out.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least "
                           f"two devices, {first.device} and {out.device}! (in {name})")
    shape = torch.broadcast_shapes(first.shape, second.shape)
    prepare_out(out, shape, torch.complex64)
    if out.numel():
        inputs = [t.expand(shape) for t in (first, second)]
        torch.ops.mimic.elementwise_multi(_parts(out), inputs, programs, _F32, [])
    return out


@impl("complex.out")
def complex_out(real, imag, *, out):
    return _pairs_out("complex", real, imag, out, ["x0", "x1"])


@impl("polar.out")
def polar_out(abs, angle, *, out):
    return _pairs_out("polar", abs, angle, out, ["x0 x1 cos mul", "x0 x1 sin mul"])
