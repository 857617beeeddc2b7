"""native_group_norm: each (sample, group) pair is a channel of a training-mode batch norm over
a batch of one, then the per-channel affine.

PyTorch 1.13 runs that composite itself for other backends, and for an empty batch it hands batch
norm zero channels, on which the CPU's batch norm (the fallback of dtypes the device cannot
compute) divides by zero. Here an empty input gives empty results at once, and dtypes the device
cannot compute go to the CPU's own group norm kernel."""
import torch

from ._lib import FLOAT_DTYPES, Unsupported, impl


@impl("native_group_norm")
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    if input.dtype not in FLOAT_DTYPES or any(
            t is not None and t.dtype != input.dtype for t in (weight, bias)):
        raise Unsupported()
    if input.numel() == 0:
        statistics = input.new_empty((N, group))
        return torch.empty_like(input), statistics, statistics.clone()
    folded = input.reshape(1, N * group, (C // group) * HxW)
    out, mean, rstd = torch.ops.aten.native_batch_norm(folded, None, None, None, None, True, 0.0,
                                                       eps)
    out = out.reshape(input.shape)
    per_channel = (1, C) + (1,) * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(per_channel)
    if bias is not None:
        out = out + bias.reshape(per_channel)
    return out, mean.reshape(N, group), rstd.reshape(N, group)
