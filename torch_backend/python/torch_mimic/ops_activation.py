"""Activations the op table lacks (hardswish, hardsigmoid, softplus, softshrink, hardshrink,
mish), as elementwise programs with the formulas of PyTorch's CPU kernels, and the written
tensor's memory-overlap checks of PyTorch's TensorIterator, which their in-place and out=
forms run before computing."""
import torch

from ._lib import Unsupported, empty, impl, launch, prepare_out

_INTERNAL_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                     "refers to a single memory location. Please clone() the tensor before "
                     "performing the operation.")
_PARTIAL_OVERLAP = ("unsupported operation: some elements of the input tensor and the written-to "
                    "tensor refer to a single memory location. Please clone() the tensor before "
                    "performing the operation.")


def _non_overlapping_and_dense(t):
    """PyTorch's is_non_overlapping_and_dense: the dims of size > 1, ordered by stride, tile
    memory without gaps or overlap."""
    dims = sorted((stride, size) for size, stride in zip(t.shape, t.stride()) if size != 1)
    expected = 1
    for stride, size in dims:
        if stride != expected:
            return False
        expected *= size
    return True


def _base(t):
    """The address of t's storage (Tensor.storage() does not serve the device in 1.13)."""
    return t.data_ptr() - t.storage_offset() * t.element_size()


def _span(t):
    start = t.storage_offset() * t.element_size()
    return start, start + t.numel() * t.element_size()


def check_written(written, *inputs):
    """at::assert_no_internal_overlap(written) and at::assert_no_partial_overlap(written, input)
    for each input that is not the written tensor itself, with PyTorch's messages."""
    if torch._debug_has_internal_overlap(written) == 1:
        raise RuntimeError(_INTERNAL_OVERLAP)
    for t in inputs:
        if t is written or t.numel() == 0 or written.numel() == 0:
            continue
        if _base(t) != _base(written):
            continue
        if not (_non_overlapping_and_dense(t) and _non_overlapping_and_dense(written)):
            continue  # PyTorch's TOO_HARD: no error
        (a_start, a_end), (b_start, b_end) = _span(written), _span(t)
        if (a_start, a_end) != (b_start, b_end) and a_start < b_end and b_start < a_end:
            raise RuntimeError(_PARTIAL_OVERLAP)


# The dtypes the CPU's kernels take, but float64, which the device does not compute in; mish's
# CPU kernel takes no bfloat16.
_FLOATS = (torch.float32, torch.bfloat16)


def _apply(program, self, scalars=(), out=None, inplace=False, dtypes=_FLOATS):
    """program(x0, s0, s1, ...) over self, computed in float32 (also bfloat16's opmath) into a
    new tensor, self, or out. Other dtypes take the CPU fallback, which raises the CPU's error
    for those it lacks and computes float64."""
    # TensorIterator checks the overlap before the dtype, also for the calls that run on the CPU.
    if inplace:
        check_written(self)
    elif out is not None:
        check_written(out, self)
    if self.dtype not in dtypes or (out is not None and out.dtype != self.dtype):
        raise Unsupported()
    if inplace:
        target = self
    elif out is not None:
        target = prepare_out(out, self.shape, self.dtype)
    else:
        target = empty(self.shape, self.dtype, self.device)
    return launch(target, [self], program, self.dtype, list(scalars))


# x * min(max(x + 3, 0), 6) / 6, in the CPU kernel's order.
_HARDSWISH = "x0 x0 3 add 0 max 6 min mul 6 div"
_HARDSIGMOID = "x0 3 add 0 max 6 min 6 div"
# x * beta > threshold ? x : log1p(exp(x * beta)) / beta, with s0 = beta, s1 = threshold.
_SOFTPLUS = "x0 s0 mul s1 gt x0 x0 s0 mul exp 1 add log s0 div where"
# x > lambd ? x - lambd : (x < -lambd ? x + lambd : 0); hardshrink keeps x outside [-l, l].
# The CPU's softshrink gives 0 for NaN, its hardshrink NaN (the comparisons are false for it).
_SOFTSHRINK = "x0 s0 gt x0 s0 sub x0 s0 neg lt x0 s0 add 0 where where"
_HARDSHRINK = "x0 s0 neg ge x0 s0 le and 0 x0 where"
# x * tanh(log1p(exp(x)))
_MISH = "x0 x0 exp 1 add log tanh mul"


@impl("hardswish")
def hardswish(self):
    return _apply(_HARDSWISH, self)


@impl("hardswish_")
def hardswish_(self):
    return _apply(_HARDSWISH, self, inplace=True)


@impl("hardswish.out")
def hardswish_out(self, *, out):
    return _apply(_HARDSWISH, self, out=out)


@impl("hardsigmoid")
def hardsigmoid(self):
    return _apply(_HARDSIGMOID, self)


@impl("hardsigmoid_")
def hardsigmoid_(self):
    return _apply(_HARDSIGMOID, self, inplace=True)


@impl("hardsigmoid.out")
def hardsigmoid_out(self, *, out):
    return _apply(_HARDSIGMOID, self, out=out)


@impl("softplus")
def softplus(self, beta=1, threshold=20):
    return _apply(_SOFTPLUS, self, (beta, threshold))


@impl("softplus.out")
def softplus_out(self, beta=1, threshold=20, *, out):
    return _apply(_SOFTPLUS, self, (beta, threshold), out=out)


@impl("softshrink")
def softshrink(self, lambd=0.5):
    return _apply(_SOFTSHRINK, self, (lambd,))


@impl("softshrink.out")
def softshrink_out(self, lambd=0.5, *, out):
    return _apply(_SOFTSHRINK, self, (lambd,), out=out)


@impl("hardshrink")
def hardshrink(self, lambd=0.5):
    return _apply(_HARDSHRINK, self, (lambd,))


@impl("hardshrink.out")
def hardshrink_out(self, lambd=0.5, *, out):
    return _apply(_HARDSHRINK, self, (lambd,), out=out)


@impl("mish")
def mish(self):
    return _apply(_MISH, self, dtypes=(torch.float32,))


@impl("mish_")
def mish_(self):
    return _apply(_MISH, self, inplace=True, dtypes=(torch.float32,))


@impl("mish.out")
def mish_out(self, *, out):
    return _apply(_MISH, self, out=out, dtypes=(torch.float32,))
