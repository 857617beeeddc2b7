"""torch_mimic.compile(optimizer): the step's _foreach_ updates recorded and launched as one
multi-tensor program per written list. The programs compute the eager kernels' float32
operations in the same order, so parameters and optimiser state are bit-identical to eager."""
import gc

import pytest
import torch

import torch_mimic
from kernel_launches import launches

DEVICE = torch.device(torch_mimic.DEVICE_TYPE, 0)
SHAPES = [(16, 8), (8,), (5, 3, 2), (1,)]


def _params(dtype=torch.float32):
    generator = torch.Generator().manual_seed(0)
    return [torch.randn(shape, generator=generator, dtype=dtype).to(DEVICE).requires_grad_()
            for shape in SHAPES]


def _train(make_optimizer, compiled, steps=3, dtype=torch.float32, scheduler=False):
    """Parameters and state after ``steps`` steps on fixed gradients, and each step's
    launches."""
    params = _params(dtype)
    optimizer = make_optimizer(params)
    if compiled:
        optimizer = torch_mimic.compile(optimizer)
    schedule = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5) if scheduler else None
    counts = []
    for step in range(steps):
        optimizer.zero_grad()
        for index, p in enumerate(params):
            p.grad = torch.full_like(p, 0.1 * (index + 1) - 0.05 * step).sin()
        torch_mimic.synchronize()
        before = launches()
        optimizer.step()
        counts.append(launches() - before)
        if schedule is not None:
            schedule.step()
    state = [t.cpu() for s in optimizer.state.values() for t in s.values()
             if isinstance(t, torch.Tensor)]
    return [p.detach().cpu() for p in params], state, counts


OPTIMIZERS = {
    "sgd_momentum": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), 2),
    "sgd_nesterov_decay": (lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True,
                                                     weight_decay=0.01), None),
    "adam": (lambda p: torch.optim.Adam(p, lr=0.01), 3),
    "adam_amsgrad_decay": (lambda p: torch.optim.Adam(p, lr=0.01, amsgrad=True,
                                                      weight_decay=0.1), None),
    "adamw": (lambda p: torch.optim.AdamW(p, lr=0.01, weight_decay=0.1), 3),
    "rmsprop": (lambda p: torch.optim.RMSprop(p, lr=0.01, momentum=0.5), None),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_bit_identical_to_eager(name):
    make, launches_per_step = OPTIMIZERS[name]
    eager_params, eager_state, eager_launches = _train(make, compiled=False, scheduler=True)
    params, state, compiled_launches = _train(make, compiled=True, scheduler=True)
    for expected, actual in zip(eager_params + eager_state, params + state):
        assert torch.equal(expected, actual)
    # After the first step (which creates the state), one launch per written list.
    assert compiled_launches[-1] < eager_launches[-1]
    if launches_per_step is not None:
        assert compiled_launches[1:] == [launches_per_step] * 2
    report = torch_mimic.compile_report()[-1]
    assert report["kind"] == "optimizer" and report["eager_replays"] == 0
    assert report["steps"] == 3


def test_report_names_each_launch_program():
    _train(OPTIMIZERS["sgd_momentum"][0], compiled=True)
    report = torch_mimic.compile_report()[-1]
    assert report["name"] == "SGD"
    # The momentum buffers (buf * momentum + grad), then the parameters (p - lr * buf).
    assert [(launch["program"], launch["tensors"]) for launch in report["launches"]] == [
        ("x0 s0 mul x1 add", len(SHAPES)), ("x0 x1 s0 mul add", len(SHAPES))]


def test_tensors_it_cannot_fuse_run_eager():
    make = OPTIMIZERS["adam"][0]
    eager_params, _, _ = _train(make, compiled=False, dtype=torch.float64)
    params, _, _ = _train(make, compiled=True, dtype=torch.float64)
    for expected, actual in zip(eager_params, params):
        assert torch.equal(expected, actual)
    assert torch_mimic.compile_report()[-1]["launches"] == []


class _Swap(torch.optim.Optimizer):
    """x <- x + y and y <- y + x, both from the old values: each launch would have to run
    before the other, so the recorded ops run eager in order."""

    def __init__(self, params):
        super().__init__(params, {"foreach": True})

    @torch.no_grad()
    def step(self):
        xs, ys = self.param_groups[0]["params"][0::2], self.param_groups[0]["params"][1::2]
        old_x = torch._foreach_mul(xs, 1.0)
        torch._foreach_add_(xs, ys)
        torch._foreach_add_(ys, old_x)


def test_an_order_no_launch_plan_meets_runs_the_recorded_ops():
    results = []
    for compiled in (False, True):
        generator = torch.Generator().manual_seed(1)
        params = [torch.randn(16, 8, generator=generator).to(DEVICE).requires_grad_()
                  for _ in range(2)]
        optimizer = _Swap(params)
        if compiled:
            optimizer = torch_mimic.compile(optimizer)
        optimizer.step()
        results.append([p.detach().cpu() for p in params])
    for expected, actual in zip(*results):
        assert torch.equal(expected, actual)
    assert torch_mimic.compile_report()[-1]["eager_replays"] == 1


class _Temporary(torch.optim.Optimizer):
    """A step that returns a temporary list: the caller still holds it, so it is written."""

    def __init__(self, params):
        super().__init__(params, {"foreach": True})

    @torch.no_grad()
    def step(self):
        params = self.param_groups[0]["params"]
        roots = torch._foreach_sqrt([p.abs() for p in params])
        torch._foreach_add_(params, roots, alpha=-0.5)
        return roots


def test_a_temporary_the_caller_keeps_is_written():
    results = []
    for compiled in (False, True):
        params = _params()
        optimizer = _Temporary(params)
        if compiled:
            optimizer = torch_mimic.compile(optimizer)
        roots = optimizer.step()
        results.append([t.cpu() for t in roots] + [p.detach().cpu() for p in params])
    for expected, actual in zip(*results):
        assert torch.equal(expected, actual)


def test_zero_grad_sets_gradients_to_none_unless_asked():
    params = _params()
    optimizer = torch_mimic.compile(torch.optim.SGD(params, lr=0.1))
    for p in params:
        p.grad = torch.ones_like(p)
    optimizer.zero_grad()
    assert all(p.grad is None for p in params)
    for p in params:
        p.grad = torch.ones_like(p)
    optimizer.zero_grad(set_to_none=False)
    assert all(torch.count_nonzero(p.grad.cpu()) == 0 for p in params)


def test_no_fusion_runs_the_optimizers_own_step():
    make = OPTIMIZERS["sgd_momentum"][0]
    params = _params()
    optimizer = torch_mimic.compile(make(params), mode="no-fusion")
    for p in params:
        p.grad = torch.ones_like(p)
    before = launches()
    optimizer.step()
    optimizer.step()
    torch_mimic.synchronize()
    # The per-parameter loop: 2 (first step: clone buffer, update) + 3 per parameter after.
    assert launches() - before >= 4 * len(SHAPES)
    assert torch_mimic.compile_report()[-1]["steps"] == 0


def test_steps_leave_no_reference_cycles_holding_tensors():
    # With the cyclic garbage collector off, a cycle through a recorded tensor (the gradients
    # of the step) would keep its memory: every step's must be freed by reference counting.
    params = _params()
    optimizer = torch_mimic.compile(torch.optim.Adam(params, lr=0.01))
    allocated = []
    gc.disable()
    try:
        for step in range(4):
            optimizer.zero_grad()
            for p in params:
                p.grad = torch.ones_like(p)
            optimizer.step()
            torch_mimic.synchronize()
            allocated.append(torch_mimic.memory_allocated())
    finally:
        gc.enable()
    # The first step creates Adam's state; after it, nothing accumulates.
    assert allocated[1:] == [allocated[1]] * 3
