"""Random fills and factories: uniform_, normal_, bernoulli_, random_, arange. Random values
come from the elementwise primitive's counter-based ``rand`` with the device generator's key."""
import math
import warnings

import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch
from ._random import next_key

_UNIFORM = "rand s1 s0 sub mul s0 add"
# Box-Muller: 1 - u is in (0, 1], so the logarithm is finite.
_NORMAL = "1 rand sub log -2 mul sqrt rand %r mul cos mul s1 mul s0 add" % (2 * math.pi)


def _key(t, streams):
    return next_key(t.device.index or 0, t.numel() * streams)


def _float_only(self, name):
    if self.dtype not in FLOAT_DTYPES:
        if self.dtype in (torch.float64, torch.complex128, torch.complex32):
            raise Unsupported()  # the device has no float64 and no half-precision pairs
        raise RuntimeError(f"{name} expects a floating point tensor, got {self.dtype}")


@impl("uniform_")
def uniform_(self, from_=0.0, to=1.0, *, generator=None):
    if self.dtype == torch.complex64:
        # As PyTorch's CPU kernel: each part of the pairs drawn from [from, to).
        uniform_(torch.view_as_real(self), from_, to)
        return self
    _float_only(self, "uniform_")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found from={from_} > to={to}")
    if to - from_ > torch.finfo(self.dtype).max:
        name = {torch.float32: "Float", torch.float16: "Half", torch.bfloat16: "BFloat16"}[self.dtype]
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<{name}>::max(), but found "
                           f"to={to:g} and from={from_:g} which result in to-from to exceed the limit")
    return launch(self, [], _UNIFORM, torch.float32, [from_, to], _key(self, 1))


@impl("normal_")
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    if self.dtype == torch.complex64:
        # As PyTorch's CPU kernel: each part of the pairs has mean `mean` and half the variance.
        normal_(torch.view_as_real(self), mean, std / math.sqrt(2))
        return self
    _float_only(self, "normal_")
    return launch(self, [], _NORMAL, torch.float32, [mean, std], _key(self, 2))


@impl("bernoulli_.float")
def bernoulli_float(self, p=0.5, *, generator=None):
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return launch(self, [], "rand s0 lt 1 0 where", torch.float32, [p], _key(self, 1))


@impl("bernoulli_.Tensor")
def bernoulli_tensor(self, p, *, generator=None):
    return launch(self, [p.to(self.device)], "rand x0 lt 1 0 where", torch.float32, [], _key(self, 1))


@impl("bernoulli")
def bernoulli(self, *, generator=None):
    out = empty(self.shape, self.dtype, self.device)
    return launch(out, [self], "rand x0 lt 1 0 where", torch.float32, [], _key(out, 1))


# Significand bits of the float dtypes: random_ warns for bounds a float cannot hold exactly.
_DIGITS = {torch.float64: 53, torch.float32: 24, torch.float16: 11, torch.bfloat16: 8}
_TYPE_META = {torch.float64: "double", torch.float32: "float", torch.float16: "c10::Half",
              torch.bfloat16: "c10::BFloat16", torch.int64: "long int", torch.int32: "int",
              torch.int16: "short int", torch.int8: "signed char", torch.uint8: "unsigned char",
              torch.bool: "bool"}


def _check_bounds(self, low, high):
    """PyTorch's check_from_to_in_range: from and to - 1 must fit the dtype (an error), and a
    float dtype warns when they lie outside the integers its significand holds."""
    dtype = self.dtype
    if dtype.is_complex:
        raise Unsupported()  # the CPU's "not implemented for" error
    if dtype == torch.bool:
        lowest, highest = 0, 1
    else:
        info = torch.finfo(dtype) if dtype.is_floating_point else torch.iinfo(dtype)
        lowest, highest = info.min, info.max
    name = _TYPE_META.get(dtype, str(dtype))
    for value, what in ((low, "from"), (high - 1, "to - 1")):
        if not lowest <= value <= highest:
            raise RuntimeError(f"{what} is out of bounds for {name}")
    if dtype in _DIGITS:
        digits = _DIGITS[dtype]
        for value, what in ((low, "from"), (high - 1, "to - 1")):
            if not -(2 ** digits) <= value <= 2 ** digits:
                warnings.warn(f"{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                              f"limitations {name} can support discrete uniform distribution only within "
                              "this range. This warning will become an error in version 1.7 release, "
                              "please fix the code in advance", UserWarning, stacklevel=4)


def _random_range(self, low, high, checked=True):
    span = high - low
    if span <= 0:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    if span > 2 ** 24:
        raise Unsupported()  # a float32 uniform cannot cover wider ranges evenly
    if checked:
        _check_bounds(self, low, high)
    return launch(self, [], "rand s1 mul floor s0 add", torch.float32, [low, span], _key(self, 1))


@impl("random_.from")
def random_from(self, from_, to=None, *, generator=None):
    if to is None:
        raise Unsupported()
    return _random_range(self, from_, to)


@impl("random_.to")
def random_to(self, to, *, generator=None):
    return _random_range(self, 0, to)


@impl("random_")
def random_(self, *, generator=None):
    if self.dtype == torch.bool:
        return _random_range(self, 0, 2, checked=False)
    if self.dtype in FLOAT_DTYPES:
        digits = _DIGITS[self.dtype]
        high = 2 ** digits + 1 if digits < 24 else 2 ** 24
        return _random_range(self, 0, high, checked=False)
    raise Unsupported()


def _scalar_text(value):
    return str(value) if isinstance(value, int) else f"{value:g}"  # as c10::Scalar prints


def _arange_length(start, end, step):
    """PyTorch's arange checks and length: (end - start) / step in double, rounded up."""
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {_scalar_text(start)} -> {_scalar_text(end)}")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if all(isinstance(v, int) for v in (start, end, step)):
        length = -((start - end) // step)  # int64 results: exact, as the CPU's integer division
    else:
        length = math.ceil((float(end) - float(start)) / float(step))
    if not 0 <= length <= 2 ** 63 - 1:
        raise RuntimeError("invalid size, possible overflow?")
    return length


@impl("arange.start_out")
def arange_out(start, end, step=1, *, out):
    length = _arange_length(start, end, step)
    compute = out.dtype if out.dtype in (torch.int32, torch.int64) else torch.float32
    if out.dtype in (torch.int32, torch.int64, torch.uint8, torch.int8, torch.int16):
        # PyTorch's CPU kernel converts the bounds to the accumulate type (int64) first, and
        # for int64 results counts the length from the converted bounds too; uint8, int8 and
        # int16 results wrap from int64 values (-1 gives 255 in uint8).
        start, step = int(start), int(step)
        if out.dtype in (torch.uint8, torch.int8, torch.int16):
            compute = torch.int64
        if out.dtype == torch.int64 and step != 0:
            length = _arange_length(start, int(end), step)
    if out.numel() != length:  # as PyTorch's arange_out: an out= of that many elements keeps its shape
        if out.numel():
            warnings.warn(f"The number of elements in the out tensor of shape {list(out.shape)} is {out.numel()} "
                          f"which does not match the computed number of elements {length}. Note that this may "
                          "occur as a result of rounding error. The out tensor will be resized to a tensor of "
                          f"shape ({length},).")
        out.resize_((length,))
    if torch._debug_has_internal_overlap(out) == 1:  # 1: certainly overlaps, as TensorIterator's check
        raise RuntimeError("unsupported operation: more than one element of the written-to tensor refers to a "
                           "single memory location. Please clone() the tensor before performing the operation.")
    return launch(out, [], "idx s1 mul s0 add", compute, [start, step])
