"""Devices: count, selection, synchronisation, properties and the simulated clock."""
import contextlib
from dataclasses import dataclass

import torch

_ops = torch.ops.mimic


def _index(device):
    """The device index of an int, a torch.device, a device string or None (current)."""
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    device = torch.device(device)
    return current_device() if device.index is None else device.index


def is_available():
    return device_count() > 0


def device_count():
    return _ops.device_count()


def current_device():
    return _ops.current_device()


def set_device(device):
    _ops.set_device(_index(device))


@contextlib.contextmanager
def device(index):
    """Makes ``index`` the current device inside the ``with`` block."""
    previous = current_device()
    set_device(index)
    try:
        yield
    finally:
        set_device(previous)


def synchronize(device=None):
    """Waits until every queue of the device has finished its work."""
    _ops.synchronize(_index(device))


def reset_device(device=None):
    """Recovers a device that failed with a sticky error (an ECC error, a hung kernel, a lost
    device: every later call raised RuntimeError): the device is reset, as cudaDeviceReset does.
    Its memory is gone, so a tensor made on it before the reset raises RuntimeError naming the
    reset when used again; streams and events stay valid."""
    _ops.reset_device(_index(device))


def sim_time():
    """The simulated clock, in nanoseconds: the host's view of simulated time."""
    return _ops.sim_time()


@dataclass(frozen=True)
class DeviceProperties:
    name: str
    preset: str
    total_memory: int
    compute_units: int
    vector_lanes: int
    clock_mhz: float
    scratchpad_bytes: int
    mma_f32_macs_per_cycle: int
    mma_f16_macs_per_cycle: int
    hbm_bandwidth_gbps: float
    hbm_latency_ns: int
    host_link_bandwidth_gbps: float
    host_link_latency_ns: int
    device_link_bandwidth_gbps: float
    device_link_latency_ns: int
    hardware_queues: int
    copy_engines: int
    link_engines: int
    command_latency_ns: int
    matrix_clock_mhz: float  # the clock the matrix pipe sustains: matrix peaks use it
    hbm_efficiency: float
    host_link_efficiency: float
    device_link_efficiency: float
    cache_bytes: int
    cache_bandwidth_gbps: float
    cache_latency_ns: int
    max_workgroups_per_unit: int

    @property
    def multi_processor_count(self):  # the name torch.cuda's properties use
        return self.compute_units


def get_device_properties(device=None):
    names, numbers = _ops.device_properties(_index(device))
    fields = list(DeviceProperties.__dataclass_fields__.values())[2:]
    values = [v if f.type is float else int(v) for f, v in zip(fields, numbers)]
    return DeviceProperties(names[0], names[1], *values)
