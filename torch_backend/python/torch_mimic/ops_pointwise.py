"""Elementwise aten ops: unary and binary math, comparisons, logic, selection and fills, each
one launch of the elementwise primitive with a program in its reverse-Polish language."""
import torch

from ._lib import (
    FLOAT_DTYPES, empty, impl, is_scalar, launch, prepare_out,
    scalar_value,
)


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


def _float_result(dtype):
    return dtype if dtype in FLOAT_DTYPES or dtype == torch.float64 else torch.get_default_dtype()


# --- unary ---------------------------------------------------------------------------------

# aten name -> (program over {0}, whether integer inputs give a float result)
_UNARY = {
    "abs": ("{0} abs", False),
    "neg": ("{0} neg", False),
    "exp": ("{0} exp", True),
    "exp2": ("2 {0} pow", True),
    "expm1": ("{0} exp 1 sub", True),
    "log": ("{0} log", True),
    "log2": ("{0} log 1.4426950408889634 mul", True),
    "log10": ("{0} log 0.4342944819032518 mul", True),
    "log1p": ("{0} 1 add log", True),
    "sqrt": ("{0} sqrt", True),
    "rsqrt": ("{0} rsqrt", True),
    "tanh": ("{0} tanh", True),
    "sigmoid": ("{0} sigmoid", True),
    "erf": ("{0} erf", True),
    "sin": ("{0} sin", True),
    "cos": ("{0} cos", True),
    "floor": ("{0} floor", False),
    "ceil": ("{0} ceil", False),
    "round": ("{0} round", False),
    "trunc": ("{0} trunc", False),
    "reciprocal": ("{0} recip", True),
    "relu": ("{0} relu", False),
    "sign": ("{0} 0 gt {0} 0 lt sub", False),
    "sgn": ("{0} 0 gt {0} 0 lt sub", False),
    "silu": ("{0} {0} sigmoid mul", True),
    "bitwise_not": ("{0} not", False),
}


def _register_unary(name, program, float_result):
    def result_dtype(self):
        return _float_result(self.dtype) if float_result else self.dtype

    def functional(self):
        dtype = result_dtype(self)
        return _run(program, [self], dtype, dtype)

    def inplace(self):
        return _run(program, [self], result_dtype(self), result_dtype(self), inplace=self)

    def out_variant(self, *, out):
        dtype = result_dtype(self)
        return _run(program, [self], dtype, dtype, out=out)

    names = [(name, functional), (name + "_", inplace), (name + ".out", out_variant)]
    for overload, fn in names:
        if _has_overload(overload):
            impl(overload)(fn)


def _has_overload(name):
    packet, _, overload = name.partition(".")
    try:
        return (overload or "default") in getattr(torch.ops.aten, packet).overloads()
    except AttributeError:
        return False


for _name, (_program, _float) in _UNARY.items():
    _register_unary(_name, _program, _float)


@impl("logical_not", "logical_not.out")
def logical_not(self, *, out=None):
    return _run("{0} 0 eq", [self], torch.bool, self.dtype if self.dtype != torch.bool else torch.uint8, out=out)


@impl("isnan")
def isnan(self):
    return _run("{0} {0} ne", [self], torch.bool, self.dtype)


# --- binary --------------------------------------------------------------------------------


def _binary(token, self, other, alpha):
    """The program and operands of self <token> other (times alpha): alpha is an operand, so a
    kernel argument, never part of the program's text, and a new value never builds a kernel."""
    if alpha is None or alpha == 1:
        return "{0} {1} " + token, [self, other]
    return "{0} {1} {2} mul " + token, [self, other, alpha]


def _register_binary(name, token, has_alpha=False, float_result=False):
    def dtype_of(self, other):
        dtype = torch.result_type(self, other)
        return _float_result(dtype) if float_result else dtype

    def functional(self, other, alpha=1):
        dtype = dtype_of(self, other)
        template, values = _binary(token, self, other, alpha if has_alpha else None)
        return _run(template, values, dtype, dtype)

    def inplace(self, other, alpha=1):
        dtype = dtype_of(self, other)
        template, values = _binary(token, self, other, alpha if has_alpha else None)
        return _run(template, values, dtype, dtype, inplace=self)

    def out_variant(self, other, alpha=1, *, out):
        dtype = dtype_of(self, other)
        template, values = _binary(token, self, other, alpha if has_alpha else None)
        return _run(template, values, dtype, dtype, out=out)

    for suffix in ("Tensor", "Scalar"):
        if _has_overload(f"{name}.{suffix}"):
            impl(f"{name}.{suffix}")(functional)
        if _has_overload(f"{name}_.{suffix}"):
            impl(f"{name}_.{suffix}")(inplace)
    if _has_overload(f"{name}.out"):
        impl(f"{name}.out")(out_variant)
    elif _has_overload(f"{name}.Tensor_out"):
        impl(f"{name}.Tensor_out")(out_variant)


for _name, _token, _alpha, _float in (
    ("add", "add", True, False), ("sub", "sub", True, False), ("mul", "mul", False, False),
    ("div", "div", False, True), ("maximum", "max", False, False), ("minimum", "min", False, False),
    ("bitwise_and", "and", False, False), ("bitwise_or", "or", False, False),
    ("bitwise_xor", "xor", False, False), ("fmod", "rem", False, False),
):
    _register_binary(_name, _token, _alpha, _float)


def _remainder_template():
    r = "{0} {1} rem"
    # Python's remainder takes the divisor's sign: fix C fmod's result where the signs differ.
    return f"{r} 0 ne {r} 0 lt {{1}} 0 lt xor and {r} {{1}} add {r} where"


@impl("remainder.Tensor", "remainder.Scalar")
def remainder(self, other):
    dtype = torch.result_type(self, other)
    return _run(_remainder_template(), [self, other], dtype, dtype)


@impl("div.Tensor_mode", "div.Scalar_mode")
def div_mode(self, other, *, rounding_mode=None):
    dtype = torch.result_type(self, other)
    if rounding_mode is None:
        dtype = _float_result(dtype)
        return _run("{0} {1} div", [self, other], dtype, dtype)
    compute = dtype if dtype.is_floating_point else torch.float32
    token = "floor" if rounding_mode == "floor" else "trunc"
    if not dtype.is_floating_point and rounding_mode == "trunc":
        return _run("{0} {1} div", [self, other], dtype, dtype)
    return _run("{0} {1} div " + token, [self, other], dtype, compute)


@impl("pow.Tensor_Scalar", "pow.Tensor_Tensor", "pow.Scalar")
def pow_(self, exponent):
    dtype = torch.result_type(self, exponent)
    if is_scalar(exponent) and scalar_value(exponent) == 2:
        return _run("{0} {0} mul", [self], dtype, dtype)
    return _run("{0} {1} pow", [self, exponent], dtype, dtype)


@impl("pow_.Scalar", "pow_.Tensor")
def pow_inplace(self, exponent):
    return _run("{0} {1} pow", [self, exponent], self.dtype, self.dtype, inplace=self)


# --- comparisons and logic -----------------------------------------------------------------

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):

    def _compare(self, other, _token=_name):
        compute = torch.result_type(self, other)
        return _run("{0} {1} " + _token, [self, other], torch.bool, compute)

    def _compare_out(self, other, *, out, _token=_name):
        compute = torch.result_type(self, other)
        return _run("{0} {1} " + _token, [self, other], torch.bool, compute, out=out)

    def _compare_inplace(self, other, _token=_name):
        compute = torch.result_type(self, other)
        return _run("{0} {1} " + _token, [self, other], self.dtype, compute, inplace=self)

    impl(f"{_name}.Tensor", f"{_name}.Scalar")(_compare)
    impl(f"{_name}.Tensor_out", f"{_name}.Scalar_out")(_compare_out)
    impl(f"{_name}_.Tensor", f"{_name}_.Scalar")(_compare_inplace)


for _name, _token in (("logical_and", "and"), ("logical_or", "or"), ("logical_xor", "xor")):

    def _logical(self, other, _token=_token):
        compute = torch.result_type(self, other)
        return _run("{0} 0 ne {1} 0 ne " + _token, [self, other], torch.bool, compute)

    def _logical_out(self, other, *, out, _token=_token):
        compute = torch.result_type(self, other)
        return _run("{0} 0 ne {1} 0 ne " + _token, [self, other], out.dtype, compute, out=out)

    impl(_name)(_logical)
    impl(_name + ".out")(_logical_out)


# --- selection, clamping and fused arithmetic ----------------------------------------------


@impl("where.self")
def where(condition, self, other):
    dtype = torch.result_type(self, other)
    return _run("{0} 0 ne {1} {2} where", [condition, self, other], dtype, dtype)


@impl("where.self_out")
def where_out(condition, self, other, *, out):
    dtype = torch.result_type(self, other)
    return _run("{0} 0 ne {1} {2} where", [condition, self, other], dtype, dtype, out=out)


@impl("masked_fill_.Scalar", "masked_fill_.Tensor")
def masked_fill_(self, mask, value):
    if mask.dtype != torch.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}")
    return _run("{1} 0 ne {2} {0} where", [self, mask, value], self.dtype, self.dtype, inplace=self)


def _clamp_template(min_value, max_value):
    program, index = "{0}", 1
    for bound, token in ((min_value, "max"), (max_value, "min")):
        if bound is not None:
            program += " {%d} %s" % (index, token)
            index += 1
    return program


def _clamp(self, min=None, max=None, out=None, inplace=False):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    bounds = [b for b in (min, max) if b is not None]
    dtype = self.dtype if inplace else torch.result_type(self, bounds[0]) if len(bounds) == 1 else \
        torch.promote_types(torch.result_type(self, bounds[0]), torch.result_type(self, bounds[1]))
    return _run(_clamp_template(min, max), [self, *bounds], dtype, dtype, out=out,
                inplace=self if inplace else None)


@impl("clamp", "clamp.Tensor")
def clamp(self, min=None, max=None):
    return _clamp(self, min, max)


@impl("clamp_", "clamp_.Tensor")
def clamp_(self, min=None, max=None):
    return _clamp(self, min, max, inplace=True)


@impl("clamp.out", "clamp.Tensor_out")
def clamp_out(self, min=None, max=None, *, out):
    return _clamp(self, min, max, out=out)


@impl("clamp_min", "clamp_min.Tensor")
def clamp_min(self, min):
    return _clamp(self, min, None)


@impl("clamp_min_", "clamp_min_.Tensor")
def clamp_min_(self, min):
    return _clamp(self, min, None, inplace=True)


@impl("clamp_max", "clamp_max.Tensor")
def clamp_max(self, max):
    return _clamp(self, None, max)


@impl("clamp_max_", "clamp_max_.Tensor")
def clamp_max_(self, max):
    return _clamp(self, None, max, inplace=True)


_LERP = "{0} {2} {1} {0} sub mul add"


@impl("lerp.Scalar", "lerp.Tensor")
def lerp(self, end, weight):
    return _run(_LERP, [self, end, weight], self.dtype, self.dtype)


@impl("lerp_.Scalar", "lerp_.Tensor")
def lerp_(self, end, weight):
    return _run(_LERP, [self, end, weight], self.dtype, self.dtype, inplace=self)


@impl("lerp.Scalar_out", "lerp.Tensor_out")
def lerp_out(self, end, weight, *, out):
    return _run(_LERP, [self, end, weight], self.dtype, self.dtype, out=out)


def _addc(token):
    return "{0} {1} {2} %s {3} mul add" % token


for _name, _token in (("addcmul", "mul"), ("addcdiv", "div")):

    def _fused(self, tensor1, tensor2, *, value=1, _token=_token):
        dtype = torch.promote_types(torch.promote_types(self.dtype, tensor1.dtype), tensor2.dtype)
        return _run(_addc(_token), [self, tensor1, tensor2, value], dtype, dtype)

    def _fused_(self, tensor1, tensor2, *, value=1, _token=_token):
        return _run(_addc(_token), [self, tensor1, tensor2, value], self.dtype, self.dtype, inplace=self)

    def _fused_out(self, tensor1, tensor2, *, value=1, out, _token=_token):
        dtype = torch.promote_types(torch.promote_types(self.dtype, tensor1.dtype), tensor2.dtype)
        return _run(_addc(_token), [self, tensor1, tensor2, value], dtype, dtype, out=out)

    impl(_name)(_fused)
    impl(_name + "_")(_fused_)
    impl(_name + ".out")(_fused_out)


# --- fills ---------------------------------------------------------------------------------


@impl("fill_.Scalar", "fill_.Tensor")
def fill_(self, value):
    if isinstance(value, torch.Tensor) and value.dim() != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.dim()} dimensions.")
    if self.dtype == torch.bool:
        return _run("{1} 0 ne", [self, value], torch.bool, _operand_dtype(value), inplace=self)
    return _run("{1}", [self, value], self.dtype, self.dtype, inplace=self)


def _operand_dtype(value):
    if isinstance(value, torch.Tensor):
        return compute_of(value.dtype)
    return torch.float32 if isinstance(value, float) else torch.int64


def compute_of(dtype):
    return torch.uint8 if dtype == torch.bool else dtype


@impl("zero_")
def zero_(self):
    return _run("0", [self], self.dtype, compute_of(self.dtype), inplace=self)


# --- activations and their backward --------------------------------------------------------

_GELU = "0.5 {0} mul {0} 0.7071067811865476 mul erf 1 add mul"
_GELU_TANH = "0.5 {0} mul {0} {0} {0} mul {0} mul 0.044715 mul add 0.7978845608028654 mul tanh 1 add mul"
_GELU_GRAD = ("{1} 0.7071067811865476 mul erf 1 add 0.5 mul "
              "{1} {1} {1} mul -0.5 mul exp mul 0.3989422804014327 mul add {0} mul")


def _tanh_gelu_grad():
    inner = "{1} {1} {1} mul {1} mul 0.044715 mul add 0.7978845608028654 mul tanh"
    # d/dx of 0.5x(1+t): 0.5(1+t) + 0.5x(1-t^2)(sqrt(2/pi))(1+3*0.044715x^2)
    return (f"{inner} 1 add 0.5 mul "
            f"0.5 {{1}} mul 1 {inner} {inner} mul sub mul "
            "0.7978845608028654 mul 1 {1} {1} mul 0.134145 mul add mul add {0} mul")


@impl("gelu")
def gelu(self, *, approximate="none"):
    return _run(_GELU_TANH if approximate == "tanh" else _GELU, [self], self.dtype, self.dtype)


@impl("gelu.out")
def gelu_out(self, *, approximate="none", out):
    return _run(_GELU_TANH if approximate == "tanh" else _GELU, [self], self.dtype, self.dtype, out=out)


@impl("gelu_backward")
def gelu_backward(grad_output, self, *, approximate="none"):
    program = _tanh_gelu_grad() if approximate == "tanh" else _GELU_GRAD
    return _run(program, [grad_output, self], self.dtype, self.dtype)


@impl("silu_backward")
def silu_backward(grad_output, self):
    program = "{0} {1} sigmoid mul 1 {1} 1 {1} sigmoid sub mul add mul"
    return _run(program, [grad_output, self], self.dtype, self.dtype)


@impl("sigmoid_backward")
def sigmoid_backward(grad_output, output):
    return _run("{0} 1 {1} sub mul {1} mul", [grad_output, output], output.dtype, output.dtype)


@impl("tanh_backward")
def tanh_backward(grad_output, output):
    return _run("{0} 1 {1} {1} mul sub mul", [grad_output, output], output.dtype, output.dtype)


@impl("threshold_backward")
def threshold_backward(grad_output, self, threshold):
    return _run("{1} {2} le 0 {0} where", [grad_output, self, threshold], grad_output.dtype,
                grad_output.dtype)


@impl("threshold")
def threshold(self, threshold, value):
    return _run("{0} {1} le {2} {0} where", [self, threshold, value], self.dtype, self.dtype)


@impl("leaky_relu")
def leaky_relu(self, negative_slope=0.01):
    return _run("{0} 0 gt {0} {0} {1} mul where", [self, negative_slope], self.dtype, self.dtype)


@impl("leaky_relu_")
def leaky_relu_(self, negative_slope=0.01):
    return _run("{0} 0 gt {0} {0} {1} mul where", [self, negative_slope], self.dtype, self.dtype,
                inplace=self)


@impl("leaky_relu_backward")
def leaky_relu_backward(grad_output, self, negative_slope, self_is_result):
    return _run("{1} 0 gt {0} {0} {2} mul where", [grad_output, self, negative_slope],
                grad_output.dtype, grad_output.dtype)



# --- more activations ----------------------------------------------------------------------

_ELU = "{0} 0 gt {0} {0} {3} mul exp 1 sub {1} mul where {2} mul"


@impl("elu")
def elu(self, alpha=1, scale=1, input_scale=1):
    return _run(_ELU, [self, alpha, scale, input_scale], self.dtype, self.dtype)


@impl("elu.out")
def elu_out(self, alpha=1, scale=1, input_scale=1, *, out):
    return _run(_ELU, [self, alpha, scale, input_scale], self.dtype, self.dtype, out=out)


def _elu_grad_template(is_result):
    if is_result:  # self_or_result holds the output y: for y <= 0, dy/dx = input_scale * (y + alpha*scale)
        return "{5} 0 gt {0} {2} mul {0} {4} mul {5} {1} {2} mul add mul where"
    return "{5} 0 gt {0} {2} mul {0} {4} mul {2} mul {1} mul {5} {4} mul exp mul where"


@impl("elu_backward")
def elu_backward(grad_output, alpha, scale, input_scale, is_result, self_or_result):
    return _run(_elu_grad_template(is_result),
                [grad_output, alpha, scale, input_scale, input_scale, self_or_result],
                grad_output.dtype, grad_output.dtype)


@impl("elu_backward.grad_input")
def elu_backward_out(grad_output, alpha, scale, input_scale, is_result, self_or_result, *, grad_input):
    return _run(_elu_grad_template(is_result),
                [grad_output, alpha, scale, input_scale, input_scale, self_or_result],
                grad_output.dtype, grad_output.dtype, out=grad_input)


# log(sigmoid(x)) = min(x, 0) - log(1 + exp(-|x|)), stable for large |x|
_LOG_SIGMOID = "{0} 0 min 0 {0} abs sub exp 1 add log sub"


@impl("log_sigmoid_forward")
def log_sigmoid_forward(self):
    buffer = empty((0,), self.dtype, self.device)
    return _run(_LOG_SIGMOID, [self], self.dtype, self.dtype), buffer


@impl("log_sigmoid_backward")
def log_sigmoid_backward(grad_output, self, buffer):
    return _run("{0} 0 {1} sub sigmoid mul", [grad_output, self], self.dtype, self.dtype)


@impl("round.decimals")
def round_decimals(self, *, decimals):
    return _run("{0} {1} mul round {1} div", [self, 10.0 ** decimals], self.dtype, self.dtype)


@impl("round.decimals_out")
def round_decimals_out(self, *, decimals, out):
    return _run("{0} {1} mul round {1} div", [self, 10.0 ** decimals], self.dtype, self.dtype, out=out)
