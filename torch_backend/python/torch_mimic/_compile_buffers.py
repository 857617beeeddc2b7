"""Module buffers in a compiled forward (BatchNorm's running statistics in training).

PyTorch 1.13's AOT autograd, given a module's buffers, traces on the real tensors (so tracing
applies the updates) and its functionalization turns ``num_batches_tracked.add_(1)`` into an
``add`` whose result nothing uses (so replays drop it). The traced function here takes the
buffers as explicit inputs, works on clones of them (tracing leaves the module's buffers as they
were) and returns the new value of each buffer an in-place op wrote; ``write_back`` copies those
into the module after each call. ``share_buffers`` then takes the clones out of the compiled
forward: native_batch_norm writes its running statistics into its arguments without saying so
in its 1.13 schema (no version bump, no functionalization), so with the clone replaced by the
buffer the replay updates the buffer in place, as eager does, at no extra copy.
"""
import torch
from functorch._src.named_members_polyfill import _named_buffers, _named_parameters
from torch.nn.utils import stateless


class BufferForward:
    """The function AOT autograd traces for a module: (parameters, buffers, *args, **kwargs)
    -> (module output, new values of the buffers the forward wrote)."""

    def __init__(self, module):
        self.module = module
        self.written = None  # names of the buffers whose new values the traced forward returns

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
        return out, [working[name] for name in written]

    def write_back(self, buffers, values):
        """Copies the forward's new buffer values into the module's ``buffers`` (by name); a
        value that is the buffer itself was updated in place by the replay."""
        with torch.no_grad():
            for name, value in zip(self.written, values):
                buffer = buffers[name]
                if value.data_ptr() != buffer.data_ptr():
                    buffer.copy_(value)


def share_buffers(graph_module, example_inputs, buffers):
    """Rewrites a captured forward so that it reads the module's ``buffers`` in place of the
    clones BufferForward made of them. Returns why it cannot, or None.

    A buffer input whose one user is its clone can be read instead of the clone: the values are
    the same, and a write the graph makes into the clone (one AOT autograd cannot see, as
    native_batch_norm's) then lands in the buffer, as in eager. A buffer that is also an
    argument of the call is read by the graph both ways, which 1.13's AOT autograd does not
    keep in step with the writes. (Buffers shared by two modules are tied by functional_call
    and deduplicated by AOT autograd: one input, one clone.)"""
    owned = {id(b) for b in buffers}
    graph = graph_module.graph
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, example_inputs):
        if id(value) not in owned or not node.users:
            continue
        users = list(node.users)
        if len(users) != 1 or users[0].target is not torch.ops.aten.clone.default:
            return (f"buffer input {node.name} is read other than through its one clone (the "
                    "buffer is also an argument of the call)")
        clone = users[0]
        clone.replace_all_uses_with(node)
        graph.erase_node(clone)
    graph_module.recompile()
    return None
