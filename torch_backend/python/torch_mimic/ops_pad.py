"""Reflection and replication padding (1d, 2d, 3d) and their backward: every output position
along a padded dimension copies one input position, so the forward gathers the trailing
dimensions at those positions (index_select) and the backward sums the gradient back into the
input (index_add), as ops_upsample does for nearest upsampling. With i = o - pad_before (negative
padding crops), reflection reads |i| mirrored at the far edge, replication clamps i into the
input, as the CPU kernels do (aten/src/ATen/native/ReflectionPad.cpp, ReplicationPadding.cpp).
Argument and shape checks are the meta kernels' (the CPU's); where a backward has no meta
kernel, a gradient of the wrong shape goes to the CPU fallback for the CPU's error."""
import torch

from ._lib import Unsupported, impl
from .ops_upsample import add_along, into_out, meta_like, require_float32, select_along


def _require_moved(*tensors):
    """float32, or complex64, whose elements the index kernels move as raw words and whose
    gradients they add as float32 halves."""
    if tensors[0].dtype == torch.complex64 and all(t.dtype == torch.complex64 for t in tensors):
        return
    require_float32(*tensors)


def _positions(mode, input_size, before, after):
    i = torch.arange(-before, input_size + after, dtype=torch.int64)
    if mode == "reflection":
        i = i.abs()
        return torch.where(i >= input_size, 2 * (input_size - 1) - i, i)
    return i.clamp(0, input_size - 1)


def _indices(mode, shape, padding, device):
    spatial = len(padding) // 2
    indices = []
    for j in range(spatial):
        pair = spatial - 1 - j  # padding lists the last dimension first
        size = shape[len(shape) - spatial + j]
        indices.append(_positions(mode, size, padding[2 * pair], padding[2 * pair + 1]).to(device))
    return indices


def _register(mode, spatial):
    name = f"{mode}_pad{spatial}d"
    forward_op = getattr(torch.ops.aten, name).default
    backward_op = getattr(torch.ops.aten, f"{name}_backward").default
    backward_has_meta = torch._C._dispatch_has_kernel_for_dispatch_key(f"aten::{name}_backward", "Meta")

    def forward(self, padding):
        forward_op(meta_like(self), padding)  # the CPU's checks
        _require_moved(self)
        if self.numel() == 0:
            return torch.empty(forward_op(meta_like(self), padding).shape, dtype=self.dtype, device=self.device)
        return select_along(self, _indices(mode, self.shape, padding, self.device))

    def backward(grad_output, self, padding):
        if backward_has_meta:
            backward_op(meta_like(grad_output), meta_like(self), padding)
        elif tuple(forward_op(meta_like(self), padding).shape) != tuple(grad_output.shape):
            raise Unsupported()
        _require_moved(grad_output, self)
        if self.numel() == 0:
            return torch.zeros(self.shape, dtype=self.dtype, device=self.device)
        return add_along(grad_output, list(self.shape), _indices(mode, self.shape, padding, self.device))

    impl(name)(forward)
    impl(f"{name}.out")(lambda self, padding, *, out: into_out(out, forward(self, padding)))
    impl(f"{name}_backward")(backward)
    impl(f"{name}_backward.grad_input")(
        lambda grad_output, self, padding, *, grad_input: into_out(grad_input, backward(grad_output, self, padding)))


for _mode in ("reflection", "replication"):
    for _spatial in (1, 2, 3):
        _register(_mode, _spatial)
