"""Losses with their backward: nll_loss (2-D and spatial) on gather and scatter, and mse_loss.
cross_entropy reaches nll_loss through PyTorch's decomposition into log_softmax and nll_loss.

Nothing is read back to the host: the reductions stay on the device. A target outside
[0, classes) that is not ignore_index is found by the device, as on CUDA: the gather faults on
it, and the next synchronizing call raises the device's error naming the gather kernel."""
import torch

from ._lib import empty, impl, launch
from .ops_nn import require_float
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32
_NONE, _MEAN, _SUM = 0, 1, 2  # at::Reduction


def _all_dims(x):
    return list(range(x.dim()))


# --- nll_loss ------------------------------------------------------------------------------


def _check_nll(self, target, weight):
    if self.dim() not in (1, 2):
        raise RuntimeError("input tensor should be 1D or 2D")
    if target.dim() > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if not (self.dim() == 1 and target.dim() == 0) and self.shape[0] != target.shape[0]:
        raise RuntimeError(f"size mismatch (got input: {list(self.shape)}, target: {list(target.shape)})")
    _check_weight_and_target(self, target, weight, byte_target=True)


def _check_nll2d(self, target, weight):
    if self.dim() != 4:
        raise RuntimeError(f"only batches of spatial inputs supported (4D tensors), but got input of dimension: "
                           f"{self.dim()}")
    if target.dim() != 3:
        raise RuntimeError(f"only batches of spatial targets supported (3D tensors) but got targets of dimension: "
                           f"{target.dim()}")
    if self.shape[0] != target.shape[0] or self.shape[2:] != target.shape[1:]:
        raise RuntimeError(f"input and target batch or spatial sizes don't match: target {list(target.shape)}, "
                           f"input {list(self.shape)}")
    _check_weight_and_target(self, target, weight)


# c10's names of the dtypes, which PyTorch's dtype errors print.
_SCALAR_TYPE_NAMES = {torch.uint8: "Byte", torch.int8: "Char", torch.int16: "Short", torch.int32: "Int",
                      torch.int64: "Long", torch.float16: "Half", torch.float32: "Float", torch.float64: "Double",
                      torch.bool: "Bool", torch.bfloat16: "BFloat16"}


def _check_weight_and_target(self, target, weight, byte_target=False):
    """PyTorch's CPU nll_loss takes Long or Byte targets, nll_loss2d Long only."""
    if target.dtype != torch.int64 and not (byte_target and target.dtype == torch.uint8):
        raise RuntimeError("expected scalar type Long but found "
                           + _SCALAR_TYPE_NAMES.get(target.dtype, str(target.dtype)))
    classes = self.shape[0 if self.dim() == 1 else 1]
    if weight is not None and weight.numel() != classes:
        raise RuntimeError(f"weight tensor should be defined either for all {classes} classes or no classes but got "
                           f"weight tensor of shape: {list(weight.shape)}")
    require_float(self, "nll_loss_out_frame")


def _batched(self, target):
    """The loss as [N, C, *] input and [N, *] target. An unbatched [C] input takes its class
    from the first target element, as PyTorch's kernel does."""
    if self.dim() == 1:
        return self.unsqueeze(0), target.reshape(-1)[:1]
    return self, target


class _Targets:
    """What forward and backward share: the kept mask, the targets with ignored ones replaced by
    class 0 (so that gather and scatter stay in bounds) and the class weights w[t] (0 where
    ignored), float32, all shaped like the target."""

    def __init__(self, target, weight, ignore_index):
        device = target.device
        self.kept = launch(empty(target.shape, torch.bool, device), [target], "x0 s0 ne", torch.int64,
                           [ignore_index])
        self.safe = launch(empty(target.shape, torch.int64, device), [target, self.kept], "x1 x0 0 where",
                           torch.int64)
        self.weights = empty(target.shape, _F32, device)
        if weight is None:
            launch(self.weights, [self.kept], "x0", _F32)
        else:
            class_weights = torch.index_select(weight, 0, self.safe.reshape(-1)).view(target.shape)
            launch(self.weights, [self.kept, class_weights], "x0 x1 0 where", _F32)

    def index(self):
        """The targets as a gather/scatter index along the class dim 1."""
        return self.safe.unsqueeze(1)


def _nll_forward(self, target, weight, reduction, ignore_index):
    x, t = _batched(self, target)
    targets = _Targets(t, weight, ignore_index)
    picked = empty(targets.index().shape, x.dtype, x.device)
    if picked.numel() > 0:
        _ops.gather(picked, x, 1, targets.index())
    losses = launch(empty(t.shape, _F32, x.device), [picked.squeeze(1), targets.weights, targets.kept],
                    "x2 x0 x1 mul neg 0 where", _F32)
    if reduction == _NONE and self.dim() > 1:
        return losses.to(x.dtype), torch.zeros((), dtype=x.dtype, device=x.device)
    # An unbatched input gives a scalar even without reduction.
    total = reduce_into("sum", losses, _all_dims(losses), _F32).view(())
    total_weight = reduce_into("sum", targets.weights, _all_dims(t), _F32).view(())
    output = empty((), x.dtype, x.device)
    if reduction == _MEAN:
        launch(output, [total, total_weight], "x0 x1 div", _F32)
    else:
        launch(output, [total], "x0", _F32)
    return output, total_weight.to(x.dtype)


def _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    x, t = _batched(self, target)
    targets = _Targets(t, weight, ignore_index)
    if reduction == _NONE and self.dim() > 1:
        if grad_output.shape != t.shape:
            raise RuntimeError(f"Expected a tensor of shape {list(t.shape)} but got: {list(grad_output.shape)}")
        program, inputs = "x2 x1 neg x0 mul 0 where", [targets.weights, grad_output, targets.kept]
    elif reduction == _MEAN:
        program = "x2 x1 x3 div neg x0 mul 0 where"
        inputs = [targets.weights, grad_output.view(()), targets.kept, total_weight.to(x.device)]
    else:
        program, inputs = "x2 x1 neg x0 mul 0 where", [targets.weights, grad_output.view(()), targets.kept]
    values = launch(empty(t.shape, x.dtype, x.device), inputs, program, _F32)
    grad_input = torch.zeros(x.shape, dtype=x.dtype, device=x.device)
    if values.numel() > 0:
        # Every row holds one target, so a plain scatter writes each gradient once.
        _ops.scatter(grad_input, 1, targets.index(), values.unsqueeze(1), False)
    return grad_input.view(self.shape)


@impl("nll_loss_forward")
def nll_loss_forward(self, target, weight, reduction, ignore_index):
    _check_nll(self, target, weight)
    return _nll_forward(self, target, weight, reduction, ignore_index)


@impl("nll_loss_backward")
def nll_loss_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll(self, target, weight)
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)


@impl("nll_loss2d_forward")
def nll_loss2d_forward(self, target, weight, reduction, ignore_index):
    _check_nll2d(self, target, weight)
    return _nll_forward(self, target, weight, reduction, ignore_index)


@impl("nll_loss2d_backward")
def nll_loss2d_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight):
    _check_nll2d(self, target, weight)
    return _nll_backward(grad_output, self, target, weight, reduction, ignore_index, total_weight)


# --- mse_loss ------------------------------------------------------------------------------

_SQUARED_ERROR = "x0 x1 sub x0 x1 sub mul"


@impl("mse_loss")
def mse_loss(self, target, reduction=_MEAN):
    shape = torch.broadcast_shapes(self.shape, target.shape)
    dtype = torch.result_type(self, target)
    if reduction == _NONE:
        return launch(empty(shape, dtype, self.device), [self, target], _SQUARED_ERROR, dtype)
    squares = launch(empty(shape, _F32, self.device), [self, target], _SQUARED_ERROR, _F32)
    total = reduce_into("sum", squares, _all_dims(squares), _F32).view(())
    count = squares.numel()
    # The mean of nothing is NaN, as on the CPU.
    factor = 1.0 if reduction == _SUM else (1.0 / count if count else float("nan"))
    return launch(empty((), dtype, self.device), [total], "x0 s0 mul", _F32, [factor])


@impl("mse_loss_backward")
def mse_loss_backward(grad_output, self, target, reduction):
    count = self.numel()
    norm = 2.0 / count if reduction == _MEAN and count else 2.0
    grad_input = empty(self.shape, self.dtype, self.device)
    return launch(grad_input, [self, target, grad_output], "x0 x1 sub s0 mul x2 mul", _F32, [norm])
