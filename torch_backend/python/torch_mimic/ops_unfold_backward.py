"""unfold_backward, the gradient of Tensor.unfold(dim, size, step): window j's element k came
from input position j step + k along dim, so the windows, laid out along dim, are summed into a
zeroed input by one index_add (overlapping windows add up)."""
import torch

from ._lib import Unsupported, impl
from .ops_complex import by_parts


@impl("unfold_backward")
def unfold_backward(grad_in, input_sizes, dim, size, step):
    if grad_in.dtype == torch.complex64:
        return by_parts(lambda part: unfold_backward(part, input_sizes, dim, size, step), grad_in)
    if grad_in.dtype != torch.float32:
        raise Unsupported()  # the CPU fallback keeps its dtype support
    input_sizes = list(input_sizes)
    if not input_sizes:
        return grad_in.reshape(()).clone()  # a 0-dim input unfolds into its one element
    dim = dim % len(input_sizes)
    windows = grad_in.shape[dim]
    result = torch.zeros(input_sizes, dtype=grad_in.dtype, device=grad_in.device)
    if windows == 0 or size == 0 or result.numel() == 0:
        return result
    positions = (torch.arange(windows, dtype=torch.int64).unsqueeze(1) * step
                 + torch.arange(size, dtype=torch.int64)).reshape(-1)
    laid_out = grad_in.movedim(-1, dim + 1).flatten(dim, dim + 1)
    return result.index_add_(dim, positions.to(grad_in.device), laid_out)
