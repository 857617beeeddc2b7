"""Kernel launches counted by the op kernel cache: each launch looks its kernel up once, so the
hits plus the misses are the launches so far (for tests and benchmarks to take differences)."""
import torch_mimic


def launches():
    stats = torch_mimic.kernel_cache_stats()
    return stats["hits"] + stats["misses"]


def launches_of(call):
    """The kernels call() launches, with the device idle before and after."""
    torch_mimic.synchronize()
    before = launches()
    call()
    torch_mimic.synchronize()
    return launches() - before
