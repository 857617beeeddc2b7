"""Memory statistics of the caching allocator, and pinned host memory."""
import torch

from ._device import _index

_ops = torch.ops.mimic
_STAT_NAMES = (
    "allocated_bytes", "peak_allocated_bytes", "reserved_bytes", "peak_reserved_bytes",
    "allocations", "cache_hits", "driver_allocations", "out_of_memory",
)


def memory_stats(device=None):
    return dict(zip(_STAT_NAMES, _ops.memory_stats(_index(device))))


def memory_allocated(device=None):
    return memory_stats(device)["allocated_bytes"]


def max_memory_allocated(device=None):
    return memory_stats(device)["peak_allocated_bytes"]


def memory_reserved(device=None):
    return memory_stats(device)["reserved_bytes"]


def max_memory_reserved(device=None):
    return memory_stats(device)["peak_reserved_bytes"]


def reset_peak_memory_stats(device=None):
    _ops.reset_peak_memory_stats(_index(device))


_KERNEL_CACHE_STAT_NAMES = ("hits", "misses", "evictions", "entries", "capacity")


def kernel_cache_stats():
    """The op kernel cache (all devices): hits, misses (kernels built and loaded), evictions,
    kernels held now, and its capacity (MIMIC_KERNEL_CACHE_SIZE, default 2048)."""
    return dict(zip(_KERNEL_CACHE_STAT_NAMES, _ops.kernel_cache_stats()))


def empty_cache():
    """Returns the allocator's unused cached blocks to the device."""
    _ops.empty_cache()


def caching_allocator_alloc(size, device=None, stream=None):
    """Raw device memory of `size` bytes from the caching allocator, as an address (int), in
    the pool of `stream` (default: the current stream of `device`). Free it with
    caching_allocator_delete."""
    from ._streams import current_stream
    if stream is None:
        stream = current_stream(device)
    return _ops.caching_allocator_alloc(int(size), stream._cdata)


def caching_allocator_delete(ptr):
    """Frees memory from caching_allocator_alloc. Raises RuntimeError for an address it did not
    hand out or already freed (a double free, which the sanitizer also reports)."""
    _ops.caching_allocator_delete(int(ptr))


def memory_summary(device=None):
    return _ops.memory_summary(_index(device))


def empty_pinned(size, dtype=torch.float32):
    """An uninitialised CPU tensor in pinned host memory: non_blocking copies from or to it
    overlap with device work, as copies of pinned memory do on real hardware."""
    return _ops.pinned_empty(list(size), dtype)


def pin_memory(tensor):
    """A pinned copy of a CPU tensor."""
    pinned = empty_pinned(tensor.shape, tensor.dtype)
    pinned.copy_(tensor)
    return pinned


def is_pinned(tensor):
    return _ops.is_pinned(tensor)
