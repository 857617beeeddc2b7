"""Storages of mimic tensors (torch_mimic/_storage_compat.py, torch.ops.mimic.storage_bytes):
what 1.13's storage bindings refuse for a PrivateUse1 storage, compared with the same calls on
CPU tensors."""
import copy

import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64]


def _pair(dtype, shape=(3, 5)):
    cpu = torch.arange(-7, 8, dtype=torch.int64).reshape(shape).to(dtype)
    return cpu, cpu.to(DEVICE)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_typed_storage_reads_as_on_the_cpu(dtype):
    cpu, dev = _pair(dtype)
    assert dev.storage().device.type == DEVICE
    assert dev.storage().tolist() == cpu.storage().tolist()
    assert dev.storage()[-1] == cpu.storage()[-1]
    assert list(dev.storage().untyped()) == list(cpu.storage().untyped())


def test_untyped_storage_slices_and_byte_writes():
    cpu, dev = _pair(torch.int32)
    assert list(dev.storage().untyped()[4:12]) == list(cpu.storage().untyped()[4:12])
    for t in (cpu, dev):
        t.storage().untyped()[0] = 255
        t.storage()[1] = -3
        t.storage().untyped()[8:12] = 0
    assert torch.equal(dev.cpu(), cpu)


def test_typed_storage_fill_and_cast():
    cpu, dev = _pair(torch.float32)
    assert dev.storage().double().tolist() == cpu.storage().double().tolist()
    assert dev.storage().double().device.type == DEVICE
    cpu.storage().fill_(2.5)
    dev.storage().fill_(2.5)
    assert torch.equal(dev.cpu(), cpu)


def test_set_to_a_storage_with_offset_sizes_and_strides():
    cpu, dev = _pair(torch.float32)
    for t in (cpu, dev):
        t.result = torch.empty(0, device=t.device).set_(t.storage(), 2, (2, 3), (5, 1))
        t.whole = torch.empty(0, device=t.device).set_(t.storage())
        t.scalar = torch.empty(0, device=t.device).set_(source=t.storage(), storage_offset=4,
                                                        size=())
    assert torch.equal(dev.result.cpu(), cpu.result)
    assert dev.result.storage_offset() == 2 and dev.result.stride() == (5, 1)
    assert torch.equal(dev.whole.cpu(), cpu.whole) and dev.scalar.item() == cpu.scalar.item()
    dev.result.zero_()  # the storage is shared, not copied
    cpu.result.zero_()
    assert torch.equal(dev.cpu(), cpu)


def test_set_refuses_a_storage_of_another_dtype_with_pytorchs_message():
    messages = []
    for device in ("cpu", DEVICE):
        other = torch.zeros(3, dtype=torch.float64, device=device).storage()
        with pytest.raises(RuntimeError) as error:
            torch.empty(0, device=device).set_(other)
        messages.append(str(error.value))
    assert messages[0] == messages[1]


def test_storage_clone_cpu_and_copy():
    cpu, dev = _pair(torch.int16)
    clone = dev.storage().clone()
    assert clone.device.type == DEVICE and clone.data_ptr() != dev.storage().data_ptr()
    assert clone.tolist() == cpu.storage().tolist()
    back = dev.storage().cpu()
    assert back.device.type == "cpu" and back.tolist() == cpu.storage().tolist()
    target = torch.zeros(15, dtype=torch.int16, device=DEVICE)
    target.storage().copy_(cpu.storage())
    assert torch.equal(target.cpu(), cpu.flatten())
    with pytest.raises(RuntimeError, match="size does not match"):
        target.storage().untyped().copy_(torch.UntypedStorage(3))


def test_untyped_storage_constructed_on_the_device():
    assert torch.UntypedStorage(device=DEVICE).nbytes() == 0
    sized = torch.UntypedStorage(6, device=DEVICE)
    assert sized.device.type == DEVICE and sized.nbytes() == 6
    assert list(torch.UntypedStorage([1, 2, 250], device=DEVICE)) == [1, 2, 250]
    typed = torch.TypedStorage(4, dtype=torch.float32, device=DEVICE)
    assert typed.device.type == DEVICE and typed.size() == 4
    wrapped = torch.UntypedStorage([1, 300])  # the CPU keeps the low byte
    assert list(torch.UntypedStorage([1, 300], device=DEVICE)) == list(wrapped)


def test_deepcopy_keeps_storage_sharing_and_attributes():
    a = torch.randn(5, 5, device=DEVICE)
    b = torch.randn(5, 5, device=DEVICE)
    c = a.view(25)
    a.foo = 3
    q = [a, [a.storage(), b.storage()], b, c]
    w = copy.deepcopy(q)
    assert torch.equal(w[0].cpu(), a.cpu()) and w[0].data_ptr() != a.data_ptr()
    assert w[1][0].tolist() == a.storage().tolist() and w[0].foo == 3
    w[0].add_(1)  # the copy of a, its storage and its view c share one new storage
    assert torch.equal(w[3].cpu(), c.cpu() + 1)
    assert w[1][0].tolist() == (a + 1).storage().tolist()
    assert torch.equal(a.cpu().flatten(), c.cpu())  # the originals are untouched


def test_deepcopy_of_a_conjugate_view():
    t = torch.tensor([1 + 2j, 3 - 1j], dtype=torch.complex64, device=DEVICE).conj()
    copied = copy.deepcopy(t)
    assert torch.equal(copied.cpu(), copy.deepcopy(t.cpu()))


def test_storage_bytes_refuses_a_cpu_storage():
    with pytest.raises(RuntimeError, match="not on mimic"):
        torch.ops.mimic.storage_bytes(torch.zeros(2).storage().untyped()._cdata)
