"""The pointwise overloads the C++ op layer (torch_backend/aten) leaves to Python, over the same
op table: those whose kernel computes an argument on the host or returns more than one tensor.
Every other pointwise op is registered in C++."""
import torch

from ._lib import empty, impl, is_scalar, launch, prepare_out, scalar_value
from ._op_table import program


_programs = {}  # (template, which operands are scalars) -> program text


def _operands(values):
    """Splits operands into device tensors (x0, x1, ... in the program) and scalars (s0, ...)."""
    tensors, scalars, kinds = [], [], []
    for value in values:
        if is_scalar(value):
            scalars.append(scalar_value(value))
            kinds.append(True)
        else:
            tensors.append(value)
            kinds.append(False)
    return tensors, scalars, tuple(kinds)


def _program_text(template, kinds):
    program = _programs.get((template, kinds))
    if program is None:
        counts, tokens = [0, 0], []
        for scalar in kinds:
            tokens.append(("s%d" if scalar else "x%d") % counts[scalar])
            counts[scalar] += 1
        program = _programs[(template, kinds)] = template.format(*tokens)
    return program


def _shape(tensors):
    if not tensors:
        return ()
    shape = tensors[0].shape
    if all(t.shape == shape for t in tensors):
        return shape
    return torch.broadcast_shapes(*[t.shape for t in tensors])


def _device(tensors):
    for t in tensors:
        if not t.is_cpu:
            return t.device
    raise RuntimeError("mimic: no operand is on the device")


def _run(template, values, result_dtype, compute, out=None, inplace=None):
    """Evaluates ``template`` (with {0}, {1}, ... for the operands) into a new tensor, into
    ``inplace`` (the op's self), or into ``out``. This is the path of every pointwise op, so
    it avoids work that is not needed in the common case."""
    tensors, scalars, kinds = _operands(values)
    shape = _shape(tensors)
    if inplace is not None:
        if result_dtype != inplace.dtype and not torch.can_cast(result_dtype, inplace.dtype):
            raise RuntimeError(
                f"result type {result_dtype} can't be cast to the desired output type {inplace.dtype}")
        if shape != inplace.shape and torch.broadcast_shapes(shape, inplace.shape) != inplace.shape:
            raise RuntimeError(f"output with shape {list(inplace.shape)} doesn't match the broadcast shape {list(shape)}")
        target = inplace
    elif out is not None:
        target = prepare_out(out, shape, result_dtype)
    else:
        target = empty(shape, result_dtype, _device(tensors))
    return launch(target, tensors, _program_text(template, kinds), compute, scalars)


@impl("log_sigmoid_forward")
def log_sigmoid_forward(self):
    buffer = empty((0,), self.dtype, self.device)
    return _run(program("log_sigmoid_forward"), [self], self.dtype, self.dtype), buffer


def _ten_to_the(decimals):
    return 10.0 ** decimals  # in double, as PyTorch's CPU kernel computes it


@impl("round.decimals")
def round_decimals(self, *, decimals):
    return _run(program("round", "decimals"), [self, _ten_to_the(decimals)], self.dtype, self.dtype)


@impl("round_.decimals")
def round_decimals_(self, *, decimals):
    return _run(program("round", "decimals"), [self, _ten_to_the(decimals)], self.dtype, self.dtype,
                inplace=self)


@impl("round.decimals_out")
def round_decimals_out(self, *, decimals, out):
    return _run(program("round", "decimals"), [self, _ten_to_the(decimals)], self.dtype, self.dtype,
                out=out)
