"""Lowering of an AOT-autograd FX graph to mimic kernels. Each module of this package named
``_lower_<name>`` is a pass: its ``run(graph)`` rewrites the nodes it can fuse into calls of a
Kernel (_compile_graph) and returns the kernels made; passes run in the order of their
``ORDER`` (lowest first), so a later pass may absorb an earlier one's kernels. Nodes no pass
takes run their eager aten ops. A new fusion is a new pass module, with no edit here.
"""
import importlib
import pkgutil

import torch

from ._compile_graph import Kernel, owns_memory, tensor_meta

_passes = None


def passes():
    """The passes as (ORDER, name, run), in the order they run."""
    global _passes
    if _passes is None:
        package = importlib.import_module(__package__)
        found = []
        for info in pkgutil.iter_modules(package.__path__):
            if info.name.startswith("_lower_"):
                module = importlib.import_module(f"{__package__}.{info.name}")
                found.append((module.ORDER, info.name[len("_lower_"):], module.run))
        _passes = tuple(sorted(found, key=lambda p: (p[0], p[1])))
    return _passes


def lower(graph_module, fuse=True):
    """Rewrites ``graph_module`` in place with every pass (none when ``fuse`` is false) and
    returns the kernels made, named in graph order."""
    graph = graph_module.graph
    kernels = []
    if fuse:
        for _, _, run in passes():
            kernels += run(graph)
    order = [n.target for n in graph.nodes if isinstance(n.target, Kernel)]
    for index, kernel in enumerate(order):
        kernel.__name__ = f"mimic_{kernel.kind}_{index}"
    for node in graph.nodes:
        if isinstance(node.target, Kernel) and node.target.writes_in_place:
            node.target.reuse = _dying_input(node)
    graph.lint()
    graph_module.recompile()
    return order


def _dying_input(node):
    """The index of a tensor input of kernel ``node`` that nothing uses after it, or None."""
    for index, value in enumerate(node.args):
        if (isinstance(value, torch.fx.Node) and value.op == "call_function"
                and len(value.users) == 1 and owns_memory(value)
                and tensor_meta(value) is not None and tensor_meta(value)[1] == torch.float32):
            return index
    return None


# Ops whose output shapes depend on tensor data: a trace on real tensors records one run's
# shapes, which later nodes (and fused kernels' fixed shapes) would then assume.
_DATA_DEPENDENT = frozenset({"aten::nonzero", "aten::masked_select", "aten::_unique",
                             "aten::_unique2", "aten::unique_dim", "aten::unique_consecutive",
                             "aten::unique_dim_consecutive", "aten::_local_scalar_dense"})


def data_dependent(graph_module):
    """Why the graph cannot be replayed for other data of the same shapes, or None."""
    for node in graph_module.graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
            continue
        name = node.target._schema.name
        if name in _DATA_DEPENDENT:
            return f"{node.target} has a data-dependent output shape"
        if name == "aten::index":
            for index in node.args[1]:
                meta = tensor_meta(index) if isinstance(index, torch.fx.Node) else None
                if meta is not None and meta[1] in (torch.bool, torch.uint8):
                    return f"{node.target} with a boolean mask has a data-dependent output shape"
    return None


class _BoxedCodeGen(torch.fx.graph.CodeGen):
    """Generated code that takes its inputs as one list and empties it: with FX's deletion of
    values after their last use, the backward frees each saved activation once it is used, as
    eager autograd does (AOT autograd passes the backward a list it gives up)."""

    def gen_fn_def(self, free_vars, maybe_return_annotation):
        names = [v.split(":")[0].strip() for v in free_vars if v != "self"]
        unpack = f"\n    {', '.join(names)}, = args" if names else ""
        return f"def forward(self, args){maybe_return_annotation}:{unpack}\n    args.clear()"


def boxed(graph_module):
    """The graph as AOT autograd's boxed calling convention wants it (one list argument)."""
    graph_module.graph.set_codegen(_BoxedCodeGen())
    graph_module.recompile()

    def run(args):
        return graph_module(args)

    run._boxed_call = True
    return run


def eager_nodes(graph_module):
    """The nodes of a lowered graph that run their eager op, counted by op."""
    counts = {}
    for node in graph_module.graph.nodes:
        if node.op == "call_function" and not isinstance(node.target, Kernel):
            name = str(node.target)
            counts[name] = counts.get(name, 0) + 1
    return counts
