"""A hand-written extension op of the kind a backend developer writes: it moves bytes between
host memory and a device tensor with the driver's mimicMemcpy (through ctypes, on the libmimic.so
that torch_mimic loaded), trusting the caller's byte count and device address. It synchronises
the device first, as the driver's own queue is not PyTorch's stream."""
import ctypes

import torch_mimic


def _driver():
    with open("/proc/self/maps") as maps:
        path = next(line.split()[-1] for line in maps if line.rstrip().endswith("/libmimic.so"))
    lib = ctypes.CDLL(path)
    lib.mimicMemcpy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return lib


_lib = _driver()


def upload(device_address, data):
    """Copies the bytes of `data` (bytes) to the device address; returns the driver's code."""
    torch_mimic.synchronize()
    return _lib.mimicMemcpy(device_address, data, len(data))


def download(device_address, nbytes):
    """Copies nbytes from the device address to a new bytes object."""
    torch_mimic.synchronize()
    out = ctypes.create_string_buffer(nbytes)
    code = _lib.mimicMemcpy(out, device_address, nbytes)
    return code, out.raw
