"""complex64 tensors on the device: view_as_real / view_as_complex and the views built on them
(real, imag) alias the device memory, as on the CPU."""
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def test_view_as_real_and_back_alias_the_device_memory():
    x = torch.randn(3, 4, dtype=torch.complex64)
    y = x.to(DEVICE)
    pairs = torch.view_as_real(y)
    assert pairs.shape == (3, 4, 2) and pairs.dtype == torch.float32
    assert pairs.data_ptr() == y.data_ptr()
    assert torch.equal(pairs.cpu(), torch.view_as_real(x))
    back = torch.view_as_complex(pairs)
    assert back.data_ptr() == y.data_ptr() and torch.equal(back.cpu(), x)


def test_real_and_imag_are_views_that_write_through():
    y = torch.zeros(5, dtype=torch.complex64, device=DEVICE)
    y.real.fill_(1.0)
    y.imag[1:3] = 2.0
    assert y.cpu().tolist() == [1 + 0j, 1 + 2j, 1 + 2j, 1 + 0j, 1 + 0j]
    assert torch.equal(y.conj().cpu(), y.cpu().conj())
