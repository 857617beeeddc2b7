"""PyTorch 1.13's storage methods for mimic storages, without touching other devices.

1.13's Python bindings refuse a PrivateUse1 storage as an argument (torch/csrc/DynamicTypes.cpp,
get_type_properties: "Invalid device for storage: privateuseone"), so ``Tensor.set_(storage)``,
through which TypedStorage's indexing, ``fill_`` and dtype casts go, and ``UntypedStorage.copy_``
(behind ``clone``, ``cpu`` and ``copy.deepcopy``) fail; ``UntypedStorage(size, device=...)``
knows only PyTorch's own devices (torch/csrc/Storage.cpp, THPStorage_pynew: "Storage device not
recognized"). For a mimic storage each of these goes through a uint8 tensor over the storage's
bytes (torch.ops.mimic.storage_bytes); any other storage takes PyTorch's own path.
"""
import torch

from ._naming import DEVICE_TYPE


def _is_mimic_storage(obj):
    return isinstance(obj, (torch.UntypedStorage, torch.TypedStorage)) and \
        obj.device.type == DEVICE_TYPE


def storage_bytes(storage):
    """A uint8 tensor over the whole of a storage, on the storage's device, sharing its memory."""
    untyped = storage.untyped()
    if untyped.device.type == DEVICE_TYPE:
        return torch.ops.mimic.storage_bytes(untyped._cdata)
    return torch.empty(0, dtype=torch.uint8, device=untyped.device).set_(untyped)


def _typed_view(storage, dtype):
    """The whole storage as a 1-D tensor of dtype (its trailing bytes that make no element left
    out, as PyTorch's set_(storage) sizes it)."""
    data = storage_bytes(storage)
    itemsize = torch.empty(0, dtype=dtype).element_size()
    return data[:data.numel() // itemsize * itemsize].view(dtype)


def _refuse_other_dtype(self, storage):
    # PyTorch's own message, produced by its own check on empty CPU stand-ins.
    stand_in = torch.TypedStorage(0, dtype=storage.dtype)
    torch.Tensor._mimic_original_set_(torch.empty(0, dtype=self.dtype), stand_in)
    raise AssertionError("set_ accepted a storage of another dtype on the CPU")


def _set(original):
    def set_(self, *args, **kwargs):
        source = args[0] if args else kwargs.get("source")
        if type(self) is not torch.Tensor or self.device.type != DEVICE_TYPE or \
                not _is_mimic_storage(source):
            return original(self, *args, **kwargs)
        if isinstance(source, torch.TypedStorage) and source.dtype != self.dtype:
            _refuse_other_dtype(self, source)
        rest = list(args[1:])
        names = ("storage_offset", "size", "stride")
        given = dict(zip(names, rest), **{n: kwargs[n] for n in names if n in kwargs})
        whole = _typed_view(source, self.dtype)
        if not given:
            return original(self, whole)
        size = tuple(given["size"])
        stride = given.get("stride")
        if stride is None:
            stride = torch.empty(size, device="meta").stride()
        return original(self, whole.as_strided(size, tuple(stride), given["storage_offset"]))

    return set_


def _copy(original):
    def copy_(self, src, non_blocking=None):
        if not (_is_mimic_storage(self) or _is_mimic_storage(src)):
            return original(self, src, non_blocking)
        if self.nbytes() != src.nbytes():
            raise RuntimeError("size does not match")
        storage_bytes(self).copy_(storage_bytes(src), non_blocking=bool(non_blocking))
        return self

    return copy_


def _new(original):
    def __new__(cls, *args, **kwargs):
        device = kwargs.get("device")
        if not isinstance(device, (str, torch.device)) or \
                torch.device(device).type != DEVICE_TYPE or "allocator" in kwargs:
            return original(cls, *args, **kwargs)
        # The size or the byte sequence is checked by PyTorch's own CPU constructor.
        on_cpu = original(cls, *args)
        data = torch.empty(on_cpu.nbytes(), dtype=torch.uint8, device=device)
        data.copy_(storage_bytes(on_cpu))
        return data._storage()

    return __new__


def install():
    torch.Tensor._mimic_original_set_ = torch.Tensor.set_
    torch.Tensor.set_ = _set(torch.Tensor.set_)
    torch.UntypedStorage.copy_ = _copy(torch.UntypedStorage.copy_)
    torch.UntypedStorage.__new__ = staticmethod(_new(torch._C.StorageBase.__new__))
