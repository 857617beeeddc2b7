"""The pooling pass: float32 2-D pooling over windows that tile the input (stride = kernel, no
padding, no dilation, the input exactly OH*KH by OW*KW), with eager's float32 operations
(ops_nn_pool.py), so results are bit-identical, in fewer launches:

- avg_pool2d: one reduction over the window view with the window size (or divisor_override)
  as its divisor, where eager reduces and then divides by a [OH, OW] tensor of that value: 1
  launch instead of 2.
- avg_pool2d_backward: each input element is grad_output / divisor added onto a zero plane
  once (the windows are disjoint): one elementwise launch, `0 + g / divisor`, over the input
  viewed as [N, C, OH, KH, OW, KW], instead of eager's division, zero plane, KH*KW adds and
  crop.
- max_pool2d_with_indices_backward: each input element is 0 + grad_output where the window's
  saved index is its own position h*W + w, else 0 (eager: a zero plane and a scatter-add): 1
  launch instead of 2. The position comes from the element's index, exact in float32 below 2^24
  elements.

A fused pointwise kernel that alone reads a pooling backward's result (the ReLU's
threshold_backward) becomes that launch's epilogue, its other inputs read through the same
tiled view. Other windows (overlapping, padded, ragged, dilated) run eager."""
import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._lower_norm import renumber
from ._lower_pointwise import FusedKernel

ORDER = 50  # independent of the other passes: it takes only pooling nodes

_F32 = torch.float32
_EXACT_INDEX = 1 << 24  # float32 holds every integer below it
_MAX_INPUTS = 8  # kMaxElementwiseInputs
_MAX_SCALARS = 8  # kMaxElementwiseScalars
_ops = torch.ops.mimic


def _pair(values, default=None):
    values = [values] if isinstance(values, int) else list(values)
    if not values:
        return default
    return (values[0], values[-1]) if len(values) in (1, 2) else None


def _tiling(input_node, kernel_size, stride, padding, dilation=(1,)):
    """The kernel (KH, KW) when its windows tile the float32 4-D input exactly, else None."""
    meta = tensor_meta(input_node) if isinstance(input_node, torch.fx.Node) else None
    if meta is None or meta[1] != _F32 or len(meta[0]) != 4:
        return None
    kernel = _pair(kernel_size)
    if kernel is None or _pair(stride, kernel) != kernel:
        return None
    if _pair(padding) != (0, 0) or _pair(dilation) != (1, 1) or min(kernel) < 1:
        return None
    height, width = meta[0][2:]
    if height % kernel[0] or width % kernel[1] or height == 0 or width == 0:
        return None
    return kernel


def _tiled(tensor, kernel):
    """[N, C, H, W] as [N, C, OH, KH, OW, KW] windows (a view)."""
    batch, channels, height, width = tensor.shape
    return tensor.view(batch, channels, height // kernel[0], kernel[0], width // kernel[1], kernel[1])


class AvgPoolKernel(Kernel):
    kind = "avg_pool"

    def __init__(self, nodes, kernel, divisor):
        super().__init__(nodes)
        self.kernel, self.divisor = kernel, divisor

    def __call__(self, x):
        batch, channels, height, width = x.shape
        out_size = (height // self.kernel[0], width // self.kernel[1])
        out = torch.empty((batch, channels, *out_size), dtype=_F32, device=x.device)
        if out.numel() > 0:
            # eager's [N, C, OH, OW, KH, KW] window view, reduced over (kh, kw) as eager does.
            windows = x.as_strided(out.shape + self.kernel,
                                   (x.stride(0), x.stride(1), self.kernel[0] * x.stride(2),
                                    self.kernel[1] * x.stride(3), x.stride(2), x.stride(3)))
            _ops.reduce(out.view(*out.shape, 1, 1), windows, [4, 5], "sum", "", None, float(self.divisor),
                        False)
        return out


def _windowed(tensor, shape, kernel):
    """A tensor broadcasting to the input's [N, C, H, W] ``shape`` as the [N, C, OH, KH, OW, KW]
    view of it that _tiled gives."""
    full = tensor.expand(shape)
    strides = full.stride()
    return full.as_strided((shape[0], shape[1], shape[2] // kernel[0], kernel[0], shape[3] // kernel[1],
                            kernel[1]),
                           (strides[0], strides[1], kernel[0] * strides[2], strides[2], kernel[1] * strides[3],
                            strides[3]))


class _PoolBackwardKernel(Kernel):
    """A pooling backward as one elementwise launch over the tiled input gradient: ``program``
    over the per-window ``window_inputs`` (x0, x1, ...), then ``epilogue`` (an absorbed
    pointwise kernel's program, its x0 the gradient) over the inputs that follow."""

    def __init__(self, nodes, kernel, program, scalars):
        super().__init__(nodes)
        self.kernel = kernel
        self.program, self.scalars = program, list(scalars)

    def run(self, x, window_inputs, extra):
        grad_input = torch.empty(x.shape, dtype=_F32, device=x.device)
        if grad_input.numel() > 0:
            out = _tiled(grad_input, self.kernel)
            shape = (x.shape[0], x.shape[1], out.shape[2], 1, out.shape[4], 1)
            inputs = [t.reshape(shape).expand(out.shape) for t in window_inputs]
            inputs += [_windowed(t, x.shape, self.kernel) for t in extra]
            _ops.elementwise(out, inputs, self.program, _F32, self.scalars, 0, 0)
        return grad_input

    def absorb(self, user, output, base_inputs):
        """Makes the fused pointwise ``user`` of this kernel's ``output`` its epilogue; returns
        the user's other inputs."""
        mapping, extra = {}, []
        for index, value in enumerate(user.args):
            if value is output:
                mapping[index] = self.program
            else:
                mapping[index] = f"x{base_inputs + len(extra)}"
                extra.append(value)
        shift = len(self.scalars)
        scalars = {f"s{i}": f"s{i + shift}" for i in range(len(user.target.scalars))}
        program = " ".join(scalars.get(token, token) for token in user.target.program.split())
        self.program = renumber(program, mapping)
        self.scalars += user.target.scalars
        self.nodes += user.target.nodes
        return extra

    def describe(self):
        return dict(super().describe(), program=self.program)


class AvgPoolBackwardKernel(_PoolBackwardKernel):
    kind = "avg_pool_backward"

    def __init__(self, nodes, kernel, divisor):
        super().__init__(nodes, kernel, "0 x0 s0 div add", [float(divisor)])

    def __call__(self, grad_output, x, *extra):
        return self.run(x, [grad_output], extra)


class MaxPoolBackwardKernel(_PoolBackwardKernel):
    kind = "max_pool_backward"

    def __init__(self, nodes, kernel, plane_size):
        super().__init__(nodes, kernel, "idx s0 rem x1 eq 0 x0 add 0 where", [plane_size])

    def __call__(self, grad_output, x, indices, *extra):
        return self.run(x, [grad_output, indices], extra)


def _plane_size(x):
    height, width = tensor_meta(x)[0][2:]
    return height * width


def _avg_divisor(values, kernel):
    override = values["divisor_override"]
    if override is not None:
        return override if type(override) is int and override != 0 else None
    return kernel[0] * kernel[1]  # windows inside the input: count_include_pad does not matter


def _lowered(node):
    """(kernel, inputs) for a pooling node this pass takes, or None."""
    name = aten_name(node)
    if name not in ("avg_pool2d", "avg_pool2d_backward", "max_pool2d_with_indices_backward"):
        return None
    values = bound_arguments(node)
    if values is None:
        return None
    x = values["self"]
    dilation = values.get("dilation", (1,))
    kernel = _tiling(x, values["kernel_size"], values["stride"], values["padding"], dilation)
    if kernel is None:
        return None
    nodes = [str(node.target)]
    if name == "max_pool2d_with_indices_backward":
        grad = values["grad_output"]
        grad_meta = tensor_meta(grad) if isinstance(grad, torch.fx.Node) else None
        if grad_meta is None or grad_meta[1] != _F32 or tensor_meta(x)[0].numel() >= _EXACT_INDEX:
            return None
        return MaxPoolBackwardKernel(nodes, kernel, _plane_size(x)), [grad, x, values["indices"]]
    divisor = _avg_divisor(values, kernel)
    if divisor is None:
        return None
    if name == "avg_pool2d":
        return AvgPoolKernel(nodes, kernel, divisor), [x]
    grad = values["grad_output"]
    grad_meta = tensor_meta(grad) if isinstance(grad, torch.fx.Node) else None
    if grad_meta is None or grad_meta[1] != _F32:
        return None
    return AvgPoolBackwardKernel(nodes, kernel, divisor), [grad, x]


def _absorbable(node, kernel, inputs):
    """The fused pointwise node that alone reads the pooling backward ``node``, of the input's
    shape, when the kernel can take its program, else None."""
    if not isinstance(kernel, _PoolBackwardKernel) or len(node.users) != 1:
        return None
    user = next(iter(node.users))
    fused = user.target
    if not isinstance(fused, FusedKernel) or tuple(fused.shape) != tuple(tensor_meta(inputs[1])[0]):
        return None
    if "rand" in fused.program.split() or "idx" in fused.program.split():
        return None  # its counter would be the tiled view's
    window_inputs = len(inputs) - 1  # x is not an input of the program
    if (window_inputs + len(user.args) - 1 > _MAX_INPUTS
            or len(kernel.scalars) + len(fused.scalars) > _MAX_SCALARS):
        return None
    return user


def run(graph):
    kernels = []
    for node in list(graph.nodes):
        found = _lowered(node)
        if found is None:
            continue
        kernel, inputs = found
        root, members = node, [node]
        user = _absorbable(node, kernel, inputs)
        if user is not None:
            program_inputs = [inputs[0]] + inputs[2:]
            inputs += kernel.absorb(user, node, len(program_inputs))
            root, members = user, [user, node]
        replace(graph, kernel, inputs, root, members)
        kernels.append(kernel)
    return kernels
