"""grid_sampler_2d and its backward for bilinear and nearest interpolation (zeros, border and
reflection padding), following PyTorch's GridSampler.h: each grid coordinate is unnormalised,
clipped or reflected into the input (one elementwise launch per axis, which also gives the
coordinate's derivative for the backward), and the input is read at the 2 x 2 corners (or the
nearest pixel) with gathers over [N, C, H*W]; corners outside the input weigh zero. The
backward scatter-adds the weighted gradient at the same corners and sums the corner values
times the weights' derivatives over the channels for the grid's gradient. Bicubic
interpolation runs on the CPU."""
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


def _corners(ix, iy, width, height, mode):
    """Per tap: the flat index y*W + x (0 outside the input) and the weight (0 outside), as
    [N, 1, P] tensors, plus for bilinear the weights' derivatives along x and y."""
    device = ix.device
    flat = (ix.shape[0], 1, ix.shape[1] * ix.shape[2])
    ix, iy = ix.reshape(flat), iy.reshape(flat)
    if mode == _NEAREST:
        taps = [("x0 round", "x1 round", None)]
    else:
        taps = [("x0 floor", "x1 floor", ("x0 floor 1 add x0 sub", "x1 floor 1 add x1 sub")),
                ("x0 floor 1 add", "x1 floor", ("x0 x0 floor sub", "x1 floor 1 add x1 sub")),
                ("x0 floor", "x1 floor 1 add", ("x0 floor 1 add x0 sub", "x1 x1 floor sub")),
                ("x0 floor 1 add", "x1 floor 1 add", ("x0 x0 floor sub", "x1 x1 floor sub"))]
    # d(weight)/dx for the four bilinear taps: -(y1 - iy), (y1 - iy), -(iy - y0), (iy - y0);
    # d(weight)/dy: -(x1 - ix), -(ix - x0), (x1 - ix), (ix - x0).
    signs = [(-1, -1), (1, -1), (-1, 1), (1, 1)]
    result = []
    for tap, (x, y, weights) in enumerate(taps):
        inside = f"{x} 0 ge {x} s0 lt and {y} 0 ge and {y} s1 lt and"
        index = launch(empty(flat, torch.int64, device), [ix, iy], f"{inside} {y} s0 mul {x} add 0 where", _F32,
                       [width, height])
        if weights is None:
            weight = launch(empty(flat, _F32, device), [ix, iy], f"{inside} 1 0 where", _F32, [width, height])
            result.append((index, weight, None, None))
            continue
        wx, wy = weights
        weight = launch(empty(flat, _F32, device), [ix, iy], f"{inside} {wx} {wy} mul 0 where", _F32, [width, height])
        dx = launch(empty(flat, _F32, device), [ix, iy], f"{inside} {wy} {signs[tap][0]} mul 0 where", _F32,
                    [width, height])
        dy = launch(empty(flat, _F32, device), [ix, iy], f"{inside} {wx} {signs[tap][1]} mul 0 where", _F32,
                    [width, height])
        result.append((index, weight, dx, dy))
    return result


def _check(input, grid, interpolation_mode, padding_mode):
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
    if input.dim() != 4 or grid.dim() != 4:
        raise RuntimeError(f"grid_sampler(): expected 4D input and grid with same number of dimensions, but got {sizes}")
    check_dtype(input, "grid_sampler_2d_cpu", (_F32,))
    check_dtype(grid, "grid_sampler_2d_cpu", (_F32,))
    if interpolation_mode not in (_BILINEAR, _NEAREST):
        raise Unsupported()  # bicubic


def _taps(input, grid, interpolation_mode, padding_mode, align_corners):
    height, width = input.shape[2:]
    ix, slope_x = _coordinates(grid[..., 0], width, padding_mode, align_corners)
    iy, slope_y = _coordinates(grid[..., 1], height, padding_mode, align_corners)
    return _corners(ix, iy, width, height, interpolation_mode), slope_x, slope_y


def _gather(planes, index):
    values = empty((planes.shape[0], planes.shape[1], index.shape[2]), _F32, planes.device)
    _ops.gather(values, planes, 2, index.expand(values.shape))
    return values


@impl("grid_sampler_2d")
def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    _check(input, grid, interpolation_mode, padding_mode)
    batch, channels = input.shape[:2]
    out_h, out_w = grid.shape[1:3]
    output = torch.zeros((batch, channels, out_h, out_w), dtype=input.dtype, device=input.device)
    if output.numel() == 0 or input.numel() == 0:
        return output
    taps, _, _ = _taps(input, grid, interpolation_mode, padding_mode, align_corners)
    planes = input.reshape(batch, channels, -1)
    total = output.view(batch, channels, -1)
    for index, weight, _, _ in taps:
        launch(total, [total, _gather(planes, index), weight], "x0 x1 x2 mul add", _F32)
    return output


@impl("grid_sampler_2d_backward")
def grid_sampler_2d_backward(grad_output, input, grid, interpolation_mode, padding_mode, align_corners, output_mask):
    _check(input, grid, interpolation_mode, padding_mode)
    batch, channels = input.shape[:2]
    grad_input = torch.zeros(input.shape, dtype=_F32, device=input.device)
    grad_grid = torch.zeros(grid.shape, dtype=_F32, device=grid.device)
    if grad_output.numel() > 0 and input.numel() > 0:
        taps, slope_x, slope_y = _taps(input, grid, interpolation_mode, padding_mode, align_corners)
        grads = grad_output.reshape(batch, channels, -1)
        planes = input.reshape(batch, channels, -1)
        flat_grad_input = grad_input.view(batch, channels, -1)
        along_x = torch.zeros(grads.shape, dtype=_F32, device=input.device)
        along_y = torch.zeros(grads.shape, dtype=_F32, device=input.device)
        for index, weight, dx, dy in taps:
            if output_mask[0]:
                weighted = launch(empty(grads.shape, _F32, input.device), [grads, weight], "x0 x1 mul", _F32)
                _ops.scatter(flat_grad_input, 2, index.expand(grads.shape), weighted, True)
            if output_mask[1] and dx is not None:
                values = _gather(planes, index)
                launch(along_x, [along_x, values, dx, grads], "x0 x1 x2 mul x3 mul add", _F32)
                launch(along_y, [along_y, values, dy, grads], "x0 x1 x2 mul x3 mul add", _F32)
        if output_mask[1] and interpolation_mode == _BILINEAR:
            points = grid.shape[:3]
            for axis, (summed, slope) in enumerate(((along_x, slope_x), (along_y, slope_y))):
                total = reduce_into("sum", summed, [1], _F32).view(points)
                launch(grad_grid[..., axis], [total, slope], "x0 x1 mul", _F32)
    return (grad_input.to(input.dtype) if output_mask[0] else None,
            grad_grid.to(grid.dtype) if output_mask[1] else None)
