"""torch_mimic: the mimic simulated accelerator as a PyTorch device.

``import torch_mimic`` loads the backend library, registers the device module as
``torch.privateuseone`` (and renames the device to ``mimic`` where PyTorch can) and registers the
device's op kernels. Tensors then live on ``torch.device("privateuseone")``.
"""
import os as _os

import torch as _torch

_torch.ops.load_library(_os.path.join(_os.path.dirname(__file__), "libmimic_torch.so"))

from ._device import (  # noqa: E402
    DeviceProperties,
    current_device,
    device,
    device_count,
    get_device_properties,
    is_available,
    reset_device,
    set_device,
    sim_time,
    synchronize,
)
from ._streams import Event, Stream, current_stream, default_stream, stream  # noqa: E402
from ._memory import (  # noqa: E402
    caching_allocator_alloc,
    caching_allocator_delete,
    empty_cache,
    empty_pinned,
    is_pinned,
    kernel_cache_stats,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    pin_memory,
    reset_peak_memory_stats,
)
from ._random import (  # noqa: E402
    get_rng_state,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    set_rng_state,
)
from ._fallback import fallback_report, reset_fallback_report  # noqa: E402
from ._timing_mode import (  # noqa: E402
    TimingModeWarning,
    reset_timing_mode_report,
    simulation_mode,
    timing_mode_report,
)
from ._op_table import OpEntry, op_table  # noqa: E402
from ._compile_report import compile_report  # noqa: E402
if int(_torch.__version__.split(".")[0]) >= 2:  # torch.compile(backend="mimic"); 1.13: no Dynamo
    from . import _compile_pt2  # noqa: E402,F401
from . import _registration  # noqa: E402,F401  (registers the op kernels)
from ._naming import DEVICE_TYPE  # noqa: E402
from . import _distributed  # noqa: E402
from . import _fake_tensor  # noqa: E402
from . import _timing_mode  # noqa: E402
from . import _tensor_compat  # noqa: E402
from . import profiler  # noqa: E402,F401
from . import sanitizer  # noqa: E402,F401
from . import kernels  # noqa: E402,F401

_distributed.register()
_timing_mode.install()
_fake_tensor.install()
_tensor_compat.install()


def __getattr__(name):
    # torch_mimic.compile imports functorch's AOT autograd and through it sympy: about 5 s and
    # 40 MB per process, which a rank that never compiles (a timing-only rank of 64) should not
    # pay. It is imported on first use.
    if name == "compile":
        from ._compile import compile as compile_

        globals()["compile"] = compile_
        return compile_
    raise AttributeError(f"module 'torch_mimic' has no attribute '{name}'")


__all__ = [
    "DEVICE_TYPE", "DeviceProperties", "Event", "Stream", "caching_allocator_alloc",
    "caching_allocator_delete", "compile", "compile_report", "current_device", "current_stream",
    "default_stream", "device", "device_count", "empty_cache", "empty_pinned", "fallback_report",
    "get_device_properties", "get_rng_state", "initial_seed", "is_available", "is_pinned",
    "kernel_cache_stats",
    "manual_seed", "manual_seed_all", "max_memory_allocated", "max_memory_reserved",
    "memory_allocated", "memory_reserved", "memory_stats", "memory_summary", "OpEntry", "op_table",
    "pin_memory",
    "reset_device", "reset_fallback_report", "reset_peak_memory_stats", "seed", "set_device", "set_rng_state",
    "sim_time", "simulation_mode", "stream", "synchronize", "timing_mode_report",
    "TimingModeWarning", "reset_timing_mode_report",
]
