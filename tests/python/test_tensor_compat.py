"""deepcopy, pickling (torch.save) and the legacy ``tensor.new`` for mimic tensors, which 1.13's
Python layer refuses for a PrivateUse1 tensor with storage (torch_mimic/_tensor_compat.py)."""
import copy
import io
import pickle

import pytest
import torch

import torch_mimic

DEVICE = torch_mimic.DEVICE_TYPE


def _roundtrip(obj):
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    buffer.seek(0)
    return torch.load(buffer)


def test_deepcopy_is_an_independent_copy_with_grad_state():
    t = torch.arange(6.0, device=DEVICE).reshape(2, 3).requires_grad_()
    t.grad = torch.ones(2, 3, device=DEVICE)
    copied = copy.deepcopy(t)
    assert copied.device == t.device and copied.requires_grad and copied.is_leaf
    assert copied.grad.cpu().tolist() == [[1.0] * 3] * 2
    with torch.no_grad():
        copied.add_(1)
    assert t.cpu().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_deepcopy_keeps_identity_through_the_memo():
    t = torch.ones(3, device=DEVICE)
    a, b = copy.deepcopy([t, t])
    assert a is b and a is not t


def test_deepcopy_of_a_non_leaf_raises_pytorchs_error():
    t = torch.ones(3, device=DEVICE, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(t)


def test_deepcopy_of_a_module_with_buffers():
    module = torch.nn.BatchNorm1d(4).to(DEVICE)
    module(torch.randn(8, 4, device=DEVICE))
    copied = copy.deepcopy(module)
    torch.testing.assert_close(copied.running_mean.cpu(), module.running_mean.cpu())
    assert copied.running_mean.device == module.running_mean.device
    assert copied.running_mean.data_ptr() != module.running_mean.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool])
def test_torch_save_and_load(dtype):
    t = torch.arange(12, device=DEVICE).reshape(3, 4).to(dtype)[:, 1:]
    loaded = _roundtrip({"t": t})["t"]
    assert loaded.device == t.device and loaded.dtype == dtype
    assert torch.equal(loaded.cpu(), t.cpu())


def test_a_state_dict_survives_save_and_load():
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).to(DEVICE)
    state = _roundtrip(model.state_dict())
    fresh = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2)).to(DEVICE)
    fresh.load_state_dict(state)
    for key, value in model.state_dict().items():
        assert torch.equal(fresh.state_dict()[key].cpu(), value.cpu()), key


def test_pickle_keeps_requires_grad():
    t = torch.ones(2, device=DEVICE, requires_grad=True)
    loaded = pickle.loads(pickle.dumps(t))
    assert loaded.requires_grad and loaded.device == t.device


def test_legacy_new():
    t = torch.zeros(2, dtype=torch.float16, device=DEVICE)
    assert t.new().shape == (0,) and t.new().device == t.device
    sized = t.new(2, 3)
    assert sized.shape == (2, 3) and sized.dtype == torch.float16 and sized.device == t.device
    assert t.new(torch.Size([4])).shape == (4,)
    data = t.new([1, 2, 3])
    assert data.dtype == torch.float16 and data.cpu().tolist() == [1.0, 2.0, 3.0]


def test_other_devices_keep_pytorchs_behaviour():
    cpu = torch.arange(3.0)
    assert torch.equal(copy.deepcopy(cpu), cpu)
    assert torch.equal(_roundtrip(cpu), cpu)
    assert torch.zeros(1).new(2).shape == (2,)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool, torch.complex64],
                         ids=str)
def test_copy_copy_shares_the_storage_as_on_the_cpu(dtype):
    results = []
    for device in ("cpu", DEVICE):
        t = torch.tensor([1, 0, 3, 4], device=device).to(dtype)[1:]
        shallow = copy.copy(t)
        assert shallow is not t and shallow.data_ptr() == t.data_ptr()
        assert shallow.stride() == t.stride() and shallow.storage_offset() == t.storage_offset()
        shallow.fill_(1)
        results.append(t.cpu())
    assert torch.equal(results[0], results[1])


def test_copy_copy_keeps_requires_grad():
    t = torch.ones(2, device=DEVICE, requires_grad=True)
    assert copy.copy(t).requires_grad


def test_apply_map_and_map2_as_on_the_cpu():
    results = []
    for device in ("cpu", DEVICE):
        t = torch.arange(6.0, device=device).reshape(2, 3)
        other = torch.tensor([10.0, 20.0, 30.0], device=device)  # broadcast to t
        t.map_(other, lambda a, b: a * b)
        t[:, 1:].apply_(lambda a: a - 1)  # through a view
        t.map2_(other, torch.ones(2, 1, device=device), lambda a, b, c: a + b * c)
        results.append(t.cpu())
    assert torch.equal(results[0], results[1])


def test_map_keeps_pytorchs_errors():
    t = torch.zeros(3, device=DEVICE)
    with pytest.raises(TypeError, match="map_: expected"):
        t.map_(torch.zeros(3, dtype=torch.int64, device=DEVICE), lambda a, b: a)
    with pytest.raises(TypeError, match="map_: expected"):
        t.map_(torch.zeros(3), lambda a, b: a)
