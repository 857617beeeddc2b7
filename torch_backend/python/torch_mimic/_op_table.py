"""The op table of the C++ aten layer (torch_backend/aten/op_table.h), read-only: the programs,
operands and promotion rules that eager registration uses, for code that lowers aten ops
itself (a compiler) without keeping a copy."""
import json
import types
from typing import NamedTuple

import torch


class OpEntry(NamedTuple):
    name: str       # aten op without overload ("add"); in-place-only ops without "_" ("fill")
    variant: str    # "" or the variant a call selects ("alpha", "floor", "tanh", ...)
    kind: str       # "pointwise" (an elementwise program), "reduction" (the reduce kernel),
                    # "gemm" or "index" (a GEMM or index kernel of torch_backend/ops)
    program: str    # pointwise: template of the elementwise language, {0}, {1}, ... are the
                    # operands; reduction: the reduce kind (sum prod max min argmax argmin);
                    # gemm and index: the kernel (gemm, gather, index_select, ...)
    operands: tuple  # schema argument names for {0}, {1}, ...
    promoted: tuple  # the operands whose dtypes decide the result's
    result: str     # pointwise: promoted, promoted_float, bool or first_operand; reduction:
                    # accumulated, float, input, index or flag (torch_backend/aten/op_table.h)
    compute: str    # result, promoted or promoted_float (half types compute in float32)
    indices: str = ""   # reduction: the kind of a second result, the indices (max.dim)
    prologue: str = ""  # reduction: an elementwise template applied to the input first
    mean: bool = False  # reduction: the sum is divided by the number of elements reduced
    note: str = ""      # gemm and index: how the aten op maps onto its kernel


def _load():
    entries = {}
    for raw in json.loads(torch.ops.mimic.op_table()):
        raw["operands"] = tuple(raw["operands"].split())
        raw["promoted"] = tuple(raw["promoted"].split())
        entry = OpEntry(**raw)
        entries[(entry.name, entry.variant)] = entry
    return types.MappingProxyType(entries)


_TABLE = _load()


def op_table():
    """The table as a read-only mapping from (op name, variant) to ``OpEntry``."""
    return _TABLE


def program(name, variant=""):
    """The program template of one table entry; KeyError names an entry the table lacks."""
    try:
        return _TABLE[(name, variant)].program
    except KeyError:
        raise KeyError(f"mimic: the op table has no entry {name!r} variant {variant!r}") from None
