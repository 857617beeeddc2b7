"""The c10d backend "mimic": ``torch.distributed.init_process_group("mimic")``.

Each rank drives its own simulated device(s). The ranks move bytes with PyTorch's own Gloo,
created on the same store (under the prefix ``mimic/data``), directly on the host view of device
memory, and agree on simulated time at every collective (collectives/c10d/process_group_mimic.h).

In timing-only mode (MIMIC_MODE=timing) copies and collectives move only small buffers, the
host's own control data (driver/src/timing_mode_transfers.h), and a host read of device data
otherwise gets placeholder zeros. DDP (and FSDP) begin with
``torch.distributed._verify_params_across_processes``, which all-gathers the ranks' parameter
counts and broadcasts rank 0's sizes and strides in device tensors, then reads them back. It
runs, PyTorch's own, in both modes, so that it leaves the caching allocator as full mode does and
later steps take the same simulated times; in timing mode its reads are declared control data
(its tensors hold 8 bytes, and 16 per dimension of each parameter), so they get the bytes that
were moved instead of zeros, and are not reported as placeholder reads.
"""
import torch as _torch
import torch.distributed as _dist

BACKEND_NAME = "mimic"

_pytorch_verify = getattr(_dist, "_verify_params_across_processes", None)


def _create_process_group(store, rank, size, timeout):
    from . import _c10d

    data = _dist.ProcessGroupGloo(_dist.PrefixStore("mimic/data", store), rank, size, timeout)
    return _c10d.ProcessGroupMimic(store, rank, size, data, timeout)


def _verify_params_across_processes(process_group, tensors, logger=None):
    if not getattr(process_group, "timing_only", False):
        return _pytorch_verify(process_group, tensors, logger)
    previous = _torch.ops.mimic.set_control_data_reads(True)
    try:
        return _pytorch_verify(process_group, tensors, logger)
    finally:
        _torch.ops.mimic.set_control_data_reads(previous)


def register():
    if _dist.is_available() and not hasattr(_dist.Backend, BACKEND_NAME.upper()):
        _dist.Backend.register_backend(BACKEND_NAME, _create_process_group)
        if _pytorch_verify is not None:
            _dist._verify_params_across_processes = _verify_params_across_processes
