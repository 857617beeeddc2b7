"""The CPU-fallback report: which ops ran on the CPU because mimic has no kernel for them."""
import torch

_ops = torch.ops.mimic


def fallback_report():
    """A dict from op name (``aten::name.overload``) to how often it fell back to the CPU."""
    names, counts = _ops.fallback_report()
    return dict(zip(names, counts))


def reset_fallback_report():
    _ops.fallback_reset()
