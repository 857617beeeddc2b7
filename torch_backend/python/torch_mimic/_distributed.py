"""The c10d backend "mimic": ``torch.distributed.init_process_group("mimic")``.

Each rank drives its own simulated device(s). The ranks move bytes with PyTorch's own Gloo,
created on the same store (under the prefix ``mimic/data``), directly on the host view of device
memory, and agree on simulated time at every collective (collectives/c10d/process_group_mimic.h).
"""
import torch.distributed as _dist

BACKEND_NAME = "mimic"


def _create_process_group(store, rank, size, timeout):
    from . import _c10d

    data = _dist.ProcessGroupGloo(_dist.PrefixStore("mimic/data", store), rank, size, timeout)
    return _c10d.ProcessGroupMimic(store, rank, size, data, timeout)


def register():
    if _dist.is_available() and not hasattr(_dist.Backend, BACKEND_NAME.upper()):
        _dist.Backend.register_backend(BACKEND_NAME, _create_process_group)
