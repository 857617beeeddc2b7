"""torch_mimic.compile on the model zoo: ten training steps of each model compiled against the
same steps eager, BatchNorm's running statistics included, with no CPU fallback and no guard key
running eager; and the buffer handling of compiled modules on small cases."""
import re

import pytest
import torch
from torch import nn
from torch.utils._python_dispatch import TorchDispatchMode

import model_zoo
import torch_mimic
from torch_mimic import _lower_multi

STEPS = 10
# The bound for any reordering a lowering may do, per step and quantity.
RELATIVE = 1e-5
EPS = torch.finfo(torch.float32).eps
# Models with dropout train with some, so that the comparison covers the masks.
DROPOUT = {"mlp": 0.1, "cnn": 0.1, "transformer": 0.1}


class _DropoutMasks(TorchDispatchMode):
    """Records the masks dropout draws (bernoulli_ into a tensor of the input's shape), eager
    or in a compiled graph, where the ops run as the graph's nodes or a fused kernel draws the
    mask in its program and writes it as an output of its own (_lower_multi)."""

    _FUSED_MASK = re.compile(r"rand s\d+ lt 1 0 where")

    def __init__(self):
        super().__init__()
        self.masks = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func._schema.name == "aten::bernoulli_":
            self.masks.append(out.detach().cpu())
        return out

    # The mimic primitives do not dispatch to Python modes: masks drawn in fused kernels are
    # recorded by the kernels' calls.
    def __enter__(self):
        plain = self._plain = _lower_multi.MultiKernel.__call__

        def recording(kernel, *inputs):
            outs = plain(kernel, *inputs)
            self.masks += [o.detach().cpu() for o, program in zip(outs, kernel.programs)
                           if self._FUSED_MASK.fullmatch(program)]
            return outs

        _lower_multi.MultiKernel.__call__ = recording
        return super().__enter__()

    def __exit__(self, *exc):
        _lower_multi.MultiKernel.__call__ = self._plain
        return super().__exit__(*exc)


def _state(model):
    """Parameters and buffers by name, on the CPU."""
    state = {name: p.detach().cpu().clone() for name, p in model.named_parameters()}
    state.update({name: b.cpu().clone() for name, b in model.named_buffers()})
    return state


def _train(name, device, compiled):
    """Losses of each step, the first step's output, its dropout masks and mimic's RNG state
    after it, and the model state after each step."""
    kwargs = {"dropout": DROPOUT[name]} if name in DROPOUT else {}
    model, x, target = model_zoo.make(name, **kwargs)
    model, x, target = model.to(device).train(), x.to(device), target.to(device)
    optimizer = model_zoo.optimizer(name, model.parameters())
    runner = torch_mimic.compile(model) if compiled else model
    torch_mimic.manual_seed(11)
    losses, states = [], [_state(model)]
    first = masks = None
    for _ in range(STEPS):
        if first is None:
            with _DropoutMasks() as masks:
                output, loss = model_zoo.train_step(name, runner, optimizer, x, target)
            first = (output.detach().cpu(), masks.masks, torch_mimic.get_rng_state())
        else:
            output, loss = model_zoo.train_step(name, runner, optimizer, x, target)
        losses.append(loss.item())
        states.append(_state(model))
    return losses, first, states


def _path(states, name):
    """How far each element of one tensor moved over the steps, summed step by step."""
    return sum((after[name].double() - before[name].double()).abs()
               for before, after in zip(states, states[1:]))


# resnet18 trains all ten steps on the zoo's 4x3x96x96 batch (the slow one: about 20 s for both runs
# on this machine), the smallest input on which its five stride-2 stages keep a 3x3 map.
@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer", "resnet18", "gpt"])
def test_training_steps_match_eager(device, fallbacks, name):
    eager_losses, (eager_output, eager_masks, eager_rng), eager_states = _train(
        name, device, compiled=False)
    torch_mimic.reset_fallback_report()
    losses, (output, masks, rng), states = _train(name, device, compiled=True)
    assert fallbacks() == {}

    for step, (ours, theirs) in enumerate(zip(losses, eager_losses)):
        assert ours == pytest.approx(theirs, rel=RELATIVE), f"loss of step {step + 1}"
    # The first step's dropout masks: the compiled step drew its masks after the tracing's
    # (undone), so its last ones are those its graph used; they are eager's, and mimic's
    # generator ends the step where eager's did.
    assert bool(eager_masks) == (name in DROPOUT)
    if eager_masks:
        assert len(masks) > len(eager_masks)
        for ours, theirs in zip(masks[-len(eager_masks):], eager_masks):
            assert torch.equal(ours, theirs)
    assert torch.equal(rng, eager_rng)
    torch.testing.assert_close(output, eager_output, rtol=RELATIVE,
                               atol=RELATIVE * eager_output.abs().max().item())

    # Each step's update agrees with eager's within RELATIVE (as the losses do), so after the
    # steps a value differs by at most RELATIVE times the path it moved along, doubled because
    # at most two such quantities meet in one update (AdamW's first moment over the root of its
    # second, a running variance's squares); the final float32 rounding adds one ulp per step.
    final, eager_final = states[-1], eager_states[-1]
    for key, theirs in eager_final.items():
        ours = final[key]
        if not theirs.is_floating_point():
            assert torch.equal(ours, theirs), key  # num_batches_tracked
            continue
        bound = 2 * RELATIVE * _path(eager_states, key) + STEPS * EPS * theirs.double().abs()
        excess = (ours.double() - theirs.double()).abs() - bound
        assert excess.max().item() <= 0, f"{key} differs from eager beyond the bound"

    report = torch_mimic.compile_report()[-1]
    assert report["eager_calls"] == 0
    assert len(report["captures"]) == 1  # one guard key for all the steps
    assert report["captures"][0]["eager_reason"] is None


def _batch_norm_pair(device):
    torch.manual_seed(0)
    eager = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5)).to(device)
    model = nn.Sequential(nn.Linear(6, 5), nn.BatchNorm1d(5)).to(device)
    model.load_state_dict(eager.state_dict())
    return eager, model


def test_tracing_leaves_batch_norm_buffers_as_one_eager_step(device):
    eager, model = _batch_norm_pair(device)
    x = torch.randn(8, 6).to(device)
    eager(x).sum().backward()
    torch_mimic.compile(model)(x).sum().backward()
    # One update of the running statistics, not the tracing's as well.
    assert model[1].num_batches_tracked.item() == 1
    for (key, ours), theirs in zip(model.named_buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu()), key
    forward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]
    # The buffers are updated in place, as eager does: no clone of them, and the count's
    # increment is eager's add_ rather than an add copied back.
    assert "aten.clone.default" not in forward["eager_nodes"]
    assert forward["eager_nodes"].get("aten.add_.Tensor") == 1
    assert "aten.add.Tensor" not in forward["eager_nodes"]


@pytest.mark.parametrize("without_grad", [torch.no_grad, torch.inference_mode])
def test_batch_norm_updates_without_grad(device, without_grad):
    eager, model = _batch_norm_pair(device)
    compiled = torch_mimic.compile(model)
    with without_grad():
        for scale in (1.0, 2.0, 3.0):
            x = (torch.randn(8, 6) * scale).to(device)
            assert torch.equal(compiled(x).cpu(), eager(x).cpu())
    for (key, ours), theirs in zip(model.named_buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu()), key
    assert model[1].num_batches_tracked.item() == 3


class _Counting(nn.Module):
    """A forward that writes its own buffers with in-place ops: a count and a running mean."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(4, 4)
        self.register_buffer("calls", torch.zeros((), dtype=torch.int64))
        self.register_buffer("mean", torch.zeros(4))

    def forward(self, x):
        y = self.linear(x)
        self.calls.add_(1)
        self.mean.mul_(0.5).add_(y.detach().mean(0), alpha=0.5)
        return y * self.mean


def test_buffers_written_in_place_are_written_back(device):
    torch.manual_seed(0)
    eager, model = _Counting().to(device), _Counting().to(device)
    model.load_state_dict(eager.state_dict())
    compiled = torch_mimic.compile(model)
    x = torch.randn(3, 4).to(device)
    for _ in range(3):
        eager(x).sum().backward()
        compiled(x).sum().backward()
    assert model.calls.item() == 3
    assert torch.equal(model.mean.cpu(), eager.mean.cpu())
    assert torch.equal(model.linear.weight.grad.cpu(), eager.linear.weight.grad.cpu())
    assert torch_mimic.compile_report()[-1]["captures"][0]["eager_reason"] is None


class _SharedNorm(nn.Module):
    """Two BatchNorms sharing their running statistics: one tensor is a buffer of both (shared
    on the device: Module.to gives each module copies of its own)."""

    def __init__(self, device):
        super().__init__()
        self.first = nn.BatchNorm1d(3).to(device)
        self.second = nn.BatchNorm1d(3).to(device)
        self.second.running_mean = self.first.running_mean
        self.second.running_var = self.first.running_var

    def forward(self, x):
        return self.second(self.first(x))


def test_buffers_shared_by_two_modules_compile(device):
    torch.manual_seed(0)
    eager, model = _SharedNorm(device), _SharedNorm(device)
    compiled = torch_mimic.compile(model)
    x = torch.randn(5, 3).to(device)
    with pytest.warns(UserWarning, match="tied weights"):  # functional_call ties the names
        for _ in range(2):
            assert torch.equal(compiled(x).detach().cpu(), eager(x).detach().cpu())
    for (key, ours), theirs in zip(model.named_buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu()), key
    assert torch_mimic.compile_report()[-1]["captures"][0]["eager_reason"] is None


class _ScaledByStatistics(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.BatchNorm1d(3)

    def forward(self, x, scale):
        return self.norm(x) * scale


def test_buffer_passed_as_an_argument_runs_eager_with_the_reason(device):
    torch.manual_seed(0)
    eager, model = _ScaledByStatistics().to(device), _ScaledByStatistics().to(device)
    compiled = torch_mimic.compile(model)
    x = torch.randn(5, 3).to(device)
    for _ in range(2):
        # Eager multiplies by the running variance as the batch norm just updated it.
        ours = compiled(x, model.norm.running_var).detach().cpu()
        assert torch.equal(ours, eager(x, eager.norm.running_var).detach().cpu())
    for (key, ours), theirs in zip(model.named_buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu()), key
    (capture,) = torch_mimic.compile_report()[-1]["captures"]
    assert "also an argument" in capture["eager_reason"]


def test_cumulative_batch_norm_runs_eager_with_the_reason(device):
    """momentum=None averages by num_batches_tracked's value, read while tracing: eager, and the
    tracing (on clones) leaves the statistics to eager's updates alone."""
    torch.manual_seed(0)
    eager = nn.BatchNorm1d(3, momentum=None).to(device)
    model = nn.BatchNorm1d(3, momentum=None).to(device)
    compiled = torch_mimic.compile(model)
    for _ in range(3):
        x = torch.randn(6, 3).to(device)
        assert torch.equal(compiled(x).detach().cpu(), eager(x).detach().cpu())
    for (key, ours), theirs in zip(model.named_buffers(), eager.buffers()):
        assert torch.equal(ours.cpu(), theirs.cpu()), key
    (capture,) = torch_mimic.compile_report()[-1]["captures"]
    assert "tracing tensor" in capture["eager_reason"]
