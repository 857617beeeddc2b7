"""The c10d backend "mimic": ``torch.distributed.init_process_group("mimic")``.

Each rank drives its own simulated device(s). The ranks move bytes with PyTorch's own Gloo,
created on the same store (under the prefix ``mimic/data``), directly on the host view of device
memory, and agree on simulated time at every collective (collectives/c10d/process_group_mimic.h).

In timing-only mode (MIMIC_MODE=timing) the collectives move no bytes, so a check that gathers
host data in a device tensor and reads it back would see placeholders. DDP (and FSDP) begin
with one: ``torch.distributed._verify_params_across_processes``, which checks that every rank has
the same parameters' sizes and strides. For a mimic group in timing mode it runs the same check
on the host, over the group's Gloo (the sizes and strides are host data, so it is exact); for
any other group or mode, PyTorch's own runs unchanged.
"""
import weakref

import torch as _torch
import torch.distributed as _dist

BACKEND_NAME = "mimic"

# Each mimic group's Gloo group, on which the host-side parameter check runs.
_data_groups = weakref.WeakKeyDictionary()
_pytorch_verify = getattr(_dist, "_verify_params_across_processes", None)


def _create_process_group(store, rank, size, timeout):
    from . import _c10d

    data = _dist.ProcessGroupGloo(_dist.PrefixStore("mimic/data", store), rank, size, timeout)
    group = _c10d.ProcessGroupMimic(store, rank, size, data, timeout)
    _data_groups[group] = data
    return group


def _all_gather_host(data, tensor):
    gathered = [_torch.empty_like(tensor) for _ in range(data.size())]
    data.allgather([gathered], [tensor]).wait()
    return gathered


def _verify_params_across_processes(process_group, tensors, logger=None):
    data = _data_groups.get(process_group)
    if data is None or not process_group.timing_only:
        return _pytorch_verify(process_group, tensors, logger)
    rank = process_group.rank()
    counts = _all_gather_host(data, _torch.tensor([len(tensors)], dtype=_torch.int64))
    for other, count in enumerate(counts):
        if int(count) != len(tensors):
            raise RuntimeError(f"DDP expects same model across all ranks, but Rank {rank} has "
                               f"{len(tensors)} params, while rank {other} has inconsistent "
                               f"{int(count)} params.")
    # Per parameter: its dimensions, then its sizes and strides padded to the longest.
    longest = max([t.dim() for t in tensors], default=0)
    longest = int(max(_all_gather_host(data, _torch.tensor([longest], dtype=_torch.int64))))
    rows = [[t.dim()] + list(t.shape) + [-1] * (longest - t.dim()) + list(t.stride())
            + [-1] * (longest - t.dim()) for t in tensors]
    mine = _torch.tensor(rows, dtype=_torch.int64).reshape(len(tensors), 1 + 2 * longest)
    for other, theirs in enumerate(_all_gather_host(data, mine)):
        for i in range(len(tensors)):
            if not _torch.equal(theirs[i], mine[i]):
                dim = int(theirs[i][0])
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank {rank}'s {i}-th param "
                    f"has shape {list(tensors[i].shape)} and strides {list(tensors[i].stride())}"
                    f", while rank {other}'s has shape {theirs[i][1:1 + dim].tolist()} and "
                    f"strides {theirs[i][1 + longest:1 + longest + dim].tolist()}.")


def register():
    if _dist.is_available() and not hasattr(_dist.Backend, BACKEND_NAME.upper()):
        _dist.Backend.register_backend(BACKEND_NAME, _create_process_group)
        if _pytorch_verify is not None:
            _dist._verify_params_across_processes = _verify_params_across_processes
