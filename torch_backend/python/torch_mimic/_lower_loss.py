"""The loss pass: mse_loss and nll_loss (cross_entropy is _log_softmax then nll_loss) with their
backward, as they appear when the loss is compiled with the model, in the fewest launches the
primitives allow (eager counts in brackets):

- mse_loss, mean or sum: one reduction of the squared differences (map sqdiff) divided by the
  count: 1 launch [3]. Eager multiplies the sum by 1/count; the division here rounds once, which
  is within one float32 rounding of it; the sum may be tiled otherwise (a reordered sum).
  reduction='none' is the squared error as one fused kernel [1].
- mse_loss_backward: one fused kernel with eager's program [1].
- nll_loss_forward, 2-D float32 input, no class weights, mean or sum, by one of two routes
  that end in one reduction of two rows, the loss sum and total_weight (mean adds the
  division):
    dense, for N x C up to _DENSE_ELEMENTS: one elementwise launch over [2, N, C] writes -x at
    each kept target's class and 1 beside it (0 elsewhere): 3 launches [8], sum 2 [7]. A
    target that is neither ignore_index nor a class makes the loss NaN (eager's gather faults).
    gather, beyond: the targets made safe to gather (ignored ones -> class 0), the gather, and
    one launch packing the negated picked values (0 where ignored) and the kept flags into
    [2, N]: 5 launches [8], sum 4 [7]; a bad target faults in the gather as in eager.
  Both sum other tiles than eager's two reductions (adding zeros is exact), so they agree
  within the bound of a reordered float32 sum.
- nll_loss_backward, same cases: one elementwise launch over [N, C] that writes -grad (divided by
  total_weight for mean) where the class is the kept target and 0 elsewhere [6]. When its only
  reader is _log_softmax_backward_data (cross_entropy), the same launch computes that backward
  too, dy - exp(y) sum(dy), with each row's sum of dy known without reading it (its one value,
  or 0): one launch for the pair [7], with the row kernel's float32 operations in its order.

Class indices and targets are compared in float32, exact below 2^24: inputs with more classes,
or an ignore_index beyond it, run eager; so do class weights, reduction='none' for nll_loss,
1-D (unbatched) and spatial inputs, and any dtype other than float32 input and int64 target.
"""
import torch

from ._compile_graph import Kernel, aten_name, bound_arguments, replace, tensor_meta
from ._lib import launch
from ._lower_pointwise import FusedKernel
from ._lower_reduce import reduce_maps

ORDER = 35  # before the row pass: nll_loss_backward absorbs log_softmax's backward

_F32 = torch.float32
_I64 = torch.int64
_NONE, _MEAN, _SUM = 0, 1, 2  # at::Reduction
_EXACT = 2 ** 24  # integers float32 holds exactly up to here
# nll_loss_forward's dense route up to this many input elements (N x C), the gather route
# beyond: on the default preset the two cost the same simulated time near 60K elements
# (16.3 us each at 256 x 200; 256 x 300: gather 16.3, dense 18.8; 256 x 10: 16.3 against 11.3).
_DENSE_ELEMENTS = 32768
_SQUARED_ERROR = "x0 x1 sub x0 x1 sub mul"


class _PerDevice:
    """A constant tensor made once per device (class indices, the packing's row selector)."""

    def __init__(self, make):
        self._make = make
        self._tensors = {}

    def get(self, device):
        tensor = self._tensors.get(device)
        if tensor is None:
            tensor = self._tensors[device] = self._make().to(device)
        return tensor


class MseLossKernel(Kernel):
    """mse_loss with mean or sum: one reduction of the squared differences."""

    kind = "loss"

    def __init__(self, nodes, shape, mean):
        super().__init__(nodes)
        self.shape = torch.Size(shape)
        count = self.shape.numel()
        self.divisor = float(count) if mean else 1.0

    def __call__(self, x, target):
        rank = len(self.shape)
        out = torch.empty([1] * rank, dtype=_F32, device=x.device)
        torch.ops.mimic.reduce(out, x, list(range(rank)), "sum", "sqdiff", target,
                               self.divisor, False)
        return out.view(())

    def describe(self):
        return dict(super().describe(), shape=(), program=f"{_SQUARED_ERROR} -> sum")


class NllLossKernel(Kernel):
    """nll_loss_forward: (output, total_weight) from the [N, C] log-probabilities and targets,
    by one of two routes (see the module's description): dense for small N x C, else gather."""

    kind = "loss"
    _selector = _PerDevice(lambda: torch.tensor([True, False]).view(2, 1, 1))
    # Gather route, over [2, N]: row 0 -picked where kept, else 0; row 1 the kept flag.
    _PACK = "x0 x2 s0 ne x1 neg 0 where x2 s0 ne 1 0 where where"
    # Dense route, over [2, N, C]: row 0 -x at each kept target's class, NaN on every class of
    # a row whose target is neither ignored nor a class, else 0; row 1 1 at each kept target.
    _HIT = "x2 s0 ne x2 x3 eq and"
    _BAD = "x2 s0 ne x2 0 lt x2 s1 ge or and"
    _DENSE = f"x0 {_HIT} x1 neg {_BAD} s2 0 where where {_HIT} 1 0 where where"

    def __init__(self, nodes, shape, mean, ignore_index):
        super().__init__(nodes)
        self.rows, self.classes = shape
        self.mean = mean
        self.ignore = ignore_index
        self.dense = self.rows * self.classes <= _DENSE_ELEMENTS
        classes = self.classes
        self._classes = _PerDevice(lambda: torch.arange(classes).view(1, 1, classes))

    def _sums(self, x, target):
        """[2] float32: the loss sum and total_weight."""
        device, rows = x.device, self.rows
        sums = torch.empty((2, 1, 1), dtype=_F32, device=device)
        if rows == 0:
            return sums.zero_().view(2)
        selector = self._selector.get(device)
        if self.dense:
            packed = torch.empty((2, rows, self.classes), dtype=_F32, device=device)
            launch(packed, [selector, x.unsqueeze(0), target.view(1, rows, 1),
                            self._classes.get(device)], self._DENSE, _F32,
                   [self.ignore, self.classes, float("nan")])
            torch.ops.mimic.reduce(sums, packed, [1, 2], "sum", "", None, 1.0, False)
            return sums.view(2)
        safe = launch(torch.empty((rows, 1), dtype=_I64, device=device), [target.view(rows, 1)],
                      "x0 s0 ne x0 0 where", _I64, [self.ignore])
        picked = torch.empty((rows, 1), dtype=_F32, device=device)
        torch.ops.mimic.gather(picked, x, 1, safe)
        packed = torch.empty((2, 1, rows), dtype=_F32, device=device)
        launch(packed, [selector, picked.view(1, 1, rows), target.view(1, 1, rows)], self._PACK,
               _F32, [self.ignore])
        torch.ops.mimic.reduce(sums, packed, [2], "sum", "", None, 1.0, False)
        return sums.view(2)

    def __call__(self, x, target):
        sums = self._sums(x, target)
        total_weight = sums[1]
        if not self.mean:
            return sums[0], total_weight
        output = launch(torch.empty((), dtype=_F32, device=x.device), [sums[0], total_weight],
                        "x0 x1 div", _F32)
        return output, total_weight

    def describe(self):
        program = self._DENSE if self.dense else f"gather; {self._PACK}"
        return dict(super().describe(), shape=(), program=f"{program} -> sum")


class NllLossBackwardKernel(Kernel):
    """nll_loss_backward: the [N, C] gradient in one elementwise launch; with ``log_softmax``
    also the backward of the log_softmax before it, from its output y (x4)."""

    kind = "loss"

    def __init__(self, nodes, shape, reduction, ignore_index, log_softmax):
        super().__init__(nodes)
        self.shape = torch.Size(shape)
        # v = the gradient of each kept row's picked log-probability.
        v = "x2 x3 div neg" if reduction == _MEAN else "x2 neg"
        grad = f"x0 s0 ne x0 x1 eq and {v} 0 where"
        if log_softmax:
            # dy - exp(y) sum(dy): a row's sum of dy is its one value v, or 0 where ignored.
            grad += f" x4 exp x0 s0 ne {v} 0 where mul sub"
        self.program = grad
        self.log_softmax = log_softmax
        self.ignore = ignore_index
        classes = self.shape[1]
        self._classes = _PerDevice(lambda: torch.arange(classes).view(1, classes))

    def __call__(self, grad_output, target, total_weight, output=None):
        device = grad_output.device
        out = torch.empty(self.shape, dtype=_F32, device=device)
        inputs = [target.view(-1, 1), self._classes.get(device), grad_output, total_weight]
        if output is not None:
            inputs.append(output)
        return launch(out, inputs, self.program, _F32, [self.ignore])

    def describe(self):
        return dict(super().describe(), shape=tuple(self.shape), program=self.program)


def _meta_is(node, dtype, rank=None):
    meta = tensor_meta(node) if isinstance(node, torch.fx.Node) else None
    return meta is not None and meta[1] == dtype and (rank is None or len(meta[0]) == rank)


def _mse_loss(node, values):
    x, target, reduction = values["self"], values["target"], values["reduction"]
    if not (_meta_is(x, _F32) and _meta_is(target, _F32)):
        return None
    shape = tensor_meta(x)[0]
    if tensor_meta(target)[0] != shape:
        return None  # eager broadcasts, with its warning
    nodes = [str(node.target)]
    if reduction == _NONE:
        return FusedKernel(_SQUARED_ERROR, shape, [], nodes), [x, target]
    if reduction not in (_MEAN, _SUM) or "sqdiff" not in reduce_maps():
        return None
    return MseLossKernel(nodes, shape, reduction == _MEAN), [x, target]


def _mse_loss_backward(node, values):
    grad, x, target = values["grad_output"], values["self"], values["target"]
    if not all(_meta_is(v, _F32) for v in (grad, x, target)):
        return None
    shape = tensor_meta(x)[0]
    if tensor_meta(target)[0] != shape or tensor_meta(node)[0] != shape:
        return None
    count = shape.numel()
    norm = 2.0 / count if values["reduction"] == _MEAN and count else 2.0
    kernel = FusedKernel("x0 x1 sub s0 mul x2 mul", shape, [norm], [str(node.target)])
    return kernel, [x, target, grad]


def _nll_case(values):
    """The [N, C] shape when this nll_loss call is one the pass takes, or None."""
    x, target = values["self"], values["target"]
    if not (_meta_is(x, _F32, 2) and _meta_is(target, _I64, 1)) or values["weight"] is not None:
        return None
    shape = tensor_meta(x)[0]
    ignore = values["ignore_index"]
    if (values["reduction"] not in (_MEAN, _SUM) or tensor_meta(target)[0][0] != shape[0]
            or shape[1] > _EXACT or not -_EXACT <= ignore <= _EXACT):
        return None
    return shape


def _nll_loss_forward(node, values):
    shape = _nll_case(values)
    if shape is None:
        return None
    kernel = NllLossKernel([str(node.target)], shape, values["reduction"] == _MEAN,
                           values["ignore_index"])
    return kernel, [values["self"], values["target"]]


def _log_softmax_backward_of(node):
    """The _log_softmax_backward_data node that is the only reader of nll_loss_backward
    ``node`` as its gradient, with y its float32 [N, C] output along dim 1, or None."""
    if len(node.users) != 1:
        return None
    user = next(iter(node.users))
    if aten_name(user) != "_log_softmax_backward_data":
        return None
    values = bound_arguments(user)
    if (values is None or values["grad_output"] is not node or values["dim"] not in (1, -1)
            or values["input_dtype"] != _F32 or not _meta_is(values["output"], _F32, 2)
            or tensor_meta(values["output"])[0] != tensor_meta(node)[0]):
        return None
    return user, values["output"]


def _nll_loss_backward(node, values):
    shape = _nll_case(values)
    grad, total_weight = values["grad_output"], values["total_weight"]
    if shape is None or not (_meta_is(grad, _F32, 0) and _meta_is(total_weight, _F32, 0)):
        return None
    inputs = [grad, values["target"], total_weight]
    log_softmax = _log_softmax_backward_of(node)
    nodes = [str(node.target)]
    if log_softmax is not None:
        nodes.append(str(log_softmax[0].target))
        inputs.append(log_softmax[1])
    kernel = NllLossBackwardKernel(nodes, shape, values["reduction"], values["ignore_index"],
                                   log_softmax is not None)
    return kernel, inputs, log_softmax[0] if log_softmax is not None else None


_OPS = {"mse_loss": _mse_loss, "mse_loss_backward": _mse_loss_backward,
        "nll_loss_forward": _nll_loss_forward, "nll_loss_backward": _nll_loss_backward}


def run(graph):
    kernels = []
    for node in list(graph.nodes):
        lower = _OPS.get(aten_name(node))
        values = bound_arguments(node) if lower is not None else None
        found = lower(node, values) if values is not None else None
        if found is None:
            continue
        kernel, inputs, *absorbed = found
        user = absorbed[0] if absorbed else None
        if user is None:
            replace(graph, kernel, inputs, node, [node])
        else:  # the consumer's node stands for both; it leaves the graph first
            replace(graph, kernel, inputs, user, [user, node])
        kernels.append(kernel)
    return kernels
