"""PyTorch's argument checks ahead of the pointwise kernels, the complex64 ones too. In-place
and out= pointwise ops refuse a written tensor whose elements share memory, or that
an input partly overlaps, as PyTorch's TensorIterator does on the CPU; the ops PyTorch lets
write overlapping memory (fill, zero, masked_fill, threshold: one value in any order) still do."""
import pytest
import torch
import torch.nn.functional as F

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def _expanded(d, dtype=torch.float32):
    return torch.arange(6.0).to(dtype).reshape(1, 6).to(d).expand(6, 6)


def _outcome(call, device):
    try:
        return call(device).cpu()
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error).splitlines()[0]


REFUSED = {
    "add_": lambda d: _expanded(d).add_(1),
    "mul_-tensor": lambda d: _expanded(d).mul_(torch.ones(6, 6, device=d)),
    "abs_": lambda d: _expanded(d).abs_(),
    "relu_": lambda d: _expanded(d).relu_(),
    "clamp_": lambda d: _expanded(d).clamp_(0, 1),
    "elu_-bfloat16": lambda d: F.elu_(_expanded(d, torch.bfloat16)),
    "leaky_relu_": lambda d: F.leaky_relu_(_expanded(d)),
    "silu-inplace": lambda d: F.silu(_expanded(d), inplace=True),
    "sigmoid_": lambda d: _expanded(d).sigmoid_(),
    "eq_": lambda d: _expanded(d).eq_(1),
    "add-out": lambda d: torch.add(torch.ones(6, 6, device=d), 1, out=_expanded(d)),
    "lerp_": lambda d: _expanded(d).lerp_(torch.ones(6, 6, device=d), 0.5),
    "int-add_": lambda d: _expanded(d, torch.int32).add_(1),
    "complex-add_": lambda d: _expanded(d, torch.complex64).add_(1),
    "hardswish-inplace": lambda d: F.hardswish(_expanded(d), inplace=True),
    "softplus-out": lambda d: (lambda x: F.softplus(x, out=x))(_expanded(d)),
    "softshrink-out": lambda d: (lambda x: F.softshrink(x, out=x))(_expanded(d)),
    "mish-inplace": lambda d: F.mish(_expanded(d), inplace=True),
    "hardswish-float64": lambda d: F.hardswish(_expanded(d, torch.float64), inplace=True),
    "softplus-out-float64": lambda d: (lambda x: F.softplus(x, out=x))(_expanded(d, torch.float64)),
    "elu_-float64": lambda d: F.elu_(_expanded(d, torch.float64)),
}


@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_written_tensor_overlapping_itself_is_refused(call):
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    assert cpu[0] is RuntimeError and "unsupported operation" in cpu[1]
    assert device == cpu


PARTLY = {
    "neg": lambda x: torch.neg(x[1:], out=x[:5]),
    "add": lambda x: torch.add(x[1:], 1, out=x[:5]),
    "softplus": lambda x: torch._C._nn.softplus(x[1:], out=x[:5]),
}


@pytest.mark.parametrize("op", PARTLY.values(), ids=PARTLY.keys())
def test_input_partly_overlapping_the_output_is_refused(op):
    def call(d):
        return op(torch.arange(6.0, device=d))
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    assert cpu[0] is RuntimeError and "unsupported operation" in cpu[1]
    assert device == cpu


ALLOWED = {
    "fill_": lambda d: _expanded(d).fill_(2),
    "zero_": lambda d: _expanded(d).zero_(),
    "threshold_": lambda d: F.threshold_(_expanded(d), 2.5, 0.5),
    "masked_fill_": lambda d: _expanded(d).masked_fill_(torch.ones(6, 6, dtype=torch.bool,
                                                                   device=d), 3.0),
    "same-tensor-in-and-out": lambda d: (lambda x: torch.add(x, x, out=x))(torch.ones(3, device=d)),
    "disjoint-views-softplus": lambda d: (lambda x: (torch._C._nn.softplus(x[3:], out=x[:3]), x)[1])(
        torch.arange(6.0, device=d)),
    "disjoint-views": lambda d: (lambda x: (torch.neg(x[3:], out=x[:3]), x)[1])(
        torch.arange(6.0, device=d)),
}


@pytest.mark.filterwarnings("ignore:Use of masked_fill_ on expanded tensors is deprecated")
@pytest.mark.parametrize("call", ALLOWED.values(), ids=ALLOWED.keys())
def test_ops_pytorch_lets_write_overlapping_memory(call):
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    assert isinstance(cpu, torch.Tensor)
    assert isinstance(device, torch.Tensor) and torch.equal(device, cpu), (device, cpu)


SUB_OF_BOOL = {
    "sub-scalar": lambda d: torch.sub(torch.ones(3, dtype=torch.complex64, device=d), True),
    "sub_": lambda d: torch.ones(3, dtype=torch.complex64, device=d).sub_(True),
    "foreach_sub": lambda d: torch._foreach_sub([torch.ones(3, dtype=torch.complex64, device=d)],
                                                True)[0],
}


@pytest.mark.parametrize("call", SUB_OF_BOOL.values(), ids=SUB_OF_BOOL.keys())
def test_complex_minus_bool_is_refused_before_the_complex_kernel(call):
    """The same argument checks run ahead of the complex64 kernels as ahead of the others."""
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    assert cpu[0] is RuntimeError and "Subtraction" in cpu[1]
    assert device == cpu


@pytest.mark.parametrize("slope", [-2.0, 0.5], ids=["negative-slope", "positive-slope"])
def test_backward_of_in_place_leaky_relu_as_on_the_cpu(slope):
    """leaky_relu_'s input is gone after it ran: with a negative slope, the backward cannot tell
    the branch from the result's sign and PyTorch refuses it."""
    def call(d):
        a = torch.tensor([-1.0, 1.0], device=d, requires_grad=True)
        F.leaky_relu_(a.clone(), slope).backward(torch.ones(2, device=d))
        return a.grad
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    if slope < 0:
        assert cpu[0] is RuntimeError and "call out-of-place version" in cpu[1]
        assert device == cpu
    else:
        assert torch.equal(device, cpu)
