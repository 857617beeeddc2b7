"""Real models on the device: forward, backward and an optimiser step equal the CPU's within
tolerance, and every op on the way runs natively (no CPU fallback)."""
import copy

import pytest
import torch

import model_zoo
import torch_mimic

TOLERANCES = {"mlp": (1e-4, 1e-5), "cnn": (1e-3, 1e-4), "transformer": (1e-3, 1e-4), "resnet18": (2e-3, 2e-4)}


def _optimizer(name, params):
    if name in ("mlp", "cnn"):
        return torch.optim.SGD(params, lr=0.05, momentum=0.9)
    return torch.optim.Adam(params, lr=1e-3)


def _assert_close(device_value, cpu_value, reference, rtol, atol, what):
    """Within tolerance of the CPU's float32 result, where the tolerance also admits the CPU's
    own float32 error against float64: deep networks (resnet18's batch norms over few values)
    are ill-conditioned, and summation order alone moves their gradients."""
    cpu_error = (cpu_value.double() - reference).abs().max().item() if cpu_value.numel() else 0.0
    torch.testing.assert_close(device_value.cpu(), cpu_value, rtol=rtol, atol=max(atol, 4 * cpu_error),
                               msg=lambda m: f"{what}: {m}")


def _train(name, model, device, x, target, steps=2):
    model = model.to(device).train()
    optimizer = _optimizer(name, model.parameters())
    for _ in range(steps):  # the second step uses the optimiser's state (momentum, Adam moments)
        output, loss = model_zoo.train_step(name, model, optimizer, x.to(device), target.to(device))
    return model, output, loss


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer", "resnet18"])
def test_training_step_matches_cpu(name, device, fallbacks):
    model, x, target = model_zoo.make(name)
    cpu, cpu_out, cpu_loss = _train(name, copy.deepcopy(model), "cpu", x, target)
    ref, ref_out, ref_loss = _train(name, copy.deepcopy(model).double(), "cpu", x.double(),
                                    target.double() if target.is_floating_point() else target)
    dev, dev_out, dev_loss = _train(name, copy.deepcopy(model), device, x, target)
    rtol, atol = TOLERANCES[name]
    _assert_close(dev_out, cpu_out, ref_out, rtol, atol, "output")
    _assert_close(dev_loss, cpu_loss, ref_loss, rtol, atol, "loss")
    for (pname, p_cpu), p_ref, p_dev in zip(cpu.named_parameters(), ref.parameters(), dev.parameters()):
        _assert_close(p_dev.grad, p_cpu.grad, p_ref.grad, rtol * 10, atol * 10, f"gradient of {pname}")
        _assert_close(p_dev, p_cpu, p_ref, rtol, atol, pname)
    for (bname, b_cpu), b_ref, b_dev in zip(cpu.named_buffers(), ref.buffers(), dev.buffers()):
        _assert_close(b_dev, b_cpu, b_ref, rtol, atol, bname)
    assert fallbacks() == {}


@pytest.mark.parametrize("name", ["mlp", "cnn", "transformer"])
def test_training_with_dropout_runs_natively(name, device, fallbacks):
    model, x, target = model_zoo.make(name, dropout=0.25)
    model = model.to(device).train()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    losses = [model_zoo.train_step(name, model, optimizer, x.to(device), target.to(device))[1].item()
              for _ in range(3)]
    assert all(torch.isfinite(torch.tensor(losses)))
    assert fallbacks() == {}


def test_foreach_optimizers_run_natively(device, fallbacks):
    """The foreach optimizers step on the device, from the same gradients as on the CPU, to the
    same parameters within the rounding of their elementwise maths: a few ulps of each
    parameter and of its update (sqrt, division and the moment updates each round once).
    Comparing whole training steps instead would compare two GEMMs' summation orders, which
    differ from CPU to CPU (AVX2 against AVX-512 kernels of OpenBLAS)."""
    eps = torch.finfo(torch.float32).eps
    model, x, target = model_zoo.make("mlp")
    for make_optimizer in (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, foreach=True),
                           lambda p: torch.optim.Adam(p, lr=1e-3, foreach=True)):
        on_device = copy.deepcopy(model).to(device)
        cpu_opt, dev_opt = make_optimizer(model.parameters()), make_optimizer(on_device.parameters())
        for step in range(2):
            cpu_opt.zero_grad()
            model_zoo.loss_of("mlp", model(x), target).backward()
            before = [p.detach().clone() for p in model.parameters()]
            for p_cpu, p_dev in zip(model.parameters(), on_device.parameters()):
                p_dev.grad = p_cpu.grad.to(device)
            cpu_opt.step()
            dev_opt.step()
            for p_cpu, p_dev, p_old in zip(model.parameters(), on_device.parameters(), before):
                bound = 8 * eps * (p_old.abs() + (p_cpu - p_old).abs())
                error = (p_dev.detach().cpu() - p_cpu.detach()).abs()
                assert torch.all(error <= bound), (step, (error - bound).max().item())
            for p_cpu, p_dev in zip(model.parameters(), on_device.parameters()):
                p_dev.data.copy_(p_cpu.data.to(device))
    assert fallbacks() == {}


def test_same_program_same_results_and_times(device):
    """Determinism: the same seeded step gives bit-identical results and simulated time."""
    runs = []
    for _ in range(2):
        torch_mimic.manual_seed(7)
        model, x, target = model_zoo.make("transformer", dropout=0.1)
        model = model.to(device)
        start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
        start.record()
        output, _ = model_zoo.train_step("transformer", model, torch.optim.SGD(model.parameters(), lr=0.1),
                                         x.to(device), target.to(device))
        end.record()
        end.synchronize()
        runs.append((output.cpu(), start.elapsed_time(end)))
    assert torch.equal(runs[0][0], runs[1][0])
    assert runs[0][1] == runs[1][1]
