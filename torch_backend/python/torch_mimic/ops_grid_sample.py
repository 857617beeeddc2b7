"""grid_sampler_2d and grid_sampler_3d and their backward for (bi/tri)linear and nearest
interpolation (zeros, border and reflection padding), following PyTorch's GridSampler.h: each
grid coordinate is unnormalised, clipped or reflected into the input (a few elementwise launches
per axis, which also give the coordinate's derivative for the backward), and the input is read
at the 2^d corners (or the nearest pixel) with gathers over [N, C, D*H*W]; corners outside the
input weigh zero. The backward scatter-adds the weighted gradient at the same corners and sums
the corner values times the weights' derivatives over the channels for the grid's gradient.
Bicubic interpolation runs on the CPU."""
import torch

from ._dtype_checks import check_dtype, type_name
from ._lib import Unsupported, empty, impl, launch
from .ops_reduce import reduce_into

_ops = torch.ops.mimic
_F32 = torch.float32
_BILINEAR, _NEAREST = 0, 1
_ZEROS, _BORDER, _REFLECTION = 0, 1, 2


def _reflect(twice_low, twice_high):
    """reflect_coordinates of x0 and the sign of its derivative, as programs."""
    if twice_low == twice_high:
        return "0", "0"
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    shifted = f"x0 {low!r} sub"
    even = f"{shifted} abs {span!r} div floor 2 rem 0 eq"
    extra = f"{shifted} abs {span!r} rem"
    reflected = f"{even} {extra} {low!r} add {span!r} {extra} sub {low!r} add where"
    sign = f"{shifted} 0 lt -1 1 where"
    return reflected, f"{even} {sign} {sign} neg where"


def _coordinates(grid_axis, size, padding_mode, align_corners):
    """[N, Ho, Wo] float32 pixel coordinates along one axis and their derivative by the grid
    coordinate (GridSampler.h's compute_coordinates and its _set_grad variants)."""
    device = grid_axis.device
    if align_corners:
        unnormalized, scale = "x0 1 add 2 div s0 1 sub mul", (size - 1) / 2
    else:
        unnormalized, scale = "x0 1 add s0 mul 1 sub 2 div", size / 2
    coords = launch(empty(grid_axis.shape, _F32, device), [grid_axis], unnormalized, _F32, [size])
    slopes = torch.full(grid_axis.shape, scale, dtype=_F32, device=device)
    if padding_mode == _REFLECTION:
        reflected, sign = _reflect(*((0, 2 * (size - 1)) if align_corners else (-1, 2 * size - 1)))
        launch(slopes, [coords, slopes], f"{sign} x1 mul", _F32)
        launch(coords, [coords], reflected, _F32)
    if padding_mode in (_BORDER, _REFLECTION):
        # clip_coordinates_set_grad: the border counts as outside for the gradient.
        launch(slopes, [coords, slopes], "x0 0 gt x0 s0 1 sub lt and x1 0 where", _F32, [size])
        launch(coords, [coords], "x0 0 max s0 1 sub min", _F32, [size])
    return coords, slopes


def _inside(ends):
    """A mask program: every axis's tap coordinate within [0, size); sizes are s0, s1, ..."""
    terms = [f"{end} 0 ge {end} s{a} lt and" for a, end in enumerate(ends)]
    return " ".join(terms) + " and" * (len(terms) - 1)


def _corners(coords, sizes, mode):
    """Per tap: the flat input index (0 outside the input) and the weight (0 outside) as
    [N, 1, P] tensors, and for (tri/bi)linear taps the weight's derivative along each grid axis.
    coords[a] and sizes[a] belong to grid axis a: x (the last input dim), y, then z."""
    device = coords[0].device
    flat = (coords[0].shape[0], 1, coords[0][0].numel())
    coords = [c.reshape(flat) for c in coords]
    dims = len(coords)
    strides = [1] * dims
    for a in range(1, dims):
        strides[a] = strides[a - 1] * sizes[a - 1]
    scalars = list(sizes) + strides
    result = []
    if mode == _NEAREST:
        ends = [f"x{a} round" for a in range(dims)]
        inside = _inside(ends)
        index = " ".join(f"{end} s{dims + a} mul" for a, end in enumerate(ends)) + " add" * (dims - 1)
        result.append((launch(empty(flat, torch.int64, device), coords, f"{inside} {index} 0 where", _F32, scalars),
                       launch(empty(flat, _F32, device), coords, f"{inside} 1 0 where", _F32, scalars), None))
        return result
    for tap in range(2 ** dims):
        upper = [(tap >> a) & 1 for a in range(dims)]
        ends = [f"x{a} floor 1 add" if up else f"x{a} floor" for a, up in enumerate(upper)]
        # Linear weights: the distance to the opposite corner along each axis.
        weights = [f"x{a} x{a} floor sub" if up else f"x{a} floor 1 add x{a} sub" for a, up in enumerate(upper)]
        inside = _inside(ends)
        index = " ".join(f"{end} s{dims + a} mul" for a, end in enumerate(ends)) + " add" * (dims - 1)
        weight = " ".join(weights) + " mul" * (dims - 1)
        derivatives = []
        for a in range(dims):
            others = [w for b, w in enumerate(weights) if b != a]
            product = " ".join(others) + " mul" * (len(others) - 1)
            derivatives.append(launch(empty(flat, _F32, device), coords,
                                      f"{inside} {product} {1 if upper[a] else -1} mul 0 where", _F32, scalars))
        result.append((launch(empty(flat, torch.int64, device), coords, f"{inside} {index} 0 where", _F32, scalars),
                       launch(empty(flat, _F32, device), coords, f"{inside} {weight} 0 where", _F32, scalars),
                       derivatives))
    return result


def _check(input, grid, interpolation_mode, dims):
    """GridSamplerUtils.h's check_grid_sampler_common and check_grid_sampler_2d."""
    sizes = f"input with sizes {list(input.shape)} and grid with sizes {list(grid.shape)}"
    if input.dtype != grid.dtype:
        # PyTorch 1.13's CPU kernel reads the grid as the input's type before its own check.
        raise RuntimeError(f"expected scalar type {type_name(input.dtype)} but found {type_name(grid.dtype)}")
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, but got {sizes}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in last dimension, but got "
                           f"grid with sizes {list(grid.shape)}")
    for dim in range(2, input.dim()):
        if input.shape[dim] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
                               f"sizes {list(input.shape)} with dimension {dim} being empty")
    if input.dim() != dims + 2 or grid.dim() != dims + 2:
        raise RuntimeError(f"grid_sampler(): expected {dims + 2}D input and grid with same number of dimensions, but "
                           f"got {sizes}")
    check_dtype(input, f"grid_sampler_{dims}d_cpu", (_F32,))
    check_dtype(grid, f"grid_sampler_{dims}d_cpu", (_F32,))
    if interpolation_mode not in (_BILINEAR, _NEAREST):
        raise Unsupported()  # bicubic


def _taps(input, grid, interpolation_mode, padding_mode, align_corners):
    """The taps of _corners and each grid axis's coordinate derivative."""
    sizes = list(input.shape[2:])[::-1]  # grid axis 0 indexes the last input dim
    coords, slopes = zip(*(_coordinates(grid[..., a], size, padding_mode, align_corners)
                           for a, size in enumerate(sizes)))
    return _corners(coords, sizes, interpolation_mode), slopes


def _gather(planes, index):
    values = empty((planes.shape[0], planes.shape[1], index.shape[2]), _F32, planes.device)
    _ops.gather(values, planes, 2, index.expand(values.shape))
    return values


def _sample(input, grid, interpolation_mode, padding_mode, align_corners, dims):
    _check(input, grid, interpolation_mode, dims)
    batch, channels = input.shape[:2]
    output = torch.zeros((batch, channels, *grid.shape[1:-1]), dtype=input.dtype, device=input.device)
    if output.numel() == 0 or input.numel() == 0:
        return output
    taps, _ = _taps(input, grid, interpolation_mode, padding_mode, align_corners)
    planes = input.reshape(batch, channels, -1)
    total = output.view(batch, channels, -1)
    for index, weight, _ in taps:
        launch(total, [total, _gather(planes, index), weight], "x0 x1 x2 mul add", _F32)
    return output


def _sample_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask, dims):
    _check(input, grid, interpolation_mode, dims)
    batch, channels = input.shape[:2]
    grad_input = torch.zeros(input.shape, dtype=_F32, device=input.device)
    grad_grid = torch.zeros(grid.shape, dtype=_F32, device=grid.device)
    if grad_output.numel() > 0 and input.numel() > 0:
        taps, slopes = _taps(input, grid, interpolation_mode, padding_mode, align_corners)
        grads = grad_output.reshape(batch, channels, -1)
        planes = input.reshape(batch, channels, -1)
        flat_grad_input = grad_input.view(batch, channels, -1)
        along = [torch.zeros(grads.shape, dtype=_F32, device=input.device) for _ in slopes]
        for index, weight, derivatives in taps:
            if output_mask[0]:
                weighted = launch(empty(grads.shape, _F32, input.device), [grads, weight], "x0 x1 mul", _F32)
                _ops.scatter(flat_grad_input, 2, index.expand(grads.shape), weighted, True)
            if output_mask[1] and derivatives is not None:
                values = _gather(planes, index)
                for summed, derivative in zip(along, derivatives):
                    launch(summed, [summed, values, derivative, grads], "x0 x1 x2 mul x3 mul add", _F32)
        if output_mask[1] and interpolation_mode == _BILINEAR:
            points = grid.shape[:-1]
            for axis, (summed, slope) in enumerate(zip(along, slopes)):
                total = reduce_into("sum", summed, [1], _F32).view(points)
                launch(grad_grid[..., axis], [total, slope], "x0 x1 mul", _F32)
    return (grad_input.to(input.dtype) if output_mask[0] else None,
            grad_grid.to(grid.dtype) if output_mask[1] else None)


@impl("grid_sampler_2d")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners, 2)


@impl("grid_sampler_2d_backward")
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    return _sample_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask,
                            2)


@impl("grid_sampler_3d")
def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    return _sample(input, grid, interpolation_mode, padding_mode, align_corners, 3)


@impl("grid_sampler_3d_backward")
def grid_sampler_3d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    return _sample_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask,
                            3)
