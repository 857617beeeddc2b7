"""What PyTorch 1.13's Python layer cannot do for a PrivateUse1 tensor that has storage, done
for mimic tensors without touching other devices.

- Storages: 1.13's C++ storage bindings know only the CPU, CUDA, XPU, MPS and meta;
  _storage_compat.py gives mimic storages the methods that ``copy.deepcopy`` (PyTorch's own,
  which keeps views of one storage sharing it), ``tensor.storage()[i]`` and ``set_(storage)``
  need.
- Pickling (``torch.save``, multiprocessing) also needs a location tag 1.13 has only for its own
  devices: a mimic tensor is pickled as its CPU copy plus the device to put it back on (what
  1.13 does for XLA and for storage-less PrivateUse1 tensors; views saved together no longer
  share memory after loading, as with XLA).
- ``copy.copy`` rebuilds a tensor from its reduction. Pickling's one copies the data, so a
  mimic tensor is copied from PyTorch's own reduction, which shares the storage (a shallow copy).
- ``apply_``, ``map_`` and ``map2_`` call a Python function per element, which 1.13 does on the
  CPU only (torch/csrc/utils/tensor_apply.cpp); for mimic tensors they run on CPU copies, whose
  result is copied back.
- ``tensor.new(...)``, the legacy constructor, refuses every device key but PyTorch's own; for a
  mimic tensor it builds on the CPU with the tensor's dtype and moves the result to the device.

Loading a pickled mimic tensor imports torch_mimic (the rebuild function lives here).
"""
import copy

import torch

from . import _storage_compat
from ._naming import DEVICE_TYPE


def _is_mimic(tensor):
    return type(tensor) is torch.Tensor and tensor.device.type == DEVICE_TYPE and \
        not tensor.is_sparse


def rebuild_device_tensor(cpu, device, requires_grad):
    tensor = cpu.to(device)
    tensor.requires_grad_(requires_grad)
    return tensor


def _reduce_ex_internal(original):
    def reduce(self, proto):
        if not _is_mimic(self):
            return original(self, proto)
        return rebuild_device_tensor, (self.detach().cpu(), str(self.device), self.requires_grad)

    return reduce


def _shallow_copy(original_reduce):
    def __copy__(self):
        # Other tensors: what copy.copy does for a class without __copy__.
        reduction = original_reduce(self, 4) if _is_mimic(self) else self.__reduce_ex__(4)
        return copy._reconstruct(self, None, *reduction)

    return __copy__


def _per_element_on_cpu(original):
    def per_element(self, *args):
        tensors = [self] + [a for a in args if isinstance(a, torch.Tensor)]
        if not all(_is_mimic(t) for t in tensors) or \
                any(t.dtype != self.dtype or t.device != self.device for t in tensors):
            return original(self, *args)  # PyTorch's own checks and errors
        on_cpu = self.cpu()
        original(on_cpu, *[a.cpu() if isinstance(a, torch.Tensor) else a for a in args])
        return self.copy_(on_cpu)

    return per_element


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
    _storage_compat.install()
    torch.Tensor.__copy__ = _shallow_copy(torch.Tensor._reduce_ex_internal)
    torch.Tensor._reduce_ex_internal = _reduce_ex_internal(torch.Tensor._reduce_ex_internal)
    torch.Tensor.new = _new(torch.Tensor.new)
    for name in ("apply_", "map_", "map2_"):
        setattr(torch.Tensor, name, _per_element_on_cpu(getattr(torch.Tensor, name)))
