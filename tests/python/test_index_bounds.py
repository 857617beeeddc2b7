"""Indices out of range raise as PyTorch's CPU kernels raise them (the same type and message)
instead of reaching the device's index kernels, which would address memory outside the tensor;
and advanced indexing refuses the index dtypes and shapes the CPU refuses."""
import pytest
import torch

import torch_mimic
from kernel_launches import launches_of

DEVICE = torch_mimic.DEVICE_TYPE


def _outcome(call, device):
    """The exception type and message of call(device), or its result on the CPU."""
    try:
        return call(device).cpu()
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error).splitlines()[0]


def _same_as_cpu(call):
    cpu, device = _outcome(call, "cpu"), _outcome(call, DEVICE)
    if isinstance(cpu, torch.Tensor):
        assert isinstance(device, torch.Tensor) and torch.equal(device, cpu), (device, cpu)
    else:
        assert device == cpu
    return cpu


def _long(values, d):
    return torch.tensor(values, dtype=torch.long, device=d)


def _x(d, *shape):
    return torch.arange(float(torch.Size(shape).numel()), device=d).reshape(shape)


OUT_OF_RANGE = {
    "index-past-end": lambda d: _x(d, 5)[_long([1, 5, 2], d)],
    "index-before-start": lambda d: _x(d, 5)[_long([-6], d)],
    "index-first-bad-value": lambda d: _x(d, 5)[_long([1, 9, 7], d)],
    "index-cpu-index": lambda d: _x(d, 5)[torch.tensor([1, 5])],
    "index-two-dims": lambda d: _x(d, 2, 3)[_long([1, 0, 1], d), _long([2, 4, 5], d)],
    "index-second-dim-first": lambda d: _x(d, 2, 3)[_long([1, 2], d), _long([3, 0], d)],
    "index_put": lambda d: _x(d, 5).index_put_((_long([5], d),), torch.tensor(1.0, device=d)),
    "index_put-accumulate": lambda d: _x(d, 5).index_put_(
        (_long([0, -7], d),), torch.tensor(1.0, device=d), accumulate=True),
    "setitem": lambda d: _x(d, 4, 2).__setitem__(_long([4], d), 0.0),
    "index_select": lambda d: _x(d, 5).index_select(0, _long([7], d)),
    "index_select-negative": lambda d: _x(d, 5).index_select(0, _long([-1], d)),
    "index_select-dim1": lambda d: _x(d, 2, 3, 4).index_select(1, _long([1, -4], d)),
    "index_select-dim2": lambda d: _x(d, 2, 3, 4).index_select(2, _long([4], d)),
    "index_select-out": lambda d: torch.index_select(_x(d, 2, 3), 1, _long([3], d),
                                                     out=torch.empty(0, device=d)),
    "embedding": lambda d: torch.nn.functional.embedding(_long([0, 6], d), _x(d, 5, 2)),
    "index_add": lambda d: _x(d, 5).index_add(0, _long([8], d), torch.ones(1, device=d)),
    "index_add_": lambda d: _x(d, 5).index_add_(0, _long([-1], d), torch.ones(1, device=d)),
    "gather": lambda d: _x(d, 5).gather(0, _long([2, 9, 6], d)),
    "gather-negative": lambda d: _x(d, 5, 1).gather(0, _long([[-1]], d)),
    "scatter": lambda d: _x(d, 5).scatter(0, _long([8], d), 2.0),
    "scatter_add_": lambda d: _x(d, 2, 3).scatter_add_(1, _long([[3]], d), _x(d, 1, 1)),
}


@pytest.mark.parametrize("call", OUT_OF_RANGE.values(), ids=OUT_OF_RANGE.keys())
def test_index_out_of_range_raises_as_on_the_cpu(call):
    cpu = _same_as_cpu(call)
    assert not isinstance(cpu, torch.Tensor) and "out of" in cpu[1]


def test_the_device_works_on_after_an_index_error():
    with pytest.raises(IndexError):
        _x(DEVICE, 5)[_long([5], DEVICE)]
    assert torch.equal(_x(DEVICE, 5)[_long([4, -5], DEVICE)].cpu(), torch.tensor([4.0, 0.0]))


def test_bounds_checks_add_no_device_work():
    """The check reads the indices through the simulator's view, as a real kernel's device-side
    assert costs nothing on the timeline: index_select and gather stay one kernel each."""
    x, index = _x(DEVICE, 10), _long([1, 9], DEVICE)
    assert launches_of(lambda: x.index_select(0, index)) == 1
    assert launches_of(lambda: x.gather(0, index)) == 1


IN_RANGE = {
    "index-both-ends": lambda d: _x(d, 5)[_long([0, 4, -1, -5], d)],
    "index-two-dims": lambda d: _x(d, 2, 3)[_long([1, -2], d), _long([2, -3], d)],
    "index-empty": lambda d: _x(d, 5)[_long([], d)],
    "index_put": lambda d: _x(d, 5).index_put_((_long([4, -5], d),), torch.tensor(1.0, device=d)),
    "index_select": lambda d: _x(d, 5).index_select(0, _long([4, 0], d)),
    "index_select-int32": lambda d: _x(d, 5).index_select(0, _long([4], d).int()),
    "gather": lambda d: _x(d, 5).gather(0, _long([4, 0], d)),
    "scatter": lambda d: _x(d, 5).scatter(0, _long([4], d), 2.0),
    "index_add": lambda d: _x(d, 5).index_add(0, _long([4], d), torch.ones(1, device=d)),
}


@pytest.mark.parametrize("call", IN_RANGE.values(), ids=IN_RANGE.keys())
def test_indices_in_range_index_as_on_the_cpu(call):
    assert isinstance(_same_as_cpu(call), torch.Tensor)


REFUSED = {
    "float-index": lambda d: _x(d, 5)[torch.tensor([], dtype=torch.float, device=d)],
    "int32-index": lambda d: _x(d, 5)[_long([1], d).int()],
    "int32-index_put": lambda d: _x(d, 5).index_put_((_long([1], d).int(),),
                                                    torch.tensor(2.0, device=d)),
    "shapes-mismatch": lambda d: _x(d, 5, 5)[_long([0, 1], d), _long([0, 1, 2], d)],
    "shapes-mismatch-setitem": lambda d: _x(d, 5, 5).__setitem__(
        (_long([0, 1], d), _long([0, 1, 2], d)), 0.0),
    "false-and-list": lambda d: _x(d, 2, 3, 4)[False, [0, 1], ...],
}


@pytest.mark.parametrize("call", REFUSED.values(), ids=REFUSED.keys())
def test_advanced_indexing_refuses_what_the_cpu_refuses(call):
    cpu = _same_as_cpu(call)
    assert cpu[0] is IndexError
