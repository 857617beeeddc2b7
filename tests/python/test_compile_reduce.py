"""torch_mimic.compile's reduction, row and loss passes (_lower_reduce, _lower_rows,
_lower_loss): compiled against eager, forward and backward, with the launches they save and the
graphs they leave to eager."""
import pytest
import torch
from torch import nn
from torch.nn import functional as F

import model_zoo
import torch_mimic
from kernel_launches import launches

EPS = torch.finfo(torch.float32).eps


def _graphs():
    return torch_mimic.compile_report()[-1]["captures"][0]["graphs"]


def _kinds(graph):
    return [(k["kind"], k["nodes"]) for k in graph["kernels"]]


def _run(fn, inputs, device, compiled):
    """fn's outputs, the inputs' gradients of the outputs' sum and, eager only, the bound on
    how far another order of adding the outputs' gradients may move them: the captured backward
    adds them in an order that changes from one capture to the next. (k - 1) eps sum|g_i| for
    k outputs' contributions g_i."""
    tensors = [t.to(device).requires_grad_(t.is_floating_point()) for t in inputs]
    wanted = [t for t in tensors if t.requires_grad]
    runner = torch_mimic.compile(fn) if compiled else fn
    outputs = runner(*tensors)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    bounds = None
    if not compiled:
        bounds = [torch.zeros(t.shape) for t in wanted]
        for output in outputs:
            parts = torch.autograd.grad(output.sum(), wanted, retain_graph=True,
                                        allow_unused=True)
            for bound, part in zip(bounds, parts):
                if part is not None:
                    bound += part.abs().cpu()
        bounds = [b * (len(outputs) - 1) * EPS for b in bounds]
    grads = torch.autograd.grad(sum(o.sum() for o in outputs), wanted)
    return [o.detach().cpu() for o in outputs], [g.cpu() for g in grads], bounds


def _check_grads(eager, compiled):
    for a, b, bound in zip(eager[1], compiled[1], eager[2]):
        assert ((a - b).abs() <= bound).all()


def _sum_bound(terms, ops=1):
    """|reordered float32 sum - sum| <= n * eps * sum|terms|, plus ``ops`` roundings after."""
    return terms.numel() * EPS * terms.abs().sum().item() + ops * EPS * terms.abs().sum().item()


# --- reductions ------------------------------------------------------------------------------


def _plain_reductions(x):
    return (x.sum(1), x.sum(), x.mean(0, keepdim=True), x.mean(), x.sum([0, 2]), x.mean([-1]),
            x.sum(2).div(3.0), x.exp().mean(2).sqrt(), x.abs().sum(2).div(7).sqrt(),
            x.mean(1).mul(0.25), x.sum(0).mul(-8))


def test_sum_and_mean_forward_is_bit_identical(device):
    torch.manual_seed(0)
    x = torch.randn(6, 17, 33)
    eager = _run(_plain_reductions, [x], device, compiled=False)
    compiled = _run(_plain_reductions, [x], device, compiled=True)
    for a, b in zip(eager[0], compiled[0]):
        torch.testing.assert_close(b, a, rtol=0, atol=0, equal_nan=True)
    _check_grads(eager, compiled)
    forward = _graphs()["forward"]
    assert not any(op.startswith(("aten.sum", "aten.mean")) for op in forward["eager_nodes"])
    assert [k for k, _ in _kinds(forward)].count("reduce") == 11
    # The divisions, roots and scalings by powers of two are the reductions' epilogues.
    fused = [n for _, n in _kinds(forward)]
    assert ["aten.sum.dim_IntList", "aten.div.Tensor"] in fused
    assert ["aten.mean.dim", "aten.sqrt.default"] in fused
    assert ["aten.mean.dim", "aten.mul.Tensor"] in fused
    assert ["aten.sum.dim_IntList", "aten.mul.Tensor"] in fused


def _prologues(x, y, w):
    # w is broadcast along the rows: the map reads it with stride 0.
    return ((x * y).sum(1), (x * x).mean(), x.abs().sum(0), (y * x).sum(), (y * w).sum(0),
            ((x - y) ** 2).mean(1))


def test_prologue_maps_read_the_inputs_in_one_launch(device):
    torch.manual_seed(1)
    x, y, w = torch.randn(40, 70), torch.randn(40, 70), torch.randn(70)
    eager = _run(_prologues, [x, y, w], device, compiled=False)
    compiled = _run(_prologues, [x, y, w], device, compiled=True)
    products = (x * y, x * x, x.abs(), x * y, y * w, (x - y) ** 2)
    dims = (1, None, 0, None, 0, 1)
    for a, b, terms, dim in zip(eager[0], compiled[0], products, dims):
        # A map may tile the reduction differently: a reordered sum, per output.
        count = terms.shape[dim] if dim is not None else terms.numel()
        bound = count * EPS * (terms.abs().sum(dim) if dim is not None else terms.abs().sum())
        assert ((a - b).abs() <= bound + EPS * a.abs()).all()
    _check_grads(eager, compiled)
    forward = _graphs()["forward"]
    assert _kinds(forward) == [("reduce", ["aten.mul.Tensor", "aten.sum.dim_IntList"]),
                               ("reduce", ["aten.mul.Tensor", "aten.mean.default"]),
                               ("reduce", ["aten.abs.default", "aten.sum.dim_IntList"]),
                               ("reduce", ["aten.mul.Tensor", "aten.sum.default"]),
                               ("reduce", ["aten.mul.Tensor", "aten.sum.dim_IntList"]),
                               ("reduce", ["aten.sub.Tensor", "aten.pow.Tensor_Scalar",
                                           "aten.mean.dim"])]
    assert [k["map"] for k in forward["kernels"]] == ["mul", "square", "abs", "mul", "mul",
                                                      "sqdiff"]


def test_prologue_launch_count(device):
    x = torch.randn(64, 64).to(device)
    compiled = torch_mimic.compile(lambda a: (a * a).sum(1))
    compiled(x)
    before = launches()
    compiled(x)
    assert launches() - before == 1


def _kept_apart(x, y):
    s = x + y  # no map computes an add
    t = x * y  # read twice: materialised once
    return s.sum(0), t.sum(1), t.mean(), x.sum(1).mul(3.0), x.mean(1).div(3.0)


def test_reductions_keep_what_they_cannot_fuse(device):
    torch.manual_seed(2)
    x, y = torch.randn(9, 11), torch.randn(9, 11)
    eager = _run(_kept_apart, [x, y], device, compiled=False)
    compiled = _run(_kept_apart, [x, y], device, compiled=True)
    for a, b in zip(eager[0], compiled[0]):
        torch.testing.assert_close(b, a, rtol=0, atol=0)
    _check_grads(eager, compiled)
    kinds = _kinds(_graphs()["forward"])
    # x + y has no map; x * y is read twice; x * 3 is no division; a mean's division and one by
    # 3 would round once where eager rounds twice.
    pointwise = sorted(n for k, n in kinds if k == "pointwise")
    assert pointwise == [["aten.add.Tensor"], ["aten.div.Tensor"], ["aten.mul.Tensor"],
                         ["aten.mul.Tensor"]]
    assert [k for k, _ in kinds].count("reduce") == 5


def test_reductions_of_other_dtypes_run_eager(device):
    x = torch.arange(12).view(3, 4)
    fn = lambda a: (a.sum(1), a.float().sum(0, dtype=torch.float16))  # noqa: E731
    eager = fn(x.to(device))
    compiled = torch_mimic.compile(fn)(x.to(device))
    for a, b in zip(eager, compiled):
        assert torch.equal(a.cpu(), b.cpu())
    forward = _graphs()["forward"]
    assert forward["eager_nodes"]["aten.sum.dim_IntList"] == 2
    assert not any(k["kind"] == "reduce" for k in forward["kernels"])


# --- row kernels -----------------------------------------------------------------------------


def _rows(x, weight, bias):
    h = F.layer_norm(x, (x.shape[-1],), weight, bias, eps=1e-5)
    a = torch.softmax(h, dim=-1)
    b = torch.log_softmax(h, dim=1)  # not the last dim: merged into [G, C, N] views
    c = F.layer_norm(h, (x.shape[-2], x.shape[-1]))  # two normalized dims, no affine
    return a, b, c


def test_row_ops_forward_is_bit_identical(device):
    torch.manual_seed(3)
    inputs = [torch.randn(3, 10, 24), torch.randn(24), torch.randn(24)]
    eager = _run(_rows, inputs, device, compiled=False)
    compiled = _run(_rows, inputs, device, compiled=True)
    for a, b in zip(eager[0], compiled[0]):
        torch.testing.assert_close(b, a, rtol=0, atol=0)
    _check_grads(eager, compiled)
    graphs = _graphs()
    for graph in graphs.values():
        assert not any("softmax" in op or "layer_norm" in op for op in graph["eager_nodes"])
    backward_rows = [n for k, n in _kinds(graphs["backward"]) if k == "row"]
    assert ["aten._softmax_backward_data.default"] in backward_rows
    assert ["aten._log_softmax_backward_data.default"] in backward_rows
    assert backward_rows.count(["aten.native_layer_norm_backward.default"]) == 2


def test_transformer_layer_is_bit_identical(device):
    results = []
    for compiled in (False, True):
        model, x, _ = model_zoo.make("transformer")
        model = model.to(device)
        x = x.to(device).requires_grad_()
        out = (torch_mimic.compile(model) if compiled else model)(x)
        out.backward(torch.ones_like(out))
        results.append([out.detach().cpu(), x.grad.cpu()] +
                       [p.grad.cpu() for p in model.parameters()])
    for a, b in zip(*results):
        assert torch.equal(a, b)


def test_layer_norm_parameter_gradients_take_one_reduction(device):
    torch.manual_seed(7)
    norm = nn.LayerNorm(48).to(device)
    x = torch.randn(6, 20, 48).to(device).requires_grad_()
    grad = torch.randn(6, 20, 48).to(device)

    def backward_launches(runner):
        runner(x).backward(grad)  # the compile and the gradients' allocation
        out = runner(x)
        torch_mimic.synchronize()
        before = launches()
        out.backward(grad)
        return launches() - before, [t.grad.cpu() for t in (x, norm.weight, norm.bias)]

    eager, eager_grads = backward_launches(norm)
    for t in (x, norm.weight, norm.bias):
        t.grad = None
    compiled, grads = backward_launches(torch_mimic.compile(norm))
    # The row kernel, the reductions of the weight's and the bias's partial sums (one when
    # compiled) and the three gradients' accumulation.
    assert (eager, compiled) == (6, 5)
    for a, b in zip(eager_grads, grads):
        assert torch.equal(a, b)


def _residual_norms(a, b, r, w, bias):
    h = a + b  # read by the layer norm and the multiplication: the row kernel writes it
    wide = r + b.unsqueeze(0)  # broadcast: the add stays a kernel of its own
    return (F.layer_norm(h, (48,), w, bias), h * 2, F.layer_norm(wide, (48,)),
            F.layer_norm(a.add(b, alpha=2), (48,), w, bias))


def test_residual_add_runs_in_the_layer_norm_kernel(device):
    torch.manual_seed(8)
    inputs = [torch.randn(5, 16, 48), torch.randn(5, 16, 48), torch.randn(3, 5, 16, 48),
              torch.randn(48), torch.randn(48)]
    eager = _run(_residual_norms, inputs, device, compiled=False)
    compiled = _run(_residual_norms, inputs, device, compiled=True)
    for a, b in zip(eager[0], compiled[0]):
        assert torch.equal(a, b)
    _check_grads(eager, compiled)
    kinds = _kinds(_graphs()["forward"])
    assert ("row", ["aten.add.Tensor", "aten.native_layer_norm.default"]) in kinds
    assert kinds.count(("row", ["aten.native_layer_norm.default"])) == 2
    tensors = [t.to(device) for t in inputs]
    fn = torch_mimic.compile(lambda a, b, w, bias: F.layer_norm(a + b, (48,), w, bias))
    fn(tensors[0], tensors[1], tensors[3], tensors[4])
    before = launches()
    fn(tensors[0], tensors[1], tensors[3], tensors[4])
    assert launches() - before == 1


def _dropped_residual_norm(a, b, mask, w, bias):
    # Dropout as AOT autograd records it: the residual times its mask over the keep probability.
    return F.layer_norm(a + b * (mask / 0.9), (48,), w, bias)


def test_dropped_out_residual_runs_in_the_layer_norm_kernel(device):
    torch.manual_seed(9)
    mask = (torch.rand(5, 16, 48) > 0.1).float()
    inputs = [torch.randn(5, 16, 48), torch.randn(5, 16, 48), mask, torch.randn(48),
              torch.randn(48)]
    eager = _run(_dropped_residual_norm, inputs, device, compiled=False)
    compiled = _run(_dropped_residual_norm, inputs, device, compiled=True)
    assert torch.equal(eager[0][0], compiled[0][0])
    _check_grads(eager, compiled)
    (kernel,) = [n for k, n in _kinds(_graphs()["forward"]) if k == "row"]
    assert "aten.mul.Tensor" in kernel and "aten.native_layer_norm.default" in kernel


def test_row_ops_of_other_dtypes_run_eager(device):
    x = torch.randn(4, 8, dtype=torch.float16).to(device)
    fn = lambda a: torch.softmax(a, -1)  # noqa: E731
    assert torch.equal(torch_mimic.compile(fn)(x).cpu(), fn(x).cpu())
    assert _graphs()["forward"]["eager_nodes"] == {"aten._softmax.default": 1}


# --- losses ----------------------------------------------------------------------------------


def _loss_step(fn, x, target, device, compiled):
    """The loss, the input's gradient and the launches of one forward and one backward (after a
    first call that compiles and allocates)."""
    runner = torch_mimic.compile(fn) if compiled else fn
    x = x.to(device).requires_grad_()
    target = target.to(device)
    runner(x, target).backward()
    x.grad = None
    torch_mimic.synchronize()
    start = launches()
    loss = runner(x, target)
    middle = launches()
    loss.backward()
    return loss.detach().cpu(), x.grad.cpu(), middle - start, launches() - middle


CROSS_ENTROPY = {
    "mean": (dict(), 10, torch.tensor([1, -100, 3, 0, 9, 2, 9, 4])),
    "sum": (dict(reduction="sum"), 10, torch.tensor([1, 5, 3, 0, 9, 2, 9, 4])),
    "ignore_class_0": (dict(ignore_index=0), 10, torch.tensor([1, 5, 3, 0, 9, 0, 9, 4])),
    # 8 x 5000 elements: past _lower_loss's dense route, the gather route.
    "mean_gather": (dict(), 5000, torch.tensor([1, -100, 4999, 0, 9, 2, 9, 4])),
    "sum_gather": (dict(reduction="sum"), 5000, torch.tensor([1, 5, 3, 0, 9, 2, 9, 4999])),
}


@pytest.mark.parametrize("case", sorted(CROSS_ENTROPY))
def test_cross_entropy_matches_eager_in_fewer_launches(device, case):
    kwargs, classes, target = CROSS_ENTROPY[case]
    torch.manual_seed(4)
    x = torch.randn(8, classes) * 3
    fn = lambda a, t: F.cross_entropy(a, t, **kwargs)  # noqa: E731
    loss, grad, forward, backward = _loss_step(fn, x, target, device, compiled=True)
    eager_loss, eager_grad, eager_forward, eager_backward = _loss_step(fn, x, target, device,
                                                                       compiled=False)
    # The loss sums run as one reduction of two rows: a reordered sum, then the division.
    picked = F.log_softmax(x, 1).gather(1, target.clamp(min=0).unsqueeze(1))
    assert (loss - eager_loss).abs().item() <= _sum_bound(picked, ops=2)
    # The backward programs are eager's operations on the same values.
    assert torch.equal(grad, eager_grad)
    # Forward: log_softmax, the dense packing or the safe targets, gather and packing, the
    # reduction and the mean's division. Backward: the ones of the loss's gradient and one
    # launch for the gradients of nll_loss and log_softmax.
    mean = "sum" not in case
    assert forward == (5 if "gather" in case else 3) + mean
    assert backward == 2
    assert forward < eager_forward and backward < eager_backward
    graphs = _graphs()
    assert [n for _, n in _kinds(graphs["forward"])] == [["aten._log_softmax.default"],
                                                         ["aten.nll_loss_forward.default"]]
    assert [n for _, n in _kinds(graphs["backward"])] == [
        ["aten.nll_loss_backward.default", "aten._log_softmax_backward_data.default"]]


def test_dense_nll_loss_of_a_target_out_of_range_is_nan(device):
    # Eager's gather faults on class 12 of 10; the dense route, which gathers nothing, makes
    # the loss NaN instead of ignoring the row. (Tracing runs eager: it sees valid targets.)
    x = torch.randn(4, 10).to(device)
    compiled = torch_mimic.compile(lambda a, t: F.cross_entropy(a, t))
    assert not torch.isnan(compiled(x, torch.tensor([1, 2, 3, -100]).to(device)).cpu())
    assert torch.isnan(compiled(x, torch.tensor([1, 12, 3, -100]).to(device)).cpu())


def test_nll_loss_gradient_read_elsewhere_keeps_log_softmax_backward_apart(device):
    torch.manual_seed(6)
    x, target = torch.randn(8, 10), torch.tensor([1, -100, 3, 0, 9, 2, 9, 4])

    def fn(a, t):
        log_probabilities = F.log_softmax(a, 1)
        return F.nll_loss(log_probabilities, t) + 0.5 * log_probabilities.sum()

    loss, grad, _, backward = _loss_step(fn, x, target, device, compiled=True)
    eager_loss, eager_grad, _, eager_backward = _loss_step(fn, x, target, device, compiled=False)
    picked = F.log_softmax(x, 1).gather(1, target.clamp(min=0).unsqueeze(1))
    summed = F.log_softmax(x, 1)
    assert (loss - eager_loss).abs().item() <= _sum_bound(picked, ops=2) + _sum_bound(summed)
    assert torch.equal(grad, eager_grad)
    kinds = _kinds(_graphs()["backward"])
    assert ("loss", ["aten.nll_loss_backward.default"]) in kinds
    assert ("row", ["aten._log_softmax_backward_data.default"]) in kinds


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_loss_matches_eager(device, reduction):
    torch.manual_seed(5)
    x, target = torch.randn(7, 13), torch.randn(7, 13)
    if reduction == "none":
        fn = lambda a, t: F.mse_loss(a, t, reduction="none").sum()  # noqa: E731
    else:
        fn = lambda a, t: F.mse_loss(a, t, reduction=reduction)  # noqa: E731
    loss, grad, forward, _ = _loss_step(fn, x, target, device, compiled=True)
    eager_loss, eager_grad, eager_forward, _ = _loss_step(fn, x, target, device, compiled=False)
    squares = (x - target) ** 2
    assert (loss - eager_loss).abs().item() <= _sum_bound(squares, ops=1)
    assert torch.equal(grad, eager_grad)
    if reduction != "none":
        assert forward == 1 < eager_forward
    graphs = _graphs()
    assert "aten.mse_loss.default" not in graphs["forward"]["eager_nodes"]
    assert "aten.mse_loss_backward.default" not in graphs["backward"]["eager_nodes"]


REFUSED = {
    "class weights": (lambda a, t: F.cross_entropy(a, t, weight=torch.arange(1.0, 11.0,
                                                                             device=a.device)),
                      torch.randn(8, 10), torch.tensor([1, 2, 3, 0, 9, 2, 9, 4])),
    "no reduction": (lambda a, t: F.cross_entropy(a, t, reduction="none").sum(),
                     torch.randn(8, 10), torch.tensor([1, 2, 3, 0, 9, 2, 9, 4])),
    "unbatched": (lambda a, t: F.cross_entropy(a, t), torch.randn(10), torch.tensor(3)),
    "float16 mse": (lambda a, t: F.mse_loss(a, t), torch.randn(4, 5).half(),
                    torch.randn(4, 5).half()),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_losses_the_pass_does_not_take_run_eager(device, case):
    fn, x, target = REFUSED[case]
    loss, grad, _, _ = _loss_step(fn, x, target, device, compiled=True)
    eager_loss, eager_grad, _, _ = _loss_step(fn, x, target, device, compiled=False)
    assert torch.equal(loss, eager_loss)
    assert torch.equal(grad, eager_grad)
    eager = _graphs()["forward"]["eager_nodes"]
    assert any(op.startswith(("aten.nll_loss_forward", "aten.mse_loss")) for op in eager)


def test_model_with_its_loss_compiled_launches_fewer_kernels(device):
    """The mlp with cross_entropy inside the compiled function: the loss is lowered too."""
    model, x, target = model_zoo.make("mlp")
    model, x, target = model.to(device), x.to(device), target.to(device)

    def step(runner):
        runner(x, target).backward()
        torch_mimic.synchronize()
        before = launches()
        loss = runner(x, target)
        loss.backward()
        return loss.item(), launches() - before

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, a, t):
            return nn.functional.cross_entropy(self.model(a), t)

    eager_loss, eager = step(WithLoss())
    model.zero_grad()
    loss, compiled = step(torch_mimic.compile(WithLoss()))
    assert loss == pytest.approx(eager_loss, rel=64 * EPS)
    # The loss alone saves 3 launches forward and 5 backward (see the cross_entropy test).
    assert compiled < eager
    for graph in _graphs().values():
        assert not any("nll_loss" in op or "softmax" in op for op in graph["eager_nodes"])
