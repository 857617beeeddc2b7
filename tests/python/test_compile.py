"""torch_mimic.compile: AOT-captured forward and backward graphs with fused pointwise kernels,
against eager on the same device."""
import warnings

import pytest
import torch
from torch import nn

import model_zoo
import torch_mimic
from kernel_launches import launches
from torch_mimic import _compile, _compile_lower


def _train(name, device, compiled, steps=3, **kwargs):
    model, x, target = model_zoo.make(name, **kwargs)
    model, x, target = model.to(device), x.to(device), target.to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    runner = torch_mimic.compile(model) if compiled else model
    losses = []
    for _ in range(steps):
        _, loss = model_zoo.train_step(name, runner, optimizer, x, target)
        losses.append(loss.item())
    return losses, [p.detach().cpu() for p in model.parameters()]


@pytest.mark.parametrize("name", ["mlp", "transformer"])
def test_training_matches_eager(device, name):
    eager_losses, eager_params = _train(name, device, compiled=False)
    losses, params = _train(name, device, compiled=True)
    # Fused programs round every op to float32 as the eager kernels do, and the other nodes are
    # the eager ops; 1e-5 is the bound for any reordering a lowering may do.
    assert losses == pytest.approx(eager_losses, rel=1e-5)
    for eager, compiled in zip(eager_params, params):
        torch.testing.assert_close(compiled, eager, rtol=1e-5, atol=1e-6)


def _pointwise(x, y):
    return nn.functional.gelu(x * y + 1.5).sub(y, alpha=0.25).relu() * torch.sigmoid(x)


def test_float32_pointwise_graph_is_bit_identical(device):
    torch.manual_seed(1)
    x, y, grad = (torch.randn(16, 33).to(device) for _ in range(3))
    x_eager, y_eager = x.clone().requires_grad_(), y.clone().requires_grad_()
    _pointwise(x_eager, y_eager).backward(grad)

    compiled = torch_mimic.compile(_pointwise)
    x.requires_grad_()
    y.requires_grad_()
    out = compiled(x, y)
    out.backward(grad)
    assert torch.equal(out.cpu(), _pointwise(x_eager, y_eager).detach().cpu())
    assert torch.equal(x.grad.cpu(), x_eager.grad.cpu())
    assert torch.equal(y.grad.cpu(), y_eager.grad.cpu())
    forward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]
    assert len(forward["kernels"]) == 1
    assert sum(forward["eager_nodes"].values()) == 0


def test_shape_change_recompiles(device):
    compiled = torch_mimic.compile(lambda a: torch.tanh(a) * 2 + 1)
    for rows in (4, 6, 4):
        a = torch.randn(rows, 8)
        assert torch.equal(compiled(a.to(device)).cpu(), (torch.tanh(a.to(device)) * 2 + 1).cpu())
    report = torch_mimic.compile_report()[-1]
    assert len(report["guards"]) == 2
    assert report["recompiles"] == 1


def test_recompile_limit_runs_eager_with_one_warning(device, monkeypatch):
    monkeypatch.setattr(_compile, "RECOMPILE_LIMIT", 2)
    compiled = torch_mimic.compile(lambda a: a.exp() - 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for rows in (1, 2, 3, 4, 5):
            a = torch.randn(rows, 3).to(device)
            assert torch.equal(compiled(a).cpu(), (a.exp() - 1).cpu())
    ours = [w for w in caught if "torch_mimic.compile" in str(w.message)]
    assert len(ours) == 1
    assert "run eager" in str(ours[0].message)
    report = torch_mimic.compile_report()[-1]
    assert len(report["guards"]) == 2
    assert report["eager_calls"] == 3


def test_first_step_dropout_masks_equal_eager(device):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.Dropout(0.5)).to(device)
    x = torch.randn(32, 64).to(device)
    torch_mimic.manual_seed(7)
    eager = model(x)
    eager_state = torch_mimic.get_rng_state()
    torch_mimic.manual_seed(7)
    compiled = torch_mimic.compile(model)(x)
    assert torch.equal((compiled == 0).cpu(), (eager == 0).cpu())
    assert torch.equal(compiled.detach().cpu(), eager.detach().cpu())
    # Tracing drew numbers too; the generator ends where eager's did.
    assert torch.equal(torch_mimic.get_rng_state(), eager_state)


class _QuickGeluBlock(nn.Module):
    """A residual block whose activation is a pointwise chain (CLIP's quick GELU)."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(64, 64)

    def forward(self, x):
        h = self.linear(x)
        return x + 0.5 * (h * torch.sigmoid(1.702 * h))


def _step_launches(model, x):
    model(x).sum().backward()  # the compile and the gradients' allocation
    before = launches()
    model(x).sum().backward()
    return launches() - before


def test_fused_step_launches_fewer_kernels(device):
    torch.manual_seed(0)
    block = _QuickGeluBlock().to(device)
    x = torch.randn(32, 64).to(device)
    eager = _step_launches(block, x)
    compiled = _step_launches(torch_mimic.compile(block), x)
    assert compiled < eager


def test_no_fusion_mode_runs_every_node_eagerly(device):
    compiled = torch_mimic.compile(lambda a: torch.tanh(a) * 2 + 1, mode="no-fusion")
    a = torch.randn(5, 7).to(device)
    assert torch.equal(compiled(a).cpu(), (torch.tanh(a) * 2 + 1).cpu())
    forward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]
    assert forward["kernels"] == []
    assert forward["eager_nodes"] == {"aten.tanh.default": 1, "aten.mul.Tensor": 1,
                                      "aten.add.Tensor": 1}


def test_report_names_kernels_fallbacks_and_times(device, capsys):
    model, x, target = model_zoo.make("mlp")
    compiled = torch_mimic.compile(model.to(device), mode="debug")
    nn.functional.cross_entropy(compiled(x.to(device)), target.to(device)).backward()
    printed = capsys.readouterr().out
    report = torch_mimic.compile_report()[-1]
    assert report["mode"] == "debug"
    assert report["partitioner"] in ("min_cut_rematerialization", "default")
    (capture,) = report["captures"]
    assert capture["first_call_seconds"] > 0
    assert set(capture["graphs"]) == {"forward", "backward"}
    forward = capture["graphs"]["forward"]
    assert [k["nodes"] for k in forward["kernels"]] == [["aten.addmm.default", "aten.relu.default"],
                                                        ["aten.gelu.default"]]
    assert forward["eager_nodes"]["aten.addmm.default"] == 2
    assert forward["fused_nodes"] + sum(forward["eager_nodes"].values()) == forward["nodes"]
    for graph in capture["graphs"].values():
        for kernel in graph["kernels"]:
            assert kernel["program"] in printed


def test_dynamic_shapes_are_refused():
    with pytest.raises(NotImplementedError, match="dynamic"):
        torch_mimic.compile(lambda a: a, dynamic=True)


def test_item_runs_eager_with_the_reason(device):
    compiled = torch_mimic.compile(lambda a: a * a.sum().item())
    for scale in (1.0, 2.0):
        a = torch.full((3,), scale).to(device)
        assert torch.equal(compiled(a).cpu(), (a * a.sum().item()).cpu())
    (capture,) = torch_mimic.compile_report()[-1]["captures"]
    assert "tracing tensor" in capture["eager_reason"]


def test_data_dependent_shapes_run_eager_with_the_reason(device):
    compiled = torch_mimic.compile(lambda a: torch.exp(a[a > 0]) + 1)
    for values in ([1.0, 2.0, 3.0], [1.0, -2.0, 3.0]):
        a = torch.tensor(values).to(device)
        assert torch.equal(compiled(a).cpu(), (torch.exp(a[a > 0]) + 1).cpu())
    (capture,) = torch_mimic.compile_report()[-1]["captures"]
    assert "data-dependent" in capture["eager_reason"]


_SHAPES = [(4, 5, 6), (5, 6), (6,), (4, 1, 6), (1, 5, 1)]
_UNARY = [torch.tanh, torch.sigmoid, torch.relu, torch.neg, torch.abs, nn.functional.gelu,
          lambda v: torch.clamp(v, -0.5, 0.75), lambda v: torch.exp(v.clamp(max=4.0)),
          lambda v: v * 0.5 + 2]
_BINARY = [torch.add, torch.sub, torch.mul, torch.maximum, torch.minimum,
           lambda a, b: torch.add(a, b, alpha=-1.5), lambda a, b: a / (b.abs() + 1)]


def _random_dag(rng, inputs):
    """A function of ``inputs`` tensors: random unary and binary pointwise ops over earlier
    values (inputs broadcast), returning the last value and one earlier value used twice."""
    recipe = []
    for step in range(rng.randint(6, 16)):
        values = inputs + step
        if rng.random() < 0.4:
            recipe.append((rng.randrange(len(_UNARY)), rng.randrange(values)))
        else:
            recipe.append((rng.randrange(len(_BINARY)), rng.randrange(values),
                           rng.randrange(values)))
    shared = rng.randrange(inputs, inputs + len(recipe))

    def fn(*tensors):
        values = list(tensors)
        for op, *operands in recipe:
            table = _UNARY if len(operands) == 1 else _BINARY
            values.append(table[op](*(values[i] for i in operands)))
        return values[-1] * 2 + values[shared], values[shared]

    return fn


@pytest.mark.parametrize("seed", range(8))
def test_random_pointwise_dags_match_eager(device, seed):
    import random

    rng = random.Random(seed)
    count = rng.randint(3, 10)  # above 8 inputs a tree must split
    torch.manual_seed(seed)
    cpu = [torch.randn(_SHAPES[rng.randrange(len(_SHAPES))]) for _ in range(count)]
    fn = _random_dag(rng, count)
    eager_inputs = [t.to(device).requires_grad_() for t in cpu]
    eager = fn(*eager_inputs)
    inputs = [t.to(device).requires_grad_() for t in cpu]
    compiled = torch_mimic.compile(fn)(*inputs)
    for ours, theirs in zip(compiled, eager):
        assert torch.equal(ours.detach().cpu(), theirs.detach().cpu())
    grads = [torch.randn(out.shape).to(device) for out in eager]
    torch.autograd.backward(eager, grads)
    torch.autograd.backward(compiled, grads)
    for ours, theirs in zip(inputs, eager_inputs):
        if theirs.grad is None:
            assert ours.grad is None
        else:
            assert torch.equal(ours.grad.cpu(), theirs.grad.cpu())


def test_trees_over_eight_inputs_split(device):
    def weighted_sum(*tensors):
        total = tensors[0]
        for index, t in enumerate(tensors[1:]):
            total = total + t * (index + 2)
        return total

    cpu = [torch.randn(7, 9) for _ in range(11)]
    tensors = [t.to(device) for t in cpu]
    assert torch.equal(torch_mimic.compile(weighted_sum)(*tensors).cpu(),
                       weighted_sum(*tensors).cpu())
    kernels = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]["kernels"]
    assert len(kernels) == 2
    for kernel in kernels:
        inputs = {token for token in kernel["program"].split() if token.startswith("x")}
        assert len(inputs) <= 8


def test_where_and_masked_fill_fuse_with_their_bool_operands(device):
    def fn(a, b):
        return torch.where(a > b, a * 2, b.sigmoid()).masked_fill(b < 0, 0.25) + 1

    a, b = torch.randn(6, 5).to(device), torch.randn(6, 5).to(device)
    assert torch.equal(torch_mimic.compile(fn)(a, b).cpu(), fn(a, b).cpu())
    forward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]
    assert len(forward["kernels"]) == 1
    assert forward["eager_nodes"] == {"aten.gt.Tensor": 1, "aten.lt.Scalar": 1}


def test_buffer_updates_compile(device):
    torch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).to(device)
    model = nn.Sequential(nn.Linear(4, 4), nn.BatchNorm1d(4)).to(device)
    model.load_state_dict(eager.state_dict())
    compiled = torch_mimic.compile(model)
    x = torch.randn(8, 4).to(device)
    for _ in range(2):
        eager(x).sum().backward()
        compiled(x).sum().backward()
    for ours, theirs in zip(model.buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu())
    (capture,) = torch_mimic.compile_report()[-1]["captures"]
    assert capture["eager_reason"] is None
    # In eval mode nothing is updated: a guard key of its own.
    model.eval()
    eager.eval()
    assert torch.equal(compiled(x).detach().cpu(), eager(x).detach().cpu())
    report = torch_mimic.compile_report()[-1]
    assert report["captures"][1]["eager_reason"] is None
    assert report["recompiles"] == 1


def test_kernel_writes_in_place_into_an_input_that_dies_there(device, monkeypatch):
    # Without the GEMM pass, which would take the tree as the mm's epilogue.
    monkeypatch.setattr(_compile_lower, "_passes",
                        tuple(p for p in _compile_lower.passes() if p[1] != "gemm"))

    def fn(a, b, c):
        return torch.tanh(a @ b) * c + 1

    a, b, c = (torch.randn(8, 8).to(device) for _ in range(3))
    compiled = torch_mimic.compile(fn)
    for _ in range(2):
        assert torch.equal(compiled(a, b, c).cpu(), fn(a, b, c).cpu())
    (kernel,) = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]["kernels"]
    assert kernel["nodes"] == ["aten.tanh.default", "aten.mul.Tensor", "aten.add.Tensor"]
    # The mm result dies in the kernel; c, an input of the graph, is never written.
    assert kernel["in_place_input"] == 0
    assert kernel["program"].startswith("x0 tanh")


def test_environment_variable_prints_programs(device, monkeypatch, capsys):
    monkeypatch.setenv("MIMIC_COMPILE_DEBUG", "1")
    torch_mimic.compile(lambda a: torch.tanh(a) * 3)(torch.randn(4).to(device))
    printed = capsys.readouterr().out
    assert "mimic_pointwise_0 [4]: aten.tanh.default aten.mul.Tensor" in printed
    assert "x0 tanh s0 mul" in printed
