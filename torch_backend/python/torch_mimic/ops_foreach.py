"""The _foreach_* ops (multi-tensor optimiser steps) as loops over the per-tensor ops, which
run natively: PyTorch 1.13 registers the _foreach kernels for CPU and CUDA only."""
import torch

from ._lib import LIB


def _per_tensor(base, schema):
    list_args = [i for i, a in enumerate(schema.arguments) if str(a.type) in ("List[Tensor]", "List[number]", "List[Scalar]")]
    inplace = base.endswith("_")
    packet = getattr(torch.ops.aten, base)

    # Where the foreach op passes positionally what the per-tensor op takes by keyword only
    # (addcdiv_'s value), the extra positional arguments become those keywords.
    base_schema = getattr(packet, packet.overloads()[0])._schema
    positional = sum(1 for a in base_schema.arguments if not a.kwarg_only)
    keywords = [a.name for a in base_schema.arguments if a.kwarg_only]

    def kernel(*args, **kwargs):
        length = len(args[list_args[0]])
        results = []
        for k in range(length):
            element = [a[k] if i in list_args else a for i, a in enumerate(args)]
            extra = dict(zip(keywords, element[positional:]))
            results.append(packet(*element[:positional], **extra, **kwargs))
        return None if inplace else results

    return kernel


def _register_all():
    # torch.ops.aten lists only the ops already looked up, so ask the JIT for every schema.
    names = sorted({s.name[len("aten::"):] for s in torch._C._jit_get_all_schemas()
                    if s.name.startswith("aten::_foreach_")})
    for name in names:
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
