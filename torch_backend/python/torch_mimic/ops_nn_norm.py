"""Layer norm with its backward on the fused row primitives, batch norm with its backward on the
reduce and elementwise ones. Statistics accumulate in float32 with a two-pass variance (the mean
first, then the mean squared deviation), which stays accurate where a one-pass E[x^2] - E[x]^2
would cancel."""
import torch

from ._lib import empty, impl, launch
from .ops_nn import require_float
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32


def _float_buffer(shape, device):
    return empty(shape, _F32, device)


def _affine_program(base, inputs, weight, bias):
    """Appends `* weight + bias` to an elementwise program over ``inputs`` for the parameters
    that are given; returns the program and the inputs."""
    program, inputs = base, list(inputs)
    for tensor, token in ((weight, "mul"), (bias, "add")):
        if tensor is not None:
            program += f" x{len(inputs)} {token}"
            inputs.append(tensor)
    return program, inputs


def _mean_and_rstd(x, dims, eps):
    """float32 mean and 1/sqrt(biased variance + eps) of x over dims, keepdim-shaped; also the
    variance sum, which batch norm needs for its unbiased running variance."""
    count = _count(x, dims)
    mean = reduce_into("sum", x, dims, _F32)
    launch(mean, [mean], "x0 s0 mul", _F32, [_reciprocal(count)])
    squares = launch(_float_buffer(x.shape, x.device), [x, mean], "x0 x1 sub x0 x1 sub mul", _F32)
    variance_sum = reduce_into("sum", squares, dims, _F32)
    rstd = launch(_float_buffer(mean.shape, x.device), [variance_sum], "x0 s0 mul s1 add rsqrt", _F32,
                  [_reciprocal(count), eps])
    return mean, rstd, variance_sum


def _count(x, dims):
    count = 1
    for d in dims:
        count *= x.shape[d]
    return count


def _reciprocal(count):
    # Statistics of nothing are NaN, as on the CPU.
    return 1.0 / count if count else float("nan")


# --- layer norm ----------------------------------------------------------------------------


def _check_layer_norm(input, normalized_shape, weight, bias):
    normalized_shape = list(normalized_shape)
    if not normalized_shape:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one "
                           f"element, but got normalized_shape = {normalized_shape}")
    for name, tensor in (("weight", weight), ("bias", bias)):
        if tensor is not None and list(tensor.shape) != normalized_shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got {name} of shape "
                               f"{list(tensor.shape)} and normalized_shape = {normalized_shape}")
    axis = input.dim() - len(normalized_shape)
    if axis < 0 or list(input.shape[axis:]) != normalized_shape:
        raise RuntimeError(f"Given normalized_shape={normalized_shape}, expected input with shape "
                           f"[*, {', '.join(map(str, normalized_shape))}], but got input of size{list(input.shape)}")
    require_float(input, "LayerNormKernelImpl")
    return axis


def _rows(input, axis):
    """input as [rows, cols]: the leading dims against the normalized ones."""
    cols = 1
    for size in input.shape[axis:]:
        cols *= size
    return input.reshape(-1, cols)


def _stat_shape(input, axis):
    return list(input.shape[:axis]) + [1] * (input.dim() - axis)


@impl("native_layer_norm")
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """One fused row kernel: mean, rstd (two-pass, float32) and the affine output."""
    axis = _check_layer_norm(input, normalized_shape, weight, bias)
    output = empty(input.shape, input.dtype, input.device)
    stat_shape = _stat_shape(input, axis)
    mean = empty(stat_shape, input.dtype, input.device)
    rstd = empty(stat_shape, input.dtype, input.device)
    if input.numel() == 0:
        return output, mean, rstd
    x = _rows(input, axis)
    rows = x.shape[0]
    _ops.layer_norm(output.view(x.shape).unsqueeze(0), mean.view(1, rows), rstd.view(1, rows), x.unsqueeze(0),
                    _vector(weight), _vector(bias), float(eps))
    return output, mean, rstd


def _vector(parameter):
    return None if parameter is None else parameter.reshape(-1)


@impl("native_layer_norm_backward")
def native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight, bias, output_mask):
    """One fused row kernel for the input gradient, which also leaves per-workgroup column sums
    that one reduction each turns into the weight and bias gradients."""
    axis = _check_layer_norm(input, normalized_shape, weight, bias)
    if input.numel() == 0:
        return _empty_grads(input, weight, bias, output_mask)
    x = _rows(input, axis)
    rows = x.shape[0]
    dy = grad_out.reshape(x.shape)
    grads = [None, None, None]
    if output_mask[0]:
        grads[0] = empty(input.shape, input.dtype, input.device)
    if output_mask[1] and weight is not None:
        grads[1] = empty(weight.shape, weight.dtype, weight.device)
    if output_mask[2] and bias is not None:
        grads[2] = empty(bias.shape, bias.dtype, bias.device)
    if any(g is not None for g in grads):
        _ops.layer_norm_backward(None if grads[0] is None else grads[0].view(x.shape).unsqueeze(0),
                                 _vector(grads[1]), _vector(grads[2]), dy.unsqueeze(0), x.unsqueeze(0),
                                 mean.reshape(1, rows), rstd.reshape(1, rows), _vector(weight))
    return tuple(grads)


def _empty_grads(input, weight, bias, output_mask):
    def zeros_like(t):
        return None if t is None else torch.zeros(t.shape, dtype=t.dtype, device=t.device)

    return (empty(input.shape, input.dtype, input.device) if output_mask[0] else None,
            zeros_like(weight) if output_mask[1] else None,
            zeros_like(bias) if output_mask[2] else None)


# --- batch norm ----------------------------------------------------------------------------


def _check_batch_norm(input, parameters):
    if input.dim() < 2:
        raise RuntimeError(f"batch_norm expects an input of at least 2 dims, got {input.dim()}")
    require_float(input, "batch_norm")
    channels = input.shape[1]
    for name, tensor in parameters.items():
        if tensor is not None and tensor.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {tensor.numel()}")


def _reduced_dims(input):
    return [0] + list(range(2, input.dim()))


def _per_channel(tensor, input):
    """A [C] tensor shaped [1, C, 1, ...] to broadcast against input."""
    return None if tensor is None else tensor.view([1, -1] + [1] * (input.dim() - 2))


def _stat_dtype(input, *parameters):
    """bfloat16 input with float32 parameters keeps float32 statistics, as on the CPU."""
    return next((p.dtype for p in parameters if p is not None), input.dtype)


def _update_running(running_mean, running_var, mean, variance_sum, count, momentum):
    """running = (1 - momentum) running + momentum batch, with the unbiased batch variance."""
    if running_mean is not None:
        launch(running_mean, [running_mean, mean.view(-1)], "x0 s0 mul x1 s1 mul add", _F32,
               [1.0 - momentum, momentum])
    if running_var is not None:
        # count 1 gives 0/0 = NaN, as on the CPU.
        launch(running_var, [running_var, variance_sum.view(-1)], "x0 s0 mul x1 s2 div s1 mul add", _F32,
               [1.0 - momentum, momentum, count - 1])


def _eval_stats(input, running_mean, running_var, eps):
    if running_mean is None or running_var is None:
        raise RuntimeError("running_mean and running_var must be defined in evaluation mode")
    invstd = launch(_float_buffer(running_var.shape, input.device), [running_var], "x0 s0 add rsqrt", _F32, [eps])
    return running_mean, invstd


@impl("native_batch_norm")
def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    _check_batch_norm(input, {"weight": weight, "bias": bias, "running_mean": running_mean,
                              "running_var": running_var})
    stat_dtype = _stat_dtype(input, weight, bias, running_mean, running_var)
    if training:
        dims = _reduced_dims(input)
        mean, invstd, variance_sum = _mean_and_rstd(input, dims, eps)
        _update_running(running_mean, running_var, mean, variance_sum, _count(input, dims), momentum)
        saved = (mean.view(-1).to(stat_dtype), invstd.view(-1).to(stat_dtype))
    else:
        mean, invstd = _eval_stats(input, running_mean, running_var, eps)
        saved = (empty((0,), stat_dtype, input.device), empty((0,), stat_dtype, input.device))
    program, inputs = _affine_program("x0 x1 sub x2 mul", [input, _per_channel(mean, input),
                                                            _per_channel(invstd, input)],
                                      _per_channel(weight, input), _per_channel(bias, input))
    output = launch(empty(input.shape, input.dtype, input.device), inputs, program, _F32)
    return (output,) + saved


@impl("native_batch_norm_backward")
def native_batch_norm_backward(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd,
                               train, eps, output_mask):
    _check_batch_norm(input, {"weight": weight})
    if train:
        mean, invstd = save_mean, save_invstd
    else:
        mean, invstd = _eval_stats(input, running_mean, running_var, eps)
    mean, invstd = _per_channel(mean, input), _per_channel(invstd, input)
    dims = _reduced_dims(input)
    grad_sum = reduce_into("sum", grad_out, dims, _F32)
    centered = launch(_float_buffer(input.shape, input.device), [grad_out, input, mean], "x1 x2 sub x0 mul", _F32)
    dot = reduce_into("sum", centered, dims, _F32)
    param_dtype = _stat_dtype(input, weight, running_mean)
    grads = [None, None, None]
    if output_mask[0]:
        grads[0] = _batch_norm_grad_input(grad_out, input, _per_channel(weight, input), mean, invstd, grad_sum,
                                          dot, train)
    if output_mask[1]:
        grads[1] = launch(empty((input.shape[1],), param_dtype, input.device), [dot.view(-1), invstd.view(-1)],
                          "x0 x1 mul", _F32)
    if output_mask[2]:
        grads[2] = grad_sum.view(-1).to(param_dtype)
    return tuple(grads)


def _batch_norm_grad_input(grad_out, input, weight, mean, invstd, grad_sum, dot, train):
    """train: dx = (dy - sum(dy)/n - (x - mean) invstd^2 sum(dy (x - mean))/n) invstd weight;
    eval (statistics are constants): dx = dy invstd weight."""
    if train:
        base = "x0 x4 s0 mul sub x1 x2 sub x3 x3 mul mul x5 s0 mul mul sub x3 mul"
        inputs = [grad_out, input, mean, invstd, grad_sum, dot]
    else:
        base, inputs = "x0 x1 mul", [grad_out, invstd]
    program, inputs = _affine_program(base, inputs, weight, None)
    grad_input = empty(input.shape, input.dtype, input.device)
    return launch(grad_input, inputs, program, _F32, [_reciprocal(_count(input, _reduced_dims(input)))])
