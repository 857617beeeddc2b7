"""prelu and prelu_backward as device pointwise ops: x > 0 ? x : w x, with one weight per
channel (dimension 1) or one for all; the weight's gradient sums x g where x <= 0 over every
dimension but the channel's. Checks and their order are those of the CPU kernels
(aten/src/ATen/native/Activation.cpp)."""
import torch

from ._lib import Unsupported, impl


def _check(self, weight):
    if self.dtype != torch.float32 or weight.dtype != torch.float32:
        raise Unsupported()  # the CPU fallback keeps its dtype support and errors
    weight_num = weight.numel()
    if weight_num != 1:
        if self.dim() == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channel_size = self.shape[1] if self.dim() > 1 else 1
        if channel_size != weight_num:
            raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter numbers = "
                               f"{weight_num} and channel size = {channel_size}.")
    if weight.dim() > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got ndim = {weight.dim()}")


def _broadcast_weight(self, weight):
    """The weight shaped to broadcast against self along the channel dimension."""
    if weight.numel() == 1 or self.dim() < 2:
        return weight.reshape(())
    shape = [1] * self.dim()
    shape[1] = weight.numel()
    return weight.reshape(shape)


@impl("prelu")
def prelu(self, weight):
    _check(self, weight)
    w = _broadcast_weight(self, weight)
    return torch.where(self > 0, self, w * self)


@impl("prelu_backward")
def prelu_backward(grad_output, self, weight):
    if weight.dim() > 1:
        raise Unsupported()  # the CPU kernel fails an internal assert: its message is the reference
    _check(self, weight)
    if grad_output.dtype != torch.float32:
        raise Unsupported()
    w = _broadcast_weight(self, weight)
    positive = self > 0
    grad_input = torch.where(positive, grad_output, w * grad_output)
    contribution = torch.where(positive, torch.zeros((), device=self.device), self * grad_output)
    if weight.numel() == 1 or self.dim() < 2:
        grad_weight = contribution.sum().reshape(weight.shape)
    else:
        dims = [d for d in range(self.dim()) if d != 1]
        grad_weight = contribution.sum(dims).reshape(weight.shape)
    return grad_input, grad_weight
