"""What the lowering passes share: the facts they read from FX nodes, and the Kernel objects
they put into the graph in place of the nodes they fuse."""
import functools

import torch


def tensor_meta(node):
    value = node.meta.get("val")
    if isinstance(value, torch.Tensor):
        return value.shape, value.dtype
    meta = node.meta.get("tensor_meta")
    if meta is not None and hasattr(meta, "dtype"):
        return meta.shape, meta.dtype
    return None


def bound_arguments(node):
    schema = node.target._schema
    values = {}
    for index, argument in enumerate(schema.arguments):
        if index < len(node.args):
            values[argument.name] = node.args[index]
        elif argument.name in node.kwargs:
            values[argument.name] = node.kwargs[argument.name]
        elif argument.has_default_value():
            values[argument.name] = argument.default_value
        else:
            return None
    return values


def aten_name(node):
    """The aten op name of a call_function node ("add" for aten::add.Tensor), or None."""
    if node.op != "call_function" or not isinstance(node.target, torch._ops.OpOverload):
        return None
    name = node.target._schema.name
    return name[len("aten::"):] if name.startswith("aten::") else None


class Kernel:
    """A callable standing in the graph for the FX nodes a pass fused into it. ``nodes`` names
    them (by op) for the report; ``reuse`` is the index of an input the kernel may overwrite when
    nothing reads it afterwards (set by the lowering once every pass has run), or None when the
    kernel never writes in place.

    While torch_mimic.profiler records (``label_calls(True)``), each kernel call runs inside a
    host range named by its ``label()``, so that the profiler names the device work by the fused
    ops. Outside profiling the subclasses' own ``__call__`` runs unwrapped: no cost at all."""

    kind = "kernel"
    writes_in_place = False
    profiled_labels = None  # a set of the labels called while profiling, else None

    def __init__(self, nodes):
        self.nodes = list(nodes)
        self.reuse = None
        self.__name__ = f"mimic_{self.kind}"

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if Kernel.profiled_labels is not None:
            cls._wrap_call(True)  # a pass imported while profiling

    def label(self):
        """The kernel's name and its ops: "mimic_pointwise_3 [aten.add+aten.relu]"."""
        ops = "+".join(".".join(op.split(".")[:2]) for op in self.nodes)
        return f"{self.__name__} [{ops}]"

    @classmethod
    def _wrap_call(cls, on):
        plain = cls.__dict__.get("_plain_call")
        if on and plain is None and "__call__" in cls.__dict__:
            plain = cls.__dict__["__call__"]
            cls._plain_call = plain

            @functools.wraps(plain)
            def labelled_call(self, *inputs):
                label = self.label()
                labels = Kernel.profiled_labels
                if labels is not None:  # None: the profiler is stopping on another thread
                    labels.add(label)
                with torch.autograd.profiler.record_function(label):
                    return plain(self, *inputs)

            cls.__call__ = labelled_call
        elif not on and plain is not None:
            cls.__call__ = plain
            del cls._plain_call

    @staticmethod
    def label_calls(on):
        """Starts (True) or ends (False) running kernel calls in labelled host ranges; ending
        returns the labels called since the start."""
        labels = Kernel.profiled_labels
        Kernel.profiled_labels = (labels if labels is not None else set()) if on else None
        pending = list(Kernel.__subclasses__())
        while pending:
            cls = pending.pop()
            cls._wrap_call(on)
            pending += cls.__subclasses__()
        return labels or set()

    def describe(self):
        return {"name": self.__name__, "kind": self.kind, "nodes": self.nodes,
                "in_place_input": self.reuse}


def replace(graph, kernel, inputs, root, members):
    """Puts a call of ``kernel`` on ``inputs`` where ``root`` was, gives it ``root``'s users and
    meta, and erases ``members`` (every fused node, ``root`` included)."""
    with graph.inserting_before(root):
        fused = graph.call_function(kernel, tuple(inputs))
    fused.meta = dict(root.meta)
    root.replace_all_uses_with(fused)
    for member in dict.fromkeys(members):
        graph.erase_node(member)
    return fused


def owns_memory(node):
    """Whether ``node``'s value is a tensor no other value aliases: a fused kernel's output or
    the result of an aten op whose schema returns a fresh tensor (no view, no in-place)."""
    if isinstance(node.target, Kernel):
        return True
    if not isinstance(node.target, torch._ops.OpOverload):
        return False
    schema = node.target._schema
    return (len(schema.returns) == 1 and schema.returns[0].alias_info is None
            and all(a.alias_info is None for a in schema.arguments))


