"""Linear, bilinear, trilinear and bicubic upsampling and their backward. The interpolation is
separable: along each spatial dimension an output element is a weighted sum of taps,
l0 x[i0] + l1 x[i1] (linear) or four taps of Keys' cubic convolution with A = -0.75 (bicubic,
indices clamped into the input). The forward runs innermost dimension first (as the CPU kernel
nests its sums: w inside h inside d) with one index_select per tap and a pointwise weighted sum;
the backward spreads each tap's weighted gradient back with index_add, outermost dimension
first. Source indices and weights are the CPU's (aten/src/ATen/native/UpSample.h:
area_pixel_compute_scale, compute_source_index_and_lambda, get_cubic_upsample_coefficients),
computed on the host in the CPU's precision and copied to the device once per call. Checks are
the meta kernels' (the CPU's structured checks)."""
import torch

from ._lib import impl
from .ops_upsample import into_out, meta_like, require_float32, vec_output_size, vec_scales


def _ratio(input_size, output_size, align_corners, scale):
    """area_pixel_compute_scale in float32."""
    if align_corners:
        if output_size > 1:
            return torch.tensor(float(input_size - 1), dtype=torch.float32) / float(output_size - 1)
        return torch.tensor(0.0, dtype=torch.float32)
    if scale is not None and scale > 0:
        return torch.tensor(1.0 / scale, dtype=torch.float32)
    return torch.tensor(float(input_size), dtype=torch.float32) / float(output_size)


def _source(ratio, positions, align_corners):
    """area_pixel_compute_source_index (unclamped): the CPU computes ratio (dst + 0.5) - 0.5 in
    double and stores it as float."""
    if align_corners:
        return ratio * positions.to(torch.float32)
    return (ratio.double() * (positions.double() + 0.5) - 0.5).to(torch.float32)


def _linear_taps(input_size, output_size, align_corners, scale):
    """[(index, weight)] of the two taps of each output position along one dimension."""
    positions = torch.arange(output_size, dtype=torch.int64)
    if output_size == input_size:
        return [(positions, torch.ones(output_size)), (positions, torch.zeros(output_size))]
    real = _source(_ratio(input_size, output_size, align_corners, scale), positions, align_corners).clamp_(min=0)
    index0 = real.to(torch.int64)
    index1 = index0 + (index0 < input_size - 1).to(torch.int64)
    lambda1 = (real - index0.to(torch.float32)).clamp_(0, 1)
    return [(index0, 1 - lambda1), (index1, lambda1)]


_A = -0.75  # the cubic convolution constant PyTorch uses


def _cubic_taps(input_size, output_size, align_corners, scale):
    """[(index, weight)] of the four taps of each output position along one dimension."""
    positions = torch.arange(output_size, dtype=torch.int64)
    real = _source(_ratio(input_size, output_size, align_corners, scale), positions, align_corners)
    floor = torch.floor(real)
    t = real - floor
    start = floor.to(torch.int64) - 1

    def near(x):  # cubic_convolution1, |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x):  # cubic_convolution2, 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    weights = [far(t + 1.0), near(t), near(1.0 - t), far((1.0 - t) + 1.0)]
    return [((start + j).clamp(0, input_size - 1), weights[j]) for j in range(4)]


def _shaped(weights, dims, dim):
    shape = [1] * dims
    shape[dim] = -1
    return weights.reshape(shape)


def _all_taps(taps_of, input_size, output_size, align_corners, scales, device):
    spatial = len(output_size)
    per_dim = []
    for i in range(spatial):
        taps = taps_of(input_size[len(input_size) - spatial + i], output_size[i], align_corners, scales[i])
        per_dim.append([(index.to(device), weight.to(torch.float32).to(device)) for index, weight in taps])
    return per_dim


def _forward(taps_of, self, output_size, align_corners, scales):
    spatial = len(output_size)
    per_dim = _all_taps(taps_of, self.shape, output_size, align_corners, scales, self.device)
    result = self
    for i in reversed(range(spatial)):
        dim = self.dim() - spatial + i
        blend = None
        for index, weight in per_dim[i]:
            term = result.index_select(dim, index) * _shaped(weight, self.dim(), dim)
            blend = term if blend is None else blend + term
        result = blend
    return result.contiguous()


def _backward(taps_of, grad_output, output_size, input_size, align_corners, scales):
    spatial = len(output_size)
    dims = len(input_size)
    per_dim = _all_taps(taps_of, input_size, output_size, align_corners, scales, grad_output.device)
    grad = grad_output
    for i in range(spatial):
        dim = dims - spatial + i
        shape = list(grad.shape)
        shape[dim] = input_size[dim]
        summed = torch.zeros(shape, dtype=grad.dtype, device=grad.device)
        for index, weight in per_dim[i]:
            summed.index_add_(dim, index, grad * _shaped(weight, dims, dim))
        grad = summed
    return grad


def _register(name, spatial, taps_of):
    forward_op = getattr(torch.ops.aten, name).default
    backward_op = getattr(torch.ops.aten, f"{name}_backward").default

    def padded(scales):
        # The dispatcher leaves trailing default arguments out of the call.
        return list(scales) + [None] * (spatial - len(scales))

    def forward(self, output_size, align_corners, *scales):
        scales = padded(scales)
        forward_op(meta_like(self), output_size, align_corners, *scales)  # the CPU's checks
        require_float32(self)
        return _forward(taps_of, self, list(output_size), align_corners, scales)

    def backward(grad_output, output_size, input_size, align_corners, *scales):
        scales = padded(scales)
        backward_op(meta_like(grad_output), output_size, input_size, align_corners, *scales)
        require_float32(grad_output)
        return _backward(taps_of, grad_output, list(output_size), list(input_size), align_corners, scales)

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


_register("upsample_linear1d", 1, _linear_taps)
_register("upsample_bilinear2d", 2, _linear_taps)
_register("upsample_trilinear3d", 3, _linear_taps)
_register("upsample_bicubic2d", 2, _cubic_taps)
