"""index_reduce with int32 and int64 indices, compared with the CPU: its mean without the
destination's values zeroes the indexed rows with index_fill, which takes int64 indices only."""
import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64], ids=str)
@pytest.mark.parametrize("reduce", ["mean", "prod", "amax", "amin"])
@pytest.mark.parametrize("include_self", [False, True])
@pytest.mark.parametrize("dim", [0, 1])
def test_index_reduce_as_on_the_cpu(index_dtype, reduce, include_self, dim):
    generator = torch.Generator().manual_seed(0)
    dest = torch.randint(-9, 9, (4, 5), generator=generator).float()
    source_shape = [4, 5]
    source_shape[dim] = 6
    source = torch.randint(-9, 9, source_shape, generator=generator).float()
    index = torch.tensor([0, 3, 3, 1, 0, 3], dtype=index_dtype)[:source_shape[dim]] % dest.size(dim)
    expected = dest.clone().index_reduce_(dim, index, source, reduce, include_self=include_self)
    on_device = dest.to(DEVICE).index_reduce_(dim, index.to(DEVICE), source.to(DEVICE), reduce,
                                              include_self=include_self)
    # Small integers: every sum, product and quotient here is exact in float32 up to the one
    # rounding of the mean's division, which both devices do once.
    assert torch.equal(on_device.cpu(), expected)
