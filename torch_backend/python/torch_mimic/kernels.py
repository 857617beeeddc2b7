"""Your own device kernels from Python: load a module, launch its kernels on mimic tensors.

    module = torch_mimic.kernels.load(source)      # assembler text, an image, or a file of either
    module.launch("scale", grid, y, x, n, 2.0)     # on the current stream of the tensors' device

Arguments fill the kernel's 8-byte slots in order: a mimic tensor gives its device address (its
``data_ptr()``, storage offset included), an int (or bool) an int64, a float the bits of a float32
in the low 32 bits (wrap it in ``kernels.f64`` for a double's bits). The launch is queued like a
built-in op's kernel: ordered with the stream's other work, under ``torch_mimic.profiler`` as a
host op ``mimic.kernels:<name>`` with the kernel as its device work, and checked by the sanitizer.
A kernel that faults fails the device at the next synchronising call, as built-in kernels do.

Tensors used on a stream other than the one they were allocated on need ``record_stream``, as
on CUDA. A module is loaded onto a device at its first launch there, and stays loaded for the
life of the process.
"""
import os
import struct

import torch

from ._device import current_device
from ._naming import DEVICE_TYPE
from ._streams import current_stream

_ops = torch.ops.mimic
_IMAGE_MAGIC = b"MIMICMOD"

__all__ = ["Module", "f64", "load"]


class f64:
    """A float argument passed as the bits of a float64 rather than a float32."""

    def __init__(self, value):
        self.value = float(value)


def load(source):
    """A Module from assembler text, a module image (``bytes``, or the ``.mimod`` that mimic-asm
    writes), or the path of a file holding either. Raises ValueError naming what is wrong with
    the source."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return Module(bytes(source))
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"torch_mimic.kernels.load: expected assembler text, a module image or a "
                        f"path, got {type(source).__name__}")
    text = os.fspath(source)
    if isinstance(source, os.PathLike) or ("\n" not in text and os.path.isfile(text)):
        with open(text, "rb") as f:
            data = f.read()
        if data.startswith(_IMAGE_MAGIC):
            return Module(data)
        text = data.decode("utf-8")
    elif ".kernel" not in text:
        raise ValueError(f"torch_mimic.kernels.load: {text!r} is neither a file nor assembler "
                         f"text (no .kernel directive)")
    return Module(bytes(_ops.kernels_assemble(text).numpy()))


class Module:
    """The kernels of one module image. ``names`` lists them; ``launch`` runs one."""

    def __init__(self, image):
        self._image = torch.frombuffer(bytearray(image), dtype=torch.uint8)
        names, slots = _ops.kernels_describe(self._image)
        self._slots = dict(zip(names, slots))
        self._loaded = {}  # device -> (module handle, {name: function handle})

    @property
    def names(self):
        return list(self._slots)

    def launch(self, name, grid, *args, stream=None):
        """Queues kernel ``name`` over ``grid`` (an int or a tuple of up to 3 ints) with ``args``,
        on ``stream`` or else the current stream of the device of the tensor arguments (the
        current device if there are none). Returns at once, as built-in ops do."""
        if name not in self._slots:
            raise ValueError(f"torch_mimic.kernels: the module has no kernel '{name}' "
                             f"(it has: {', '.join(self._slots)})")
        expected = self._slots[name]
        if len(args) != expected:
            raise TypeError(f"torch_mimic.kernels: kernel '{name}' takes {expected} argument(s), "
                            f"got {len(args)}")
        device = _device_of(name, args, stream)
        slots = [_slot(name, i, arg, device) for i, arg in enumerate(args)]
        if stream is None:
            stream = current_stream(device)
        fn = self._function(device, name)
        with torch.autograd.profiler.record_function(f"mimic.kernels:{name}"):
            _ops.kernels_launch(fn, _grid(name, grid), slots, stream._cdata)

    def _function(self, device, name):
        module, functions = self._loaded.get(device, (None, None))
        if module is None:
            module, functions = _ops.kernels_module_load(device, self._image), {}
            self._loaded[device] = (module, functions)
        if name not in functions:
            functions[name] = _ops.kernels_function(module, name)
        return functions[name]


def _grid(name, grid):
    dims = (grid,) if isinstance(grid, int) else tuple(grid)
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and d >= 1 for d in dims):
        raise ValueError(f"torch_mimic.kernels: kernel '{name}': the grid must be a positive int "
                         f"or a tuple of up to 3 of them, got {grid!r}")
    return list(dims) + [1] * (3 - len(dims))


def _device_of(name, args, stream):
    devices = {a.device.index for a in args
               if isinstance(a, torch.Tensor) and a.device.type == DEVICE_TYPE}
    if stream is not None:
        devices.add(stream.device.index)
    if len(devices) > 1:
        raise ValueError(f"torch_mimic.kernels: kernel '{name}': tensors and stream span devices "
                         f"{sorted(devices)}; a kernel runs on one device")
    return devices.pop() if devices else current_device()


def _slot(name, index, arg, device):
    where = f"torch_mimic.kernels: kernel '{name}', argument {index}"
    if isinstance(arg, torch.Tensor):
        if arg.device.type != DEVICE_TYPE:
            raise TypeError(f"{where}: a tensor on {arg.device}, not on the mimic device "
                            f"(move it with .to('{DEVICE_TYPE}'))")
        return arg.data_ptr()
    if isinstance(arg, bool) or isinstance(arg, int):
        if not -2**63 <= int(arg) < 2**64:
            raise ValueError(f"{where}: {arg} does not fit in 64 bits")
        return int(arg) - 2**64 if int(arg) >= 2**63 else int(arg)
    if isinstance(arg, f64):
        return struct.unpack("<q", struct.pack("<d", arg.value))[0]
    if isinstance(arg, float):
        return struct.unpack("<I", struct.pack("<f", arg))[0]
    raise TypeError(f"{where}: expected a mimic tensor, an int or a float, "
                    f"got {type(arg).__name__}")
