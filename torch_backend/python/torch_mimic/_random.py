"""The device's random number generator: counter-based, so a seed fully determines the numbers.

Each device keeps a seed and an offset. A random op with n outputs takes values n counters
ahead; the kernels hash (seed, offset + index), so results do not depend on tiling, threads or
timing. ``get_rng_state`` packs (seed, offset) into a 16-byte uint8 tensor, as CUDA's does.
"""
import threading

import torch

from ._device import _index, device_count

_DEFAULT_SEED = 67280421310721  # PyTorch's default CPU seed
_lock = threading.Lock()
_state = {}  # device index -> [seed, offset]
_unseeded = [_DEFAULT_SEED]  # the seed of devices not in _state


def _entry(device):
    return _state.setdefault(device, [_unseeded[0], 0])


def next_key(device, count):
    """Reserves ``count`` counters on ``device``; returns the (seed, offset) to use."""
    with _lock:
        entry = _entry(device)
        key = (entry[0], entry[1])
        entry[1] += max(int(count), 0)
        return key


def manual_seed(seed, device=None):
    with _lock:
        _state[_index(device)] = [int(seed) & 0x7FFFFFFFFFFFFFFF, 0]


def manual_seed_all(seed):
    for index in range(device_count()):
        manual_seed(seed, index)


def seed(device=None):
    """Seeds the device from a non-deterministic source, as torch.seed() does."""
    value = torch.seed()
    manual_seed(value, device)
    return value


def initial_seed(device=None):
    with _lock:
        return _entry(_index(device))[0]


def get_rng_state(device=None):
    with _lock:
        seed_value, offset = _entry(_index(device))
    return torch.tensor([seed_value, offset], dtype=torch.int64).view(torch.uint8)


def set_rng_state(state, device=None):
    if not isinstance(state, torch.Tensor) or state.dtype != torch.uint8 or state.numel() != 16:
        raise ValueError("set_rng_state expects the 16-byte uint8 tensor get_rng_state returns")
    seed_value, offset = state.clone().view(torch.int64).tolist()
    with _lock:
        _state[_index(device)] = [seed_value, offset]


def _seeding_devices_too(torch_manual_seed):
    """torch.manual_seed that also seeds every mimic device, as it seeds every CUDA device
    (PyTorch 2 does this for a registered PrivateUse1 backend; 1.13 knows only CUDA)."""
    def manual_seed_everywhere(seed):
        generator = torch_manual_seed(seed)
        with _lock:  # every device, without starting the simulation: as if none had drawn yet
            _unseeded[0] = int(seed) & 0x7FFFFFFFFFFFFFFF
            _state.clear()
        return generator

    manual_seed_everywhere.__doc__ = torch_manual_seed.__doc__
    return manual_seed_everywhere


if int(torch.__version__.split(".")[0]) < 2:
    torch.manual_seed = torch.random.manual_seed = _seeding_devices_too(torch.random.manual_seed)
