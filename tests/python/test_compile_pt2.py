"""The PyTorch 2 shim (torch_mimic/_compile_pt2.py): torch.compile(backend="mimic") through
torch._dynamo's aot_autograd with torch_mimic.compile's forward and backward compilers.

This machine has PyTorch 1.13: the shim must refuse to import, saying why. Its compilers are
still exercised here on real graphs and the device, through 1.13's aot_module_simplified (what
Dynamo 2.0's aot_autograd calls) standing in for the torch._dynamo modules that 1.13 lacks."""
import importlib
import sys
import types

import pytest
import torch

import torch_mimic

TORCH_2 = int(torch.__version__.split(".")[0]) >= 2
SHIM = "torch_mimic._compile_pt2"


def model_on(device):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU(),
                               torch.nn.Linear(32, 4)).to(device)


def eager_run(device):
    """The model, its input, and eager's output and parameter gradients (then cleared)."""
    model = model_on(device)
    x = torch.randn(8, 16, device=device)
    expected = model(x)
    expected.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    return model, x, expected, grads


@pytest.mark.skipif(TORCH_2, reason="PyTorch >= 2 imports the shim; this checks 1.13's refusal")
def test_on_pytorch_1_13_the_shim_says_it_needs_pytorch_2():
    sys.modules.pop(SHIM, None)
    with pytest.raises(ImportError) as error:
        importlib.import_module(SHIM)
    message = str(error.value)
    assert "needs PyTorch >= 2.0" in message and torch.__version__ in message
    assert "torch_mimic.compile(model)" in message
    assert SHIM not in sys.modules
    assert not hasattr(torch, "compile")  # and torch_mimic imported without it


@pytest.mark.skipif(not TORCH_2, reason=f"PyTorch {torch.__version__} has no torch.compile or "
                                        "torch._dynamo (the mimic backend needs PyTorch >= 2.0)")
def test_torch_compile_with_the_mimic_backend_matches_eager(device):
    model, x, expected, grads = eager_run(device)
    compiled = torch.compile(model, backend="mimic")
    out = compiled(x)
    out.sum().backward()
    assert torch.equal(out.cpu(), expected.cpu())
    for param, grad in zip(model.parameters(), grads):
        assert torch.equal(param.grad.cpu(), grad.cpu())
    entries = [e for e in torch_mimic.compile_report() if e["name"].startswith("dynamo graph")]
    assert entries and entries[-1]["captures"][0]["graphs"]["forward"]["kernels"]


class _Dynamo:
    """torch._dynamo's two entry points the shim uses, on PyTorch 1.13's functorch: aot_autograd
    returns a backend that hands the graph module to aot_module_simplified with the compilers,
    as Dynamo 2.0's does; register_backend keeps what it is given."""

    def __init__(self):
        from functorch.compile import aot_module_simplified

        self.registered = {}
        common = types.ModuleType("torch._dynamo.backends.common")
        common.aot_autograd = lambda **options: (
            lambda graph_module, example_inputs: aot_module_simplified(graph_module, **options))
        registry = types.ModuleType("torch._dynamo.backends.registry")
        registry.register_backend = self.register
        backends = types.ModuleType("torch._dynamo.backends")
        backends.common, backends.registry = common, registry
        dynamo = types.ModuleType("torch._dynamo")
        dynamo.backends = backends
        self.modules = {"torch._dynamo": dynamo, "torch._dynamo.backends": backends,
                        "torch._dynamo.backends.common": common,
                        "torch._dynamo.backends.registry": registry}

    def register(self, compiler_fn, name):
        self.registered[name] = compiler_fn


@pytest.fixture
def shim_on_stand_in_dynamo(monkeypatch):
    if TORCH_2:
        pytest.skip("PyTorch >= 2 has the real torch._dynamo (the test above uses it)")
    dynamo = _Dynamo()
    for name, module in dynamo.modules.items():
        monkeypatch.setitem(sys.modules, name, module)
    monkeypatch.setattr(torch, "__version__", "2.0.0")
    try:
        yield importlib.import_module(SHIM), dynamo
    finally:
        sys.modules.pop(SHIM, None)
        if hasattr(torch_mimic, "_compile_pt2"):
            delattr(torch_mimic, "_compile_pt2")


def traced(model):
    """A graph module returning a tuple, as Dynamo gives its backend."""

    class Tupled(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, x):
            return (self.model(x),)

    return torch.fx.symbolic_trace(Tupled())


def test_the_backend_lowers_forward_and_backward_to_fused_kernels(shim_on_stand_in_dynamo,
                                                                   device):
    shim, dynamo = shim_on_stand_in_dynamo
    assert shim.BACKEND in dynamo.registered
    model, x, expected, grads = eager_run(device)
    before = len(torch_mimic.compile_report())
    compiled = dynamo.registered[shim.BACKEND](traced(model), [x])
    (out,) = compiled(x)
    out.sum().backward()
    # GELU and its backward are fused pointwise programs of the same float32 steps: equal bits.
    assert torch.equal(out.cpu(), expected.cpu())
    for param, grad in zip(model.parameters(), grads):
        assert torch.equal(param.grad.cpu(), grad.cpu())
    (entry,) = torch_mimic.compile_report()[before:]
    assert entry["name"].startswith("dynamo graph") and entry["mode"] == "default"
    graphs = entry["captures"][0]["graphs"]
    assert any(k["nodes"] == ["aten.gelu.default"] for k in graphs["forward"]["kernels"])
    assert any("aten.gelu_backward.default" in k["nodes"] for k in graphs["backward"]["kernels"])


def test_no_fusion_mode_and_a_bad_mode(shim_on_stand_in_dynamo, device):
    shim, _ = shim_on_stand_in_dynamo
    model = model_on(device)
    x = torch.randn(8, 16, device=device)
    (out,) = shim.backend("no-fusion")(traced(model), [x])(x)
    assert torch.equal(out.cpu(), model(x).cpu())
    entry = torch_mimic.compile_report()[-1]
    assert entry["mode"] == "no-fusion"
    assert entry["captures"][0]["graphs"]["forward"]["kernels"] == []
    with pytest.raises(ValueError, match="mode must be one of"):
        shim.backend("fast")
