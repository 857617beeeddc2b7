"""Pointwise results take the CPU's layout (TensorIterator's rule): a channels_last or permuted
input gives the output its order of dims. Strides and values compared with the CPU."""
import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def _cl(t):
    return t.contiguous(memory_format=torch.channels_last)


def _cl3d(t):
    return t.contiguous(memory_format=torch.channels_last_3d)


CASES = {
    "channels_last + scalar": lambda a, b, c: _cl(a) + 3,
    "channels_last * contiguous": lambda a, b, c: _cl(a) * b,
    "contiguous * channels_last": lambda a, b, c: a * _cl(b),
    "channels_last + per-channel": lambda a, b, c: _cl(a) + c,
    "per-channel + channels_last": lambda a, b, c: c + _cl(a),
    "permuted unary": lambda a, b, c: torch.exp(a.permute(0, 2, 3, 1)),
    "transposed comparison": lambda a, b, c: a.transpose(1, 3) < b.transpose(1, 3),
    "channels_last_3d": lambda a, b, c: _cl3d(a.unsqueeze(2)) - 1,
    "strided slice": lambda a, b, c: a[:, :, ::2] * 2,
    "contiguous": lambda a, b, c: a + b,
    "out= resized to the permuted layout": lambda a, b, c: torch.add(
        a.permute(2, 0, 3, 1), b.permute(2, 0, 3, 1), out=torch.empty(0, device=a.device)),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_strides_and_values_as_on_the_cpu(case):
    generator = torch.Generator().manual_seed(0)
    a, b = (torch.randn(2, 3, 4, 5, generator=generator) for _ in range(2))
    c = torch.randn(1, 3, 1, 1, generator=generator)
    expected = CASES[case](a, b, c)
    result = CASES[case](a.to(DEVICE), b.to(DEVICE), c.to(DEVICE))
    assert result.shape == expected.shape and result.stride() == expected.stride()
    # One float32 operation each side, on the same values: equal, or one rounding apart (exp).
    torch.testing.assert_close(result.cpu(), expected, rtol=2 ** -23, atol=0)
