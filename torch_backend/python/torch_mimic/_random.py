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


def _entry(device):
    return _state.setdefault(device, [_DEFAULT_SEED, 0])


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
