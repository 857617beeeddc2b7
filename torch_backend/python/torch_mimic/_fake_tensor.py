"""Fake tensors of the mimic device dispatch to meta kernels.

PyTorch 1.13's FakeTensor carries the dispatch keys of the device it fakes and runs its kernels
with the Meta key added to the thread's include set. Meta outranks CUDA and the CPU, so a fake
tensor of either reaches meta kernels; PrivateUse1 outranks Meta, so a fake mimic tensor would
reach mimic's device kernels with no storage behind it (PyTorch 2 puts Meta above every backend
for this reason). A fake tensor on mimic therefore dispatches as a fake CPU tensor does; its
``device`` stays the mimic device, with the current device's index, as CUDA's does.

Not Meta's own keys: outside kernels, fake mode makes real inputs for ops that have no meta kernel
with ``zeros_like(fake, device=...)``, and 1.13's meta ``zeros_like`` never zeroes a result that
is not on the meta device.
"""
import torch

from ._naming import DEVICE_TYPE


def _fakes_mimic(device):
    return torch.device(device).type == DEVICE_TYPE


def install():
    if int(torch.__version__.split(".")[0]) >= 2:
        return
    from torch._subclasses.fake_tensor import FakeTensor

    new, init = FakeTensor.__new__, FakeTensor.__init__

    def __new__(cls, fake_mode, elem, device, constant=None):
        keys = torch.device("cpu") if _fakes_mimic(device) else device
        return new(cls, fake_mode, elem, keys, constant)

    def __init__(self, fake_mode, elem, device, constant=None):
        if _fakes_mimic(device) and torch.device(device).index is None:
            from ._device import current_device
            device = torch.device(DEVICE_TYPE, current_device())
        init(self, fake_mode, elem, device, constant)

    FakeTensor.__new__, FakeTensor.__init__ = staticmethod(__new__), __init__
