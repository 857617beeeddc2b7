"""The _foreach_* ops (multi-tensor optimiser steps) as loops over the per-tensor ops, which
run natively: PyTorch 1.13 registers the _foreach kernels for CPU and CUDA only."""
import torch

from ._lib import LIB


def _per_tensor(base, schema):
    list_args = [i for i, a in enumerate(schema.arguments) if str(a.type) in ("List[Tensor]", "List[number]", "List[Scalar]")]
    inplace = base.endswith("_")
    packet = getattr(torch.ops.aten, base)

    def kernel(*args, **kwargs):
        length = len(args[list_args[0]])
        results = []
        for k in range(length):
            element = [a[k] if i in list_args else a for i, a in enumerate(args)]
            results.append(packet(*element, **kwargs))
        return None if inplace else results

    return kernel


def _register_all():
    for name in dir(torch.ops.aten):
        if not name.startswith("_foreach_"):
            continue
        base = name[len("_foreach_"):]
        if not hasattr(torch.ops.aten, base):
            continue
        packet = getattr(torch.ops.aten, name)
        for overload in packet.overloads():
            schema = getattr(packet, overload)._schema
            if any(a.alias_info is not None and a.alias_info.is_write and str(a.type) != "List[Tensor]"
                   for a in schema.arguments):
                continue  # out= variants
            LIB.impl(f"{name}.{overload}" if overload != "default" else name, _per_tensor(base, schema))


_register_all()
