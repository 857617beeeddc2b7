"""Module buffers in a compiled forward (BatchNorm's running statistics in training).

PyTorch 1.13's AOT autograd, given a module's buffers, traces on the real tensors (so tracing
applies the updates) and its functionalization turns ``num_batches_tracked.add_(1)`` into an
``add`` whose result nothing uses (so replays drop it). The traced function here takes the
buffers as explicit inputs, works on clones of them (tracing leaves the module's buffers as they
were) and returns the new value of each buffer an in-place op wrote; ``write_back`` copies those
into the module after each call. ``share_buffers`` then takes the clones out of the compiled
forward: native_batch_norm writes its running statistics into its arguments without saying so
in its 1.13 schema (no version bump, no functionalization), so with the clone replaced by the
buffer the replay updates the buffer in place, as eager does, at no extra copy; and a new value
that is one functional op on its buffer (the count's add) becomes that op's in-place variant,
which leaves nothing to copy back.
"""
import torch
import torch.utils._pytree as pytree
from functorch._src.named_members_polyfill import _named_buffers, _named_parameters
from torch.nn.utils import stateless

from ._compile_graph import tensor_meta


class BufferForward:
    """The function AOT autograd traces for a module: (parameters, buffers, *args, **kwargs)
    -> (module output, new values of the buffers the forward wrote)."""

    def __init__(self, module):
        self.module = module
        self.written = None  # names of the buffers whose new values the traced forward returns
        self.leaves = None  # flat outputs of the module's own output; the buffers' follow

    def state(self):
        """The parameters and buffers by name, duplicates kept: the traced function's first
        two arguments."""
        return (dict(_named_parameters(self.module, remove_duplicate=False)),
                dict(_named_buffers(self.module, remove_duplicate=False)))

    def __call__(self, parameters, buffers, *args, **kwargs):
        # Clones that count their versions even in inference mode.
        with torch.inference_mode(False):
            working = {name: buffer.clone() for name, buffer in buffers.items()}
        versions = {name: value._version for name, value in working.items()}
        out = stateless.functional_call(self.module, {**parameters, **working}, args, kwargs)
        written = tuple(name for name, value in working.items()
                        if value._version != versions[name])
        if self.written is not None and written != self.written:
            raise RuntimeError(f"torch_mimic.compile: the traces of {type(self.module).__name__} "
                               f"wrote different buffers ({self.written} and {written})")
        self.written = written
        self.leaves = len(pytree.tree_flatten(out)[0])
        return out, [working[name] for name in written]

    def write_back(self, buffers, values):
        """Copies the forward's new buffer values into the module's ``buffers`` (by name); a
        value that is the buffer itself was updated in place by the replay."""
        with torch.no_grad():
            for name, value in zip(self.written, values):
                buffer = buffers[name]
                if value.data_ptr() != buffer.data_ptr():
                    buffer.copy_(value)


def share_buffers(graph_module, example_inputs, forward):
    """Rewrites a forward captured from ``forward`` (a BufferForward) so that it reads the
    module's buffers in place of the clones made of them, and updates a buffer in place where
    its new value is one functional op on it. Returns why it cannot, or None.

    A buffer input whose one user is its clone can be read instead of the clone: the values are
    the same, and a write the graph makes into the clone (one AOT autograd cannot see, as
    native_batch_norm's) then lands in the buffer, as in eager. A buffer that is also an
    argument of the call is read by the graph both ways, which 1.13's AOT autograd does not
    keep in step with the writes. (Buffers shared by two modules are tied by functional_call
    and deduplicated by AOT autograd: one input, one clone.)"""
    buffers = dict(_named_buffers(forward.module, remove_duplicate=False))
    owned = {id(b) for b in buffers.values()}
    graph = graph_module.graph
    inputs = {}
    for node, value in zip((n for n in graph.nodes if n.op == "placeholder"), example_inputs):
        if id(value) not in owned:
            continue
        inputs[id(value)] = node
        if not node.users:
            continue
        users = list(node.users)
        if len(users) != 1 or users[0].target is not torch.ops.aten.clone.default:
            return (f"buffer input {node.name} is read other than through its one clone (the "
                    "buffer is also an argument of the call)")
        clone = users[0]
        clone.replace_all_uses_with(node)
        graph.erase_node(clone)
    output = next(n for n in graph.nodes if n.op == "output")
    values = list(output.args[0])
    replaced = []
    for index, name in enumerate(forward.written):
        position = forward.leaves + index
        buffer = inputs.get(id(buffers[name]))
        updated = _in_place(graph, values[position], buffer, buffers[name], output, values)
        if updated is not None:
            replaced.append(values[position])
            values[position] = updated
    output.args = (values,)
    for node in replaced:
        graph.erase_node(node)
    graph_module.recompile()
    return None


def _in_place(graph, node, buffer, value, output, values):
    """An in-place node standing for ``node``, a functional op whose first argument is the
    ``buffer`` input it is the new value of (num_batches_tracked + 1), or None when it is not
    such an op or something else reads the buffer: eager's one in-place launch instead of the
    op and a copy back."""
    if (buffer is None or not isinstance(node, torch.fx.Node) or node.op != "call_function"
            or not isinstance(node.target, torch._ops.OpOverload) or not node.args
            or node.args[0] is not buffer or list(buffer.users) != [node]
            or list(node.users) != [output] or values.count(node) != 1):
        return None
    meta = tensor_meta(node)
    if meta is None or tuple(meta[0]) != tuple(value.shape) or meta[1] != value.dtype:
        return None
    name = node.target._schema.name
    if not name.startswith("aten::"):
        return None
    try:
        packet = getattr(torch.ops.aten, name[len("aten::"):] + "_")
        overload = getattr(packet, node.target._overloadname)
    except (AttributeError, RuntimeError):  # no in-place variant
        return None
    with graph.inserting_before(node):
        updated = graph.call_function(overload, node.args, node.kwargs)
    updated.meta = dict(node.meta)
    return updated
