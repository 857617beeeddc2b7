"""Megatron-style tensor-parallel layers over torch.distributed, on any device and backend.

A column-parallel linear layer holds a slice of the output features on each rank; a row-parallel
one holds a slice of the input features and sums the ranks' partial outputs with all_reduce.
Chained column -> row (the MLP's two layers, attention's qkv and output projections), they need
one all_reduce in the forward pass and one in the backward pass, and nothing in between: each
rank computes its own heads of attention and its own slice of the MLP's hidden layer.

Every layer takes ``group``, the torch.distributed process group whose ranks share the layer
(None: the default group, WORLD). All ranks of the group must call the layer with the same input.

Each rank's weights are the slice of the unsharded layer's: a layer draws the full weights as
``torch.nn.Linear`` of the same shape would at this point of the random stream, and keeps its
slice. So a model built under ``torch.manual_seed(s)`` computes what the same model built with
plain ``nn.Linear`` layers under the same seed computes (up to the order of float additions).
``device`` and ``dtype`` are nn.Linear's: the parameters are made there (the full weights too,
for a moment), by default on the CPU.

    import torch.distributed as dist, torch_mimic
    dist.init_process_group("mimic")
    mlp = TensorParallelMLP(d_model=1024, hidden=4096, device="privateuseone")
    attention = TensorParallelAttention(d_model=1024, heads=16, device="privateuseone")
"""
import math

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class _CopyToParallelRegion(torch.autograd.Function):
    """The input of column-parallel layers: the same on every rank, so the forward pass is the
    identity; each rank's gradient covers only its slice of the outputs, so the backward pass
    sums them."""

    @staticmethod
    def forward(ctx, x, group):
        ctx.group = group
        return x

    @staticmethod
    def backward(ctx, grad):
        # Reduced in place, as Megatron does: the layers below give this function's output a
        # single consumer, so its gradient is a fresh tensor that nothing else holds.
        grad = grad.contiguous()
        dist.all_reduce(grad, group=ctx.group)
        return grad, None


class _ReduceFromParallelRegion(torch.autograd.Function):
    """The output of row-parallel layers: each rank holds a partial sum, which the forward pass
    completes; the gradient of a sum reaches every term unchanged."""

    @staticmethod
    def forward(ctx, partial, group):
        dist.all_reduce(partial, group=group)
        ctx.mark_dirty(partial)
        return partial

    @staticmethod
    def backward(ctx, grad):
        return grad, None


def _rank_and_size(group):
    return dist.get_rank(group), dist.get_world_size(group)


def _split(count, what, size):
    if count % size:
        raise ValueError(f"{what} ({count}) must divide evenly across the {size} ranks of the "
                         "tensor-parallel group")
    return count // size


def _full_linear(in_features, out_features, bias, on):
    """The unsharded layer's parameters, drawn as nn.Linear draws them."""
    full = nn.Linear(in_features, out_features, bias=bias, **on)
    return full.weight.detach(), None if full.bias is None else full.bias.detach()


class ColumnParallelLinear(nn.Module):
    """y = x W^T + b with the output features split across the group: this rank returns its
    slice of y (rank r of p: features r*out/p .. (r+1)*out/p - 1).

    ``blocks`` > 1 treats the output as that many equal blocks stacked (attention's q, k and v)
    and splits each block: rank r then returns its slice of every block, concatenated."""

    def __init__(self, in_features, out_features, group=None, bias=True, blocks=1, device=None,
                 dtype=None):
        super().__init__()
        self.group = group
        rank, size = _rank_and_size(group)
        block = _split(out_features, "out_features", blocks)
        local = _split(block, "out_features per block", size)
        weight, full_bias = _full_linear(in_features, out_features, bias,
                                         {"device": device, "dtype": dtype})

        def rows(full):  # a new tensor: the full one is freed
            return torch.cat([full.narrow(0, b * block + rank * local, local)
                              for b in range(blocks)])

        self.weight = nn.Parameter(rows(weight))
        self.bias = None if full_bias is None else nn.Parameter(rows(full_bias))

    def forward(self, x):
        return F.linear(_CopyToParallelRegion.apply(x, self.group), self.weight, self.bias)


class RowParallelLinear(nn.Module):
    """y = x W^T + b with the input features split across the group: x is this rank's slice of
    the full input (as a ColumnParallelLinear returns it), y the whole output on every rank. The
    bias is added once, after the sum."""

    def __init__(self, in_features, out_features, group=None, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.group = group
        rank, size = _rank_and_size(group)
        local = _split(in_features, "in_features", size)
        weight, full_bias = _full_linear(in_features, out_features, bias,
                                         {"device": device, "dtype": dtype})
        self.weight = nn.Parameter(weight.narrow(1, rank * local, local).clone(
            memory_format=torch.contiguous_format))
        self.bias = None if full_bias is None else nn.Parameter(full_bias)

    def forward(self, x):
        y = _ReduceFromParallelRegion.apply(F.linear(x, self.weight), self.group)
        return y if self.bias is None else y + self.bias


class TensorParallelMLP(nn.Module):
    """GELU MLP d_model -> hidden -> d_model, the hidden layer split across the group: weights
    of nn.Linear(d_model, hidden) then nn.Linear(hidden, d_model)."""

    def __init__(self, d_model, hidden, group=None, device=None, dtype=None):
        super().__init__()
        on = {"device": device, "dtype": dtype}
        self.fc1 = ColumnParallelLinear(d_model, hidden, group, **on)
        self.fc2 = RowParallelLinear(hidden, d_model, group, **on)

    def forward(self, x):
        return self.fc2(F.gelu(self.fc1(x)))


class TensorParallelAttention(nn.Module):
    """Causal multi-head self-attention, the heads split across the group: weights of
    nn.Linear(d_model, 3 * d_model) (q, k, v stacked) then nn.Linear(d_model, d_model), as
    cli/mimic_cli/demo_model.py's Block. forward(x, causal_mask): x is batch x seq x d_model,
    causal_mask seq x seq, added to the scores (-inf above the diagonal)."""

    def __init__(self, d_model, heads, group=None, device=None, dtype=None):
        super().__init__()
        _, size = _rank_and_size(group)
        if d_model % heads:
            raise ValueError(f"d_model ({d_model}) must be a multiple of heads ({heads})")
        self.head_dim = d_model // heads
        self.local_heads = _split(heads, "heads", size)
        on = {"device": device, "dtype": dtype}
        self.qkv = ColumnParallelLinear(d_model, 3 * d_model, group, blocks=3, **on)
        self.proj = RowParallelLinear(d_model, d_model, group, **on)

    def forward(self, x, causal_mask):
        batch, seq, _ = x.shape
        q, k, v = (self.qkv(x).view(batch, seq, 3, self.local_heads, self.head_dim)
                   .permute(2, 0, 3, 1, 4))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim) + causal_mask
        attended = (scores.softmax(-1) @ v).transpose(1, 2).reshape(
            batch, seq, self.local_heads * self.head_dim)
        return self.proj(attended)
