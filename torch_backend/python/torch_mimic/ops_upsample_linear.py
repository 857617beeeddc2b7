"""Linear, bilinear and trilinear upsampling and their backward. The interpolation is separable:
along each spatial dimension an output element is l0 x[i0] + l1 x[i1], so the forward runs
innermost dimension first (as the CPU kernel nests its sums: w inside h inside d) with two
index_selects and a pointwise blend per dimension, and the backward spreads l0 g and l1 g back
with two index_adds per dimension, outermost first. Source indices and weights are the CPU's
(aten/src/ATen/native/UpSample.h: area_pixel_compute_scale, compute_source_index_and_lambda),
computed on the host in the CPU's precision and copied to the device once per call. Checks are
the meta kernels' (the CPU's structured checks)."""
import torch

from ._lib import impl
from .ops_upsample import into_out, meta_like, require_float32, vec_output_size, vec_scales


def _weights(input_size, output_size, align_corners, scale, device):
    """(i0, i1, l0, l1) of each output position along one dimension."""
    positions = torch.arange(output_size, dtype=torch.int64)
    if output_size == input_size:
        zero = torch.zeros(output_size, dtype=torch.float32)
        index0, index1, lambda1 = positions, positions, zero
    else:
        if align_corners:
            ratio = (torch.tensor(float(input_size - 1), dtype=torch.float32) / float(output_size - 1)
                     if output_size > 1 else torch.tensor(0.0, dtype=torch.float32))
            real = ratio * positions.to(torch.float32)
        else:
            if scale is not None and scale > 0:
                ratio = torch.tensor(1.0 / scale, dtype=torch.float32)
            else:
                ratio = torch.tensor(float(input_size), dtype=torch.float32) / float(output_size)
            # The CPU computes ratio * (dst + 0.5) - 0.5 in double and stores it as float.
            real = (ratio.double() * (positions.double() + 0.5) - 0.5).to(torch.float32).clamp_(min=0)
        index0 = real.to(torch.int64)
        index1 = index0 + (index0 < input_size - 1).to(torch.int64)
        lambda1 = (real - index0.to(torch.float32)).clamp_(0, 1)
    lambda0 = 1 - lambda1
    return [t.to(device) for t in (index0, index1, lambda0, lambda1)]


def _shaped(weights, dims, dim):
    shape = [1] * dims
    shape[dim] = -1
    return weights.reshape(shape)


def _all_weights(input_size, output_size, align_corners, scales, device):
    spatial = len(output_size)
    return [_weights(input_size[len(input_size) - spatial + i], output_size[i], align_corners, scales[i], device)
            for i in range(spatial)]


def _forward(self, output_size, align_corners, scales):
    spatial = len(output_size)
    weights = _all_weights(self.shape, output_size, align_corners, scales, self.device)
    result = self
    for i in reversed(range(spatial)):
        dim = self.dim() - spatial + i
        index0, index1, lambda0, lambda1 = weights[i]
        result = (result.index_select(dim, index0) * _shaped(lambda0, self.dim(), dim)
                  + result.index_select(dim, index1) * _shaped(lambda1, self.dim(), dim))
    return result.contiguous()


def _backward(grad_output, output_size, input_size, align_corners, scales):
    spatial = len(output_size)
    dims = len(input_size)
    weights = _all_weights(input_size, output_size, align_corners, scales, grad_output.device)
    grad = grad_output
    for i in range(spatial):
        dim = dims - spatial + i
        index0, index1, lambda0, lambda1 = weights[i]
        shape = list(grad.shape)
        shape[dim] = input_size[dim]
        summed = torch.zeros(shape, dtype=grad.dtype, device=grad.device)
        summed.index_add_(dim, index0, grad * _shaped(lambda0, dims, dim))
        grad = summed.index_add_(dim, index1, grad * _shaped(lambda1, dims, dim))
    return grad


_NAMES = {1: "upsample_linear1d", 2: "upsample_bilinear2d", 3: "upsample_trilinear3d"}


def _register(spatial):
    name = _NAMES[spatial]
    forward_op = getattr(torch.ops.aten, name).default
    backward_op = getattr(torch.ops.aten, f"{name}_backward").default

    def padded(scales):
        # The dispatcher leaves trailing default arguments out of the call.
        return list(scales) + [None] * (spatial - len(scales))

    def forward(self, output_size, align_corners, *scales):
        scales = padded(scales)
        forward_op(meta_like(self), output_size, align_corners, *scales)  # the CPU's checks
        require_float32(self)
        return _forward(self, list(output_size), align_corners, scales)

    def backward(grad_output, output_size, input_size, align_corners, *scales):
        scales = padded(scales)
        backward_op(meta_like(grad_output), output_size, input_size, align_corners, *scales)
        require_float32(grad_output)
        return _backward(grad_output, list(output_size), list(input_size), align_corners, scales)

    def forward_vec(input, output_size, align_corners, scale_factors):
        size = vec_output_size(input.shape, output_size, scale_factors, spatial)
        return forward(input, size, align_corners, *vec_scales(scale_factors, spatial))

    def backward_vec(grad_output, output_size, input_size, align_corners, scale_factors):
        size = vec_output_size(input_size, output_size, scale_factors, spatial)
        return backward(grad_output, size, input_size, align_corners, *vec_scales(scale_factors, spatial))

    def forward_out(self, output_size, align_corners, *scales, out):
        return into_out(out, forward(self, output_size, align_corners, *scales))

    def backward_out(grad_output, output_size, input_size, align_corners, *scales, grad_input):
        return into_out(grad_input, backward(grad_output, output_size, input_size, align_corners, *scales))

    impl(name)(forward)
    impl(f"{name}.out")(forward_out)
    impl(f"{name}.vec")(forward_vec)
    impl(f"{name}_backward")(backward)
    impl(f"{name}_backward.grad_input")(backward_out)
    impl(f"{name}_backward.vec")(backward_vec)


for _spatial in (1, 2, 3):
    _register(_spatial)
