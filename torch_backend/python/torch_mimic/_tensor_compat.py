"""What PyTorch 1.13's Python layer cannot do for a PrivateUse1 tensor that has storage, done
for mimic tensors without touching other devices.

- ``copy.deepcopy`` and pickling (``torch.save``, multiprocessing) go through
  ``tensor.storage()``, and 1.13's C++ storage bindings know only the CPU, CUDA, XPU, MPS and
  meta. A mimic tensor is deep-copied as a clone, and pickled as its CPU copy plus the device
  to put it back on (what 1.13 does for XLA and for storage-less PrivateUse1 tensors; views
  saved together no longer share memory after loading, as with XLA).
- ``tensor.new(...)``, the legacy constructor, refuses every device key but PyTorch's own; for a
  mimic tensor it builds on the CPU with the tensor's dtype and moves the result to the device.

Loading a pickled mimic tensor imports torch_mimic (the rebuild function lives here).
"""
import torch

from ._naming import DEVICE_TYPE


def _is_mimic(tensor):
    return type(tensor) is torch.Tensor and tensor.device.type == DEVICE_TYPE and \
        not tensor.is_sparse


def rebuild_device_tensor(cpu, device, requires_grad):
    tensor = cpu.to(device)
    tensor.requires_grad_(requires_grad)
    return tensor


def _deepcopy(original):
    def __deepcopy__(self, memo):
        if not _is_mimic(self):
            return original(self, memo)
        if not self.is_leaf:
            return original(self, memo)  # raises PyTorch's own error for non-leaves
        if id(self) in memo:
            return memo[id(self)]
        with torch.no_grad():
            copied = self.clone()
            if self.requires_grad:
                copied.requires_grad_()
            if self.grad is not None:
                copied.grad = self.grad.__deepcopy__(memo)
        memo[id(self)] = copied
        return copied

    return __deepcopy__


def _reduce_ex_internal(original):
    def reduce(self, proto):
        if not _is_mimic(self):
            return original(self, proto)
        return rebuild_device_tensor, (self.detach().cpu(), str(self.device), self.requires_grad)

    return reduce


def _sizes_only(args):
    return len(args) == 1 and isinstance(args[0], torch.Size) or \
        all(isinstance(a, int) for a in args)


def _new(original):
    def new(self, *args, **kwargs):
        if type(self) is not torch.Tensor or self.device.type != DEVICE_TYPE:
            return original(self, *args, **kwargs)
        device = kwargs.pop("device", None) or self.device
        if _sizes_only(args):
            return torch.empty(*(args or (0,)), dtype=self.dtype, device=device)
        return original(torch.empty(0, dtype=self.dtype), *args, **kwargs).to(device)

    return new


def install():
    if int(torch.__version__.split(".")[0]) >= 2:
        return
    torch.Tensor.__deepcopy__ = _deepcopy(torch.Tensor.__deepcopy__)
    torch.Tensor._reduce_ex_internal = _reduce_ex_internal(torch.Tensor._reduce_ex_internal)
    torch.Tensor.new = _new(torch.Tensor.new)
