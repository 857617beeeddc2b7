"""Rank programs for test_sharded_training.py: DDP with ZeroRedundancyOptimizer and the
tensor-parallel layers of examples/scale/tensor_parallel.py, on the c10d backend "mimic". The
same program runs in full and in timing-only mode (MIMIC_MODE=timing), so that their simulated
times can be compared step by step; only the full mode's values mean anything."""
import copy
import importlib.util
import os

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.nn.parallel import DistributedDataParallel as DDP

from dist_timing_workers import _host_view, _mode
from dist_workers import _error_of, _init

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_spec = importlib.util.spec_from_file_location(
    "tensor_parallel", os.path.join(ROOT, "examples", "scale", "tensor_parallel.py"))
tp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tp)

STEPS = 3
# eps far above float32's rounding of the gradients: AdamW's update then moves by at most
# 2 * lr / eps per unit of gradient error (test_sharded_training derives its tolerance from it).
ADAMW = {"lr": 0.01, "eps": 1e-4, "weight_decay": 0.01}
TP_SIZE = {"d_model": 64, "heads": 4, "batch": 2, "seq": 8}


def _synchronized_time():
    import torch_mimic

    torch_mimic.synchronize()
    return torch_mimic.sim_time()


def _floats(tensor):
    """The simulator's bytes of a float32 device tensor, as a writable CPU tensor."""
    return _host_view(tensor).view(torch.float32)


def _overwrite(tensors, rank):
    """Writes a per-rank pattern into the device bytes of each tensor (after the queued work):
    the copies of the pattern, to compare with afterwards."""
    import torch_mimic

    torch_mimic.synchronize()
    patterns = []
    for i, tensor in enumerate(tensors):
        floats = _floats(tensor)
        floats.copy_((torch.arange(floats.numel()) % 7 + 1) * 0.01 * (rank + 1) + i)
        patterns.append(floats.clone())
    return patterns


def _changed(tensors, patterns):
    import torch_mimic

    torch_mimic.synchronize()
    return sum(not torch.equal(_floats(t), p) for t, p in zip(tensors, patterns))


# ---------------------------------------------------------------------------------------------
# DDP + ZeroRedundancyOptimizer(AdamW), against the same on Gloo/CPU.


def _zero_model():
    return nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(),
                         nn.Linear(64, 8))


def _zero_step(model, optimizer, inputs, targets):
    optimizer.zero_grad()
    F.mse_loss(model(inputs), targets).backward()
    optimizer.step()


def _max_diff(tensors, references):
    return max((a.detach().cpu() - b.detach()).abs().max().item()
               for a, b in zip(tensors, references))


def _zero_training(rank, dev, gloo):
    """STEPS steps on mimic and on Gloo/CPU from the same weights and batches: per step the
    simulated time and the largest gradient difference; then the parameters' difference and
    which parameters this rank's optimizer keeps state for; then one more step with every
    parameter's device bytes overwritten first, counting the parameters whose bytes it
    changed (an update or a broadcast writes them; timing mode computes no update)."""
    torch.manual_seed(0)
    template = _zero_model()
    generator = torch.Generator().manual_seed(100 + rank)
    batches = [(torch.randn(16, 32, generator=generator), torch.randn(16, 8, generator=generator))
               for _ in range(STEPS + 1)]
    on_mimic = DDP(copy.deepcopy(template).to(dev))
    on_cpu = DDP(copy.deepcopy(template), process_group=gloo)
    mimic_zero = ZeroRedundancyOptimizer(on_mimic.parameters(), torch.optim.AdamW, **ADAMW)
    cpu_zero = ZeroRedundancyOptimizer(on_cpu.parameters(), torch.optim.AdamW,
                                       process_group=gloo, **ADAMW)
    params, cpu_params = list(on_mimic.parameters()), list(on_cpu.parameters())
    step_ns, grad_diffs = [], []
    for inputs, targets in batches[:STEPS]:
        _zero_step(on_cpu, cpu_zero, inputs, targets)
        start = _synchronized_time()
        _zero_step(on_mimic, mimic_zero, inputs.to(dev), targets.to(dev))
        step_ns.append(_synchronized_time() - start)
        grad_diffs.append(_max_diff([p.grad for p in params], [p.grad for p in cpu_params]))
    index = {p: i for i, p in enumerate(params)}
    states = mimic_zero.optim.state
    result = {"step_ns": step_ns, "grad_diffs": grad_diffs,
              "param_diff": _max_diff(params, cpu_params),
              "moved": _max_diff(cpu_params, template.parameters()),
              "sizes": [p.numel() for p in params],
              "state_params": sorted(index[p] for p in states),
              "state_elements": sum(s["exp_avg"].numel() + s["exp_avg_sq"].numel()
                                    for s in states.values())}
    patterns = _overwrite(params, rank)
    inputs, targets = batches[STEPS]
    _zero_step(on_mimic, mimic_zero, inputs.to(dev), targets.to(dev))
    result["params_written"] = _changed(params, patterns)
    return result


# ---------------------------------------------------------------------------------------------
# A tensor-parallel decoder block against cli/mimic_cli/demo_model.py's Block.


class TensorParallelBlock(nn.Module):
    """demo_model.Block with its attention and MLP split across the ranks: the same parameters
    drawn in the same order."""

    def __init__(self, d_model, heads):
        super().__init__()
        self.norm1 = nn.LayerNorm(d_model)
        self.attention = tp.TensorParallelAttention(d_model, heads)
        self.norm2 = nn.LayerNorm(d_model)
        self.mlp = tp.TensorParallelMLP(d_model, 4 * d_model)

    def forward(self, x, causal_mask):
        x = x + self.attention(self.norm1(x), causal_mask)
        return x + self.mlp(self.norm2(x))


# The reference parameter of each tensor-parallel one, and how each rank's share is cut from it
# (tensor_parallel's layout): "rows" of output features, "rows3" of each of q, k and v, "columns"
# of input features, or all of it (replicated).
_SHARDS = {"attention.qkv.weight": ("qkv.weight", "rows3"), "attention.qkv.bias": ("qkv.bias",
           "rows3"), "attention.proj.weight": ("proj.weight", "columns"),
           "attention.proj.bias": ("proj.bias", None), "mlp.fc1.weight": ("fc1.weight", "rows"),
           "mlp.fc1.bias": ("fc1.bias", "rows"), "mlp.fc2.weight": ("fc2.weight", "columns"),
           "mlp.fc2.bias": ("fc2.bias", None)}


def _share(full, cut, rank, size):
    if cut == "rows":
        return full.chunk(size, 0)[rank]
    if cut == "rows3":
        return torch.cat([block.chunk(size, 0)[rank] for block in full.chunk(3, 0)])
    if cut == "columns":
        return full.chunk(size, 1)[rank]
    return full


def _block_pair(dev):
    from mimic_cli.demo_config import ModelSize
    from mimic_cli.demo_model import Block

    d_model, heads = TP_SIZE["d_model"], TP_SIZE["heads"]
    torch.manual_seed(1)
    reference = Block(ModelSize(vocab=1, d_model=d_model, heads=heads, layers=1, seq_len=1,
                                batch=1)).to(dev)
    torch.manual_seed(1)
    return reference, TensorParallelBlock(d_model, heads).to(dev)


def _run_block(block, x, causal_mask):
    """Forward and backward of a sum of the output weighted by position (so that every output
    element has its own gradient): the output and the input's gradient."""
    x = x.detach().requires_grad_()
    y = block(x, causal_mask)
    (y * torch.linspace(-1, 1, y.numel(), device=y.device).view_as(y)).sum().backward()
    return y, x.grad


def _tensor_parallel(rank, size, dev):
    """The block on both ranks and the unsharded one on this rank's device, from the same input:
    the largest difference and the reference's largest magnitude, [diff, largest], of the
    output, the input's gradient and each parameter's gradient; the simulated time of each of STEPS
    forward + backward passes of the tensor-parallel block; then one more pass with every
    all_reduce's tensor overwritten before it, counting those the all_reduce wrote."""
    reference, block = _block_pair(dev)
    generator = torch.Generator().manual_seed(7)  # the same input on every rank
    x = torch.randn(TP_SIZE["batch"], TP_SIZE["seq"], TP_SIZE["d_model"],
                    generator=generator).to(dev)
    seq = TP_SIZE["seq"]
    causal_mask = torch.full((seq, seq), float("-inf"), device=dev).triu(1)
    want_y, want_grad = _run_block(reference, x, causal_mask)
    step_ns = []
    for _ in range(STEPS):
        block.zero_grad()
        start = _synchronized_time()
        y, grad = _run_block(block, x, causal_mask)
        step_ns.append(_synchronized_time() - start)

    def difference(got, want):
        want = want.detach().cpu()
        return [(got.detach().cpu() - want).abs().max().item(), want.abs().max().item()]

    wanted = dict(reference.named_parameters())
    diffs = {"output": difference(y, want_y), "input grad": difference(grad, want_grad)}
    for name, param in block.named_parameters():
        reference_name, cut = _SHARDS.get(name, (name, None))
        diffs[name] = difference(param.grad,
                                 _share(wanted[reference_name].grad, cut, rank, size))
    return {"diffs": diffs, "step_ns": step_ns,
            "all_reduces_written": _all_reduces_written(rank, block, x, causal_mask)}


def _all_reduces_written(rank, block, x, causal_mask):
    """[whether each all_reduce of one forward + backward pass wrote its tensor]."""
    written = []
    all_reduce = dist.all_reduce

    def watched(tensor, *args, **kwargs):
        patterns = _overwrite([tensor], rank)
        work = all_reduce(tensor, *args, **kwargs)
        written.append(_changed([tensor], patterns) == 1)
        return work

    dist.all_reduce = watched
    try:
        _run_block(block, x, causal_mask)
    finally:
        dist.all_reduce = all_reduce
    return written


# ---------------------------------------------------------------------------------------------
# Ranks that disagree on shapes.


def _mismatched_shapes(rank, dev):
    """A tensor-parallel input of another batch size on rank 1, and a ZeRO model one output
    wider on rank 1: the errors' texts (None: no error)."""
    d_model, heads = TP_SIZE["d_model"], TP_SIZE["heads"]
    attention = tp.TensorParallelAttention(d_model, heads, device=dev)
    x = torch.randn(2 + rank, 4, d_model).to(dev)
    errors = {"tensor parallel": _error_of(
        lambda: attention(x, torch.zeros(4, 4, device=dev)).sum().backward())}
    model = nn.Linear(4, 8 + rank).to(dev)
    zero = ZeroRedundancyOptimizer(model.parameters(), torch.optim.AdamW, **ADAMW)
    model(torch.ones(2, 4, device=dev)).sum().backward()
    errors["zero"] = _error_of(zero.step)
    return errors


def every_check(rank, size, mode):
    """All of the above in one group (a rank process costs seconds to start). ZeRO (under DDP)
    runs first: DDP's parameter check leaves the caching allocator as full mode's does, so the
    tensor-parallel block after it must take full mode's times too."""
    _mode(mode)
    dev = _init(rank, size)
    gloo = dist.new_group(backend="gloo")
    zero = _zero_training(rank, dev, gloo)
    return {"tensor_parallel": _tensor_parallel(rank, size, dev), "zero": zero,
            "errors": _mismatched_shapes(rank, dev)}
