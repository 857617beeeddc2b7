"""A crash of a CPU kernel inside the fallback is an error naming the op, and the process goes on;
a crash anywhere else still ends the process with its signal."""
import subprocess
import sys

import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def test_a_cpu_kernel_crash_in_the_fallback_is_an_error_naming_the_op():
    """1.13's batch_norm_cpu divides by the channel count: zero channels raise SIGFPE. float64
    takes the fallback."""
    empty_channels = torch.empty(1, 0, 8, dtype=torch.float64, device=DEVICE)
    with pytest.raises(RuntimeError, match=r"aten::native_batch_norm crashed on the CPU through "
                                           r"the fallback \(Floating point exception\)"):
        torch.ops.aten.native_batch_norm(empty_channels, None, None, None, None, True, 0.0, 1e-5)
    # The thread's state is whole again: grad mode, dispatch, the device and the fallback work.
    assert torch.is_grad_enabled()
    x = torch.arange(6.0, dtype=torch.float64, device=DEVICE, requires_grad=True)
    (x * 2).sum().backward()
    assert x.grad.cpu().tolist() == [2.0] * 6
    assert (torch.ones(3, device=DEVICE) + 1).cpu().tolist() == [2.0] * 3


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_group_norm_of_an_empty_batch(dtype):
    module = torch.nn.GroupNorm(2, 4).to(DEVICE, dtype)
    x = torch.randn(0, 4, 2, 2, dtype=dtype, device=DEVICE, requires_grad=True)
    out = module(x)
    out.backward(torch.rand_like(out))
    assert out.shape == x.shape
    assert module.weight.grad.cpu().tolist() == [0.0] * 4


def test_group_norm_matches_the_cpu():
    torch.manual_seed(0)
    cpu = torch.nn.GroupNorm(3, 6)
    torch.nn.init.normal_(cpu.weight)
    torch.nn.init.normal_(cpu.bias)
    device = torch.nn.GroupNorm(3, 6).to(DEVICE)
    device.load_state_dict(cpu.state_dict())
    x = torch.randn(4, 6, 5, 3)
    expected = cpu(x)
    # Mean and variance of m = 2 * 15 elements, then a scale and a shift: about m + 4 roundings,
    # relative to the largest output.
    bound = 4 * (2 * 15 + 4) * 2.0 ** -24 * float(expected.abs().max())
    torch.testing.assert_close(device(x.to(DEVICE)).cpu(), expected, atol=bound, rtol=0)


def test_a_crash_outside_the_fallback_still_ends_the_process():
    script = ("import ctypes, torch, torch_mimic\n"
              "torch.ones(2, dtype=torch.float64, device='privateuseone').cumsum(0)\n"
              "ctypes.string_at(0)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert result.returncode == -11, result.stderr.decode()[-2000:]


def test_fallback_results_stay_on_the_device_when_a_wrapped_number_comes_first():
    """1 - x is sub(tensor(1), x): the CPU fallback (float64) must not return it on the CPU."""
    x = torch.rand(3, dtype=torch.float64, device=DEVICE)
    result = 1 - x
    assert result.device == x.device
    torch.testing.assert_close(result.cpu(), 1 - x.cpu())


def test_a_factory_on_the_fallback_returns_on_the_device_it_names():
    result = torch.triu_indices(3, 3, device=DEVICE)
    assert result.device.type == DEVICE
    assert torch.equal(result.cpu(), torch.triu_indices(3, 3))
