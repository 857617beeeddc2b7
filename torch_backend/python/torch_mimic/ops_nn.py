"""Softmax and log-softmax with their backward on the fused row primitives, and dropout on the
elementwise one. Float16 and bfloat16 compute in float32, as PyTorch's CPU kernels do."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, empty, impl, launch, prepare_out
from ._random import next_key

_ops = torch.ops.mimic
_F32 = torch.float32

_TYPE_NAMES = {torch.int64: "Long", torch.int32: "Int", torch.int16: "Short", torch.int8: "Char",
               torch.uint8: "Byte", torch.bool: "Bool"}


def require_float(x, kernel):
    """float64 runs on the CPU (counted fallback); other non-float dtypes fail as on the CPU."""
    if x.dtype == torch.float64:
        raise Unsupported()
    if x.dtype not in FLOAT_DTYPES:
        raise RuntimeError(f'"{kernel}" not implemented for \'{_TYPE_NAMES.get(x.dtype, x.dtype)}\'')


def _wrap_dim(dim, rank):
    rank = max(rank, 1)
    if not -rank <= dim < rank:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {dim})")
    return dim % rank


def _as_vector(x):
    # PyTorch normalizes a 0-dim tensor as a one-element vector.
    return x if x.dim() > 0 else x.view(1)


# --- softmax -------------------------------------------------------------------------------


def _softmax_dtype(x, half_to_float):
    """half_to_float (the CUDA convention; PyTorch's CPU kernel rejects it) gives a float32
    result for a float16 input."""
    if not half_to_float:
        return x.dtype
    if x.dtype != torch.float16:
        raise RuntimeError("conversion is supported for Half type only")
    return _F32


def _row_views(tensors, dim):
    """``tensors`` (all of one shape) as [G, C, N] views with N along ``dim``, as the row kernels
    take them (torch_backend/ops/row.h): the other dims merged into two where every tensor's
    strides allow it, or None."""
    shape = tensors[0].shape
    groups = []
    for d in range(len(shape)):
        if d == dim or shape[d] == 1:
            continue
        if groups and all(t.stride(groups[-1][-1]) == t.stride(d) * shape[d] for t in tensors):
            groups[-1].append(d)
        else:
            groups.append([d])
    if len(groups) > 2:
        return None
    views = []
    for t in tensors:
        kept = [(1, 0)] * (2 - len(groups))
        for group in groups:
            size = 1
            for d in group:
                size *= shape[d]
            kept.append((size, t.stride(group[-1])))
        views.append(t.as_strided((kept[0][0], kept[1][0], shape[dim]),
                                  (kept[0][1], kept[1][1], t.stride(dim))))
    return views


def run_rows(primitive, outputs, inputs, dim, *args):
    """Runs a row primitive, ``primitive(*outputs, *inputs, *args)``, on [G, C, N] views. Views
    whose dims cannot be merged (a permuted tensor, say) are made contiguous first."""
    views = _row_views(list(outputs) + list(inputs), dim)
    if views is not None:
        primitive(*views, *args)
        return
    inputs = [t.contiguous() for t in inputs]
    targets = [o if o.is_contiguous() else empty(o.shape, o.dtype, o.device) for o in outputs]
    primitive(*_row_views(targets + inputs, dim), *args)
    for output, target in zip(outputs, targets):
        if target is not output:
            output.copy_(target)


def _require_float_out(out):
    if out.dtype not in FLOAT_DTYPES:
        raise Unsupported()  # a float64 out= target: the CPU kernel writes it


def _softmax_into(out, x, dim, log):
    """out = softmax(x) or log_softmax(x) along dim: one fused row kernel (max, the sum of
    exp(x - max) in float32, and the outputs, from one read of each row)."""
    _require_float_out(out)
    if x.numel() == 0:
        return out
    run_rows(_ops.softmax, [_as_vector(out)], [_as_vector(x)], dim, log)
    return out


def _register_softmax(name, log):
    kernel = f"{name.lstrip('_')}_lastdim_kernel_impl"

    def functional(self, dim, half_to_float):
        require_float(self, kernel)
        dim = _wrap_dim(dim, self.dim())
        out = empty(self.shape, _softmax_dtype(self, half_to_float), self.device)
        return _softmax_into(out, self, dim, log)

    def out_variant(self, dim, half_to_float, *, out):
        require_float(self, kernel)
        dim = _wrap_dim(dim, self.dim())
        prepare_out(out, self.shape, _softmax_dtype(self, half_to_float))
        return _softmax_into(out, self, dim, log)

    impl(name)(functional)
    impl(name + ".out")(out_variant)


_register_softmax("_softmax", log=False)
_register_softmax("_log_softmax", log=True)


def _softmax_grad_into(grad_input, grad_output, output, dim, log):
    """softmax: dx = y (dy - sum(dy y)); log_softmax: dx = dy - exp(y) sum(dy): one fused row
    kernel."""
    _require_float_out(grad_input)
    if output.numel() == 0:
        return grad_input
    run_rows(_ops.softmax_backward, [_as_vector(grad_input)], [_as_vector(grad_output), _as_vector(output)],
             dim, log)
    return grad_input


def _check_grad_shapes(grad_output, output):
    if grad_output.shape != output.shape:
        raise RuntimeError(f"grad_output and output must have the same shape, got {list(grad_output.shape)} "
                           f"and {list(output.shape)}")


def _register_softmax_backward(name, log):
    def functional(grad_output, output, dim, input_dtype):
        _check_grad_shapes(grad_output, output)
        require_float(output, name)
        grad_input = empty(output.shape, input_dtype, output.device)
        return _softmax_grad_into(grad_input, grad_output, output, _wrap_dim(dim, output.dim()), log)

    # The out argument is `grad_input` for _softmax_backward_data.out, `out` for the log one.
    def out_variant(grad_output, output, dim, input_dtype, *, out=None, grad_input=None):
        _check_grad_shapes(grad_output, output)
        require_float(output, name)
        target = prepare_out(grad_input if out is None else out, output.shape, input_dtype)
        return _softmax_grad_into(target, grad_output, output, _wrap_dim(dim, output.dim()), log)

    impl(name)(functional)
    impl(name + ".out")(out_variant)


_register_softmax_backward("_softmax_backward_data", log=False)
_register_softmax_backward("_log_softmax_backward_data", log=True)


# --- dropout -------------------------------------------------------------------------------


@impl("native_dropout")
def native_dropout(input, p, train):
    if train is not None and not train:
        return input.clone(), torch.ones(input.shape, dtype=torch.bool, device=input.device)
    keep = 1.0 - p
    if not 0 <= keep <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={keep}")
    # Dropping everything would scale by 1/0: PyTorch scales by 0 instead.
    scale = 0.0 if keep == 0 else 1.0 / keep
    mask = empty(input.shape, torch.bool, input.device)
    key = next_key(input.device.index or 0, input.numel())
    launch(mask, [], "rand s0 lt", _F32, [keep], key)
    output = empty(input.shape, input.dtype, input.device)
    return launch(output, [input, mask], "x0 x1 mul s0 mul", input.dtype, [scale]), mask


@impl("native_dropout_backward")
def native_dropout_backward(grad_output, mask, scale):
    grad_input = empty(grad_output.shape, grad_output.dtype, grad_output.device)
    return launch(grad_input, [grad_output, mask], "x0 x1 mul s0 mul", grad_output.dtype, [scale])
