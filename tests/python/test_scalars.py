"""Scalars reach the device as c10::Scalar does: integers exact (int64 beyond 2^53 too), floats
as doubles rounded once to the compute type, checked against PyTorch's CPU device."""
import pytest
import torch

import torch_mimic

DEV = torch_mimic.DEVICE_TYPE
BIG = 2**53 + 1  # the first integer a double cannot hold


@pytest.mark.parametrize("op", [
    lambda x: x + BIG,
    lambda x: x - BIG,
    lambda x: torch.add(x, x, alpha=BIG),
    lambda x: x * (2**40 + 3),
    lambda x: torch.full_like(x, BIG) + x,
    lambda x: torch.clamp(x, min=-BIG, max=BIG - 4),
    lambda x: torch.where(x > 2, x, BIG),
])
def test_int64_scalars_are_exact(op):
    x = torch.arange(-3, 5, dtype=torch.int64)
    assert torch.equal(op(x.to(DEV)).cpu(), op(x))


def test_float_and_bool_scalars():
    x = torch.linspace(-2, 2, 9)
    for op in (lambda t: t * 0.1 + 1e-3, lambda t: torch.add(t, t, alpha=-1.5),
               lambda t: t.masked_fill(t > 0, True)):
        assert torch.equal(op(x.to(DEV)).cpu(), op(x))
    ints = torch.arange(6, dtype=torch.int32)
    assert torch.equal((ints.to(DEV) + True).cpu(), ints + True)
