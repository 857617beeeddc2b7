"""Nearest-neighbour upsampling (1d, 2d, 3d) and its backward: each output element along a
spatial dimension copies the input element at a source index, so the forward is one
index_select per spatial dimension and the backward one index_add per dimension (in reverse
order), both device index kernels. The source indices are the CPU's, computed in float32 as its
kernel does (aten/src/ATen/native/UpSample.h: nearest_idx), on the host: they are a few
integers per output size, copied to the device once per call. The shape and argument checks
are the meta kernels' (the CPU's structured checks), so errors match the CPU's."""
import math

import torch

from ._lib import Unsupported, impl, prepare_out


def _source_index(input_size, output_size, scale, device):
    """Source index of each output position along one dimension, as nearest_idx computes it."""
    positions = torch.arange(output_size, dtype=torch.int64)
    if output_size == input_size:
        index = positions
    elif output_size == 2 * input_size:
        index = positions >> 1
    else:
        if scale is not None and scale > 0:
            step = torch.tensor(1.0 / scale, dtype=torch.float32)
        else:
            step = torch.tensor(float(input_size), dtype=torch.float32) / float(output_size)
        index = torch.floor(positions.to(torch.float32) * step).to(torch.int64).clamp_(max=input_size - 1)
    return index.to(device)


def meta_like(tensor):
    return torch.empty(tensor.shape, dtype=tensor.dtype, device="meta")


def require_float32(*tensors):
    # Other dtypes go to the CPU fallback: its dtype support and its errors are the reference.
    for tensor in tensors:
        if tensor.dtype != torch.float32:
            raise Unsupported()


def select_along(x, indices):
    """x with its trailing dimensions (one per index vector) gathered at those indices."""
    result = x
    for i, index in enumerate(indices):
        result = result.index_select(x.dim() - len(indices) + i, index)
    return result.contiguous()


def add_along(grad, input_shape, indices):
    """The adjoint of select_along: grad summed into a zeroed input_shape at the indices."""
    for i in reversed(range(len(indices))):
        dim = len(input_shape) - len(indices) + i
        shape = list(grad.shape)
        shape[dim] = input_shape[dim]
        grad = torch.zeros(shape, dtype=grad.dtype, device=grad.device).index_add_(dim, indices[i], grad)
    return grad


def _forward(self, output_size, scales):
    spatial = len(output_size)
    return select_along(self, [_source_index(self.shape[self.dim() - spatial + i], size, scale, self.device)
                               for i, (size, scale) in enumerate(zip(output_size, scales))])


def _backward(grad_output, output_size, input_size, scales):
    spatial = len(output_size)
    return add_along(grad_output, input_size,
                     [_source_index(input_size[len(input_size) - spatial + i], size, scale, grad_output.device)
                      for i, (size, scale) in enumerate(zip(output_size, scales))])


def vec_output_size(input_shape, output_size, scale_factors, spatial):
    """upsample::compute_output_size of the .vec overloads (aten/src/ATen/native/UpSample.cpp)."""
    if output_size is not None and scale_factors is not None:
        raise RuntimeError("Must specify exactly one of output_size and scale_factors")
    if output_size is not None:
        if len(output_size) != spatial:
            raise RuntimeError(f"It is expected output_size equals to {spatial}, but got size {len(output_size)}")
        return list(output_size)
    if scale_factors is not None:
        if len(scale_factors) != spatial:
            raise RuntimeError(f"It is expected scale_factors equals to {spatial}, but got size {len(scale_factors)}")
        return [math.trunc(input_shape[i + 2] * scale_factors[i]) for i in range(spatial)]
    raise RuntimeError("Must specify exactly one of output_size and scale_factors")


def vec_scales(scale_factors, spatial):
    return list(scale_factors) if scale_factors is not None else [None] * spatial


_FORWARD = {1: torch.ops.aten.upsample_nearest1d.default, 2: torch.ops.aten.upsample_nearest2d.default,
            3: torch.ops.aten.upsample_nearest3d.default}
_BACKWARD = {1: torch.ops.aten.upsample_nearest1d_backward.default,
             2: torch.ops.aten.upsample_nearest2d_backward.default,
             3: torch.ops.aten.upsample_nearest3d_backward.default}


def _nearest(self, output_size, scales):
    _FORWARD[len(output_size)](meta_like(self), output_size, *scales)  # the CPU's checks
    require_float32(self)
    return _forward(self, list(output_size), scales)


def _nearest_backward(grad_output, output_size, input_size, scales):
    _BACKWARD[len(output_size)](meta_like(grad_output), output_size, input_size, *scales)
    require_float32(grad_output)
    return _backward(grad_output, list(output_size), list(input_size), scales)


def into_out(out, result):
    if out.dtype != result.dtype:
        raise Unsupported()
    prepare_out(out, result.shape, result.dtype)
    return out.copy_(result)


@impl("upsample_nearest1d")
def upsample_nearest1d(self, output_size, scales=None):
    return _nearest(self, output_size, [scales])


@impl("upsample_nearest1d.out")
def upsample_nearest1d_out(self, output_size, scales=None, *, out):
    return into_out(out, _nearest(self, output_size, [scales]))


@impl("upsample_nearest2d")
def upsample_nearest2d(self, output_size, scales_h=None, scales_w=None):
    return _nearest(self, output_size, [scales_h, scales_w])


@impl("upsample_nearest2d.out")
def upsample_nearest2d_out(self, output_size, scales_h=None, scales_w=None, *, out):
    return into_out(out, _nearest(self, output_size, [scales_h, scales_w]))


@impl("upsample_nearest3d")
def upsample_nearest3d(self, output_size, scales_d=None, scales_h=None, scales_w=None):
    return _nearest(self, output_size, [scales_d, scales_h, scales_w])


@impl("upsample_nearest3d.out")
def upsample_nearest3d_out(self, output_size, scales_d=None, scales_h=None, scales_w=None, *, out):
    return into_out(out, _nearest(self, output_size, [scales_d, scales_h, scales_w]))


def _nearest_vec(spatial):
    def kernel(input, output_size, scale_factors):
        size = vec_output_size(input.shape, output_size, scale_factors, spatial)
        return _nearest(input, size, vec_scales(scale_factors, spatial))
    return kernel


def _nearest_backward_vec(spatial):
    def kernel(grad_output, output_size, input_size, scale_factors):
        size = vec_output_size(input_size, output_size, scale_factors, spatial)
        return _nearest_backward(grad_output, size, input_size, vec_scales(scale_factors, spatial))
    return kernel


for _spatial in (1, 2, 3):
    impl(f"upsample_nearest{_spatial}d.vec")(_nearest_vec(_spatial))
    impl(f"upsample_nearest{_spatial}d_backward.vec")(_nearest_backward_vec(_spatial))


@impl("upsample_nearest1d_backward")
def upsample_nearest1d_backward(grad_output, output_size, input_size, scales=None):
    return _nearest_backward(grad_output, output_size, input_size, [scales])


@impl("upsample_nearest1d_backward.grad_input")
def upsample_nearest1d_backward_grad_input(grad_output, output_size, input_size, scales=None, *, grad_input):
    return into_out(grad_input, _nearest_backward(grad_output, output_size, input_size, [scales]))


@impl("upsample_nearest2d_backward")
def upsample_nearest2d_backward(grad_output, output_size, input_size, scales_h=None, scales_w=None):
    return _nearest_backward(grad_output, output_size, input_size, [scales_h, scales_w])


@impl("upsample_nearest2d_backward.grad_input")
def upsample_nearest2d_backward_grad_input(grad_output, output_size, input_size, scales_h=None, scales_w=None, *,
                                           grad_input):
    return into_out(grad_input, _nearest_backward(grad_output, output_size, input_size, [scales_h, scales_w]))


@impl("upsample_nearest3d_backward")
def upsample_nearest3d_backward(grad_output, output_size, input_size, scales_d=None, scales_h=None, scales_w=None):
    return _nearest_backward(grad_output, output_size, input_size, [scales_d, scales_h, scales_w])


@impl("upsample_nearest3d_backward.grad_input")
def upsample_nearest3d_backward_grad_input(grad_output, output_size, input_size, scales_d=None, scales_h=None,
                                           scales_w=None, *, grad_input):
    return into_out(grad_input, _nearest_backward(grad_output, output_size, input_size,
                                               [scales_d, scales_h, scales_w]))
