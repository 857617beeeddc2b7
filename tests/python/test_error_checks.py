"""Errors the device raises as PyTorch's CPU kernels raise them: the same type and message."""
import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def _both(call):
    """The exception type and first message line of call(device) for the CPU and the device."""
    outcomes = []
    for device in ("cpu", DEVICE):
        with pytest.raises(Exception) as caught:
            call(device)
        outcomes.append((caught.type, str(caught.value).splitlines()[0]))
    return outcomes


@pytest.mark.parametrize("call", [
    lambda d: (lambda x: torch.cat([x[:2], x[2:]], out=x))(torch.ones(4, device=d)),
    lambda d: torch.cat([torch.ones(2, device=d)] * 2, out=torch.ones(1, device=d).expand(4)),
], ids=["input-overlaps-out", "out-overlaps-itself"])
def test_cat_refuses_overlapping_memory(call):
    cpu, device = _both(call)
    assert device == cpu and "unsupported operation" in cpu[1]


@pytest.mark.parametrize("dims", [(0, 0), (1, -1), (2,), (-3,)])
def test_flip_checks_its_dims(dims):
    cpu, device = _both(lambda d: torch.ones(2, 3, device=d).flip(dims))
    assert device == cpu


def test_flip_of_negative_dims():
    x = torch.arange(6.0).reshape(2, 3)
    assert torch.equal(x.to(DEVICE).flip((-1, 0)).cpu(), x.flip((-1, 0)))


def test_foreach_list_lengths():
    cpu, device = _both(lambda d: torch._foreach_add([torch.ones(2, device=d)] * 2,
                                                     [torch.ones(2, device=d)] * 3))
    assert device == cpu


@pytest.mark.parametrize("op", [
    lambda b: b.sum(), lambda b: b.sum(0, dtype=torch.int64), lambda b: b.max(),
    lambda b: b & torch.ones_like(b), lambda b: ~b, lambda b: b.logical_not(),
    lambda b: b.to(torch.int32), lambda b: b.float(), lambda b: b == True,  # noqa: E712
    lambda b: torch.where(b, 1, 0), lambda b: b.any(), lambda b: b * 3,
], ids=["sum", "sum-int64", "max", "and", "invert", "logical_not", "to-int32", "float", "eq",
        "where", "any", "mul"])
def test_bool_bytes_other_than_0_and_1_read_as_true(op):
    bytes_ = torch.tensor([0, 1, 2, 255], dtype=torch.uint8)
    cpu = op(bytes_.view(torch.bool))
    device = op(bytes_.to(DEVICE).view(torch.bool))
    assert device.dtype == cpu.dtype and torch.equal(device.cpu(), cpu)


@pytest.mark.parametrize("call", [
    lambda d: torch.add(torch.ones(4, dtype=torch.int32, device=d),
                        torch.ones(4, dtype=torch.int32, device=d), alpha=1.1),
    lambda d: torch.add(torch.ones(4, dtype=torch.bool, device=d),
                        torch.ones(4, dtype=torch.bool, device=d), alpha=1.1),
    lambda d: torch.add(torch.ones(4, device=d), 1, alpha=True),
], ids=["float-alpha-int", "float-alpha-bool", "bool-alpha-float"])
def test_add_and_sub_check_alpha(call):
    cpu, device = _both(call)
    assert device == cpu and "alpha" in cpu[1]


def test_a_bool_alpha_with_bool_tensors():
    x = torch.tensor([True, False])
    assert torch.equal(torch.add(x.to(DEVICE), x.to(DEVICE), alpha=True).cpu(),
                       torch.add(x, x, alpha=True))


@pytest.mark.parametrize("call", [
    lambda d: torch.ones(2, dtype=torch.bool, device=d) - torch.ones(2, dtype=torch.bool, device=d),
    lambda d: torch.ones(2, device=d).sub_(torch.ones(2, dtype=torch.bool, device=d)),
    lambda d: torch.sub(torch.ones(2, dtype=torch.bool, device=d), True),
], ids=["two-bools", "one-bool", "bool-scalar"])
def test_sub_refuses_bools(call):
    cpu, device = _both(call)
    assert device == cpu and "Subtraction" in cpu[1]


@pytest.mark.parametrize("call", [
    lambda d: torch.lerp(torch.ones(2, dtype=torch.float64, device=d), torch.ones(2, device=d), 0.5),
    lambda d: torch.lerp(torch.ones(2, device=d), torch.ones(2, device=d),
                         torch.ones(2, dtype=torch.float64, device=d)),
    lambda d: torch.ones(2, device=d).lerp_(torch.ones(2, dtype=torch.half, device=d), 0.5),
], ids=["end", "weight", "in-place"])
def test_lerp_refuses_other_dtypes(call):
    cpu, device = _both(call)
    assert device == cpu and "expected dtype" in cpu[1]
