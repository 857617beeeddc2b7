"""complex64 in the Python op kernels: a complex64 tensor is read and written through the float32
views of its parts (torch.view_as_real(x)[..., 0] and [..., 1]), both parts in one
elementwise_multi launch: conj_physical, and linspace for ops_range.py. The pointwise ops,
sum/mean and the matrix products of complex64 are C++ kernels (torch_backend/aten/complex_*.h);
the random fills are in ops_random.py."""
import torch

from ._lib import Unsupported, impl, prepare_out

_F32 = torch.float32


def _parts(out):
    if out.is_conj() or out.is_neg():
        raise Unsupported()
    pairs = torch.view_as_real(out)
    return [pairs.select(-1, 0), pairs.select(-1, 1)]


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
