"""Advanced indexing with indices on another device: ATen allows only indices on the CPU or on
the indexed tensor's device. A CPU tensor indexed by mimic indices reaches mimic's kernel (the
indices carry its dispatch key), which must refuse it with ATen's error, as it does for indices
on the meta device."""
import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def _aten_error(x, key):
    with pytest.raises(RuntimeError) as error:
        x[key]
    return str(error.value)


@pytest.mark.parametrize("mixed", [False, True], ids=["device indices", "cpu and device indices"])
def test_a_cpu_tensor_refuses_device_indices_with_atens_error(mixed):
    x = torch.randn(3, 4, 4, 4, 3)
    index = torch.tensor([0, 2, 1])

    def key(device):
        first = index if mixed else index.to(device)
        return (slice(None), first, None, index.to(device), 0)

    assert _aten_error(x, key(DEVICE)) == _aten_error(x, key("meta"))


def test_a_device_tensor_takes_cpu_and_device_indices():
    x = torch.randn(3, 4, 4, 4, 3)
    index = torch.tensor([0, 2, 1])
    on_device = x.to(DEVICE)[:, index, None, index.to(DEVICE), 0]
    assert torch.equal(on_device.cpu(), x[:, index, None, index, 0])
