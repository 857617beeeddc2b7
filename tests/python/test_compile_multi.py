"""Multi-output pointwise kernels (torch_mimic._lower_multi's MultiKernel): a fused tree
whose value is also needed elsewhere is computed inside a later tree of its shape and written as
an extra output, bit-identical to eager, forward and backward; and the merges the pass refuses."""
import pytest
import torch

import torch_mimic
from torch_mimic import _compile_lower, _lower_multi

pytestmark = pytest.mark.skipif(not hasattr(torch.ops.mimic, "elementwise_multi"),
                                reason="the library predates torch.ops.mimic.elementwise_multi")


def _forward_kernels():
    graphs = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]
    return graphs["forward"]["kernels"]


def _check(device, fn, *shapes, grad=True):
    """Runs ``fn`` compiled and eager on the same random inputs; results (and gradients) must
    be equal bit for bit. Returns the compiled forward graph's kernels."""
    torch.manual_seed(0)
    host = [torch.randn(*shape) for shape in shapes]
    eager_in = [t.to(device).requires_grad_(grad) for t in host]
    compiled_in = [t.to(device).requires_grad_(grad) for t in host]
    expected = fn(*eager_in)
    got = torch_mimic.compile(fn)(*compiled_in)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = got if isinstance(got, tuple) else (got,)
    for e, g in zip(expected, got):
        assert torch.equal(g.detach().cpu(), e.detach().cpu())
    if grad:
        sum(e.sum() * (i + 1) for i, e in enumerate(expected)).backward()
        sum(g.sum() * (i + 1) for i, g in enumerate(got)).backward()
        for e, g in zip(eager_in, compiled_in):
            assert torch.equal(g.grad.cpu(), e.grad.cpu())
    return _forward_kernels()


def _shared(x, y):
    a = x * y + 1.5
    return a, torch.tanh(a) * 2 - y


def test_value_needed_elsewhere_becomes_an_extra_output(device):
    kernels = _check(device, _shared, (16, 33), (16, 33), grad=False)
    assert len(kernels) == 1
    assert len(kernels[0]["programs"]) == 2


def test_gradients_of_one_shape_share_a_kernel(device):
    def block(x, w):
        h = torch.nn.functional.gelu(x * w + 0.5)
        return torch.sigmoid(h) * h
    _check(device, block, (8, 300), (8, 300))
    backward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["backward"]["kernels"]
    # The forward recomputed (its values, read by both gradients' trees, are extra outputs)
    # and both gradients: two launches.
    assert [len(k.get("programs", [k.get("program")])) for k in backward] == [3, 2]


def test_fewer_launches_than_one_kernel_per_tree(device, monkeypatch):
    x, y = (torch.randn(64, 65).to(device) for _ in range(2))
    merged = torch_mimic.compile(_shared)
    merged(x, y)
    stats = torch_mimic.kernel_cache_stats()
    before = stats["hits"] + stats["misses"]
    merged(x, y)
    stats = torch_mimic.kernel_cache_stats()
    multi_launches = stats["hits"] + stats["misses"] - before

    monkeypatch.setattr(_compile_lower, "_passes",
                        tuple(p for p in _compile_lower.passes() if p[1] != "multi"))
    single = torch_mimic.compile(lambda a, b: _shared(a, b))
    expected = single(x, y)
    assert len(_forward_kernels()) == 2
    stats = torch_mimic.kernel_cache_stats()
    before = stats["hits"] + stats["misses"]
    single(x, y)
    stats = torch_mimic.kernel_cache_stats()
    assert multi_launches < stats["hits"] + stats["misses"] - before
    for e, g in zip(expected, merged(x, y)):
        assert torch.equal(g.cpu(), e.cpu())


def test_other_shape_is_not_merged(device):
    def broadcast(x, y):
        a = x.exp() + 1  # (16, 1), read by a (16, 33) tree and returned
        return a, a * y
    kernels = _check(device, broadcast, (16, 1), (16, 33))
    wide = [k for k in kernels if k["shape"] == (16, 33)]
    assert len(wide) == 1 and "programs" not in wide[0]
    # exp's value, saved for the backward, is an extra output of the (16, 1) kernel.
    assert [len(k.get("programs", ())) for k in kernels if k["shape"] == (16, 1)] == [2]


def test_reader_before_the_consumer_is_not_merged(device):
    def matmul_between(x, w):
        a = x * 3 + 1
        m = a @ w  # reads a before the tree that reads both
        return (a - m).relu()
    kernels = _check(device, matmul_between, (8, 8), (8, 8), grad=False)
    assert all("programs" not in k for k in kernels)


def test_input_limit_is_respected(device):
    def wide(*xs):
        a = xs[0] * xs[1] + xs[2] * xs[3] - xs[4]
        b = a * xs[5] + xs[6] * xs[7] - xs[8]
        return a, b
    kernels = _check(device, wide, *[(4, 40)] * 9, grad=False)
    assert all(len(k.get("programs", ())) <= 8 for k in kernels)
    assert len(kernels) == 2  # merged they would read 9 inputs


def test_program_length_limit_is_respected(device, monkeypatch):
    monkeypatch.setattr(_lower_multi, "_MAX_TOKENS", 8)
    kernels = _check(device, _shared, (16, 33), (16, 33), grad=False)
    assert len(kernels) == 2 and all("programs" not in k for k in kernels)


def _dropout_run(device, fn, compiled, shapes):
    """fn's outputs and input gradients after seeding mimic's generator, and its state after."""
    torch.manual_seed(3)
    inputs = [torch.randn(*s).to(device).requires_grad_() for s in shapes]
    torch_mimic.manual_seed(21)
    out = fn(*inputs)
    out.sum().backward()
    return out.detach().cpu(), [t.grad.cpu() for t in inputs], torch_mimic.get_rng_state()


def _same_as_eager(device, fn, *shapes):
    compiled = torch_mimic.compile(fn)
    _dropout_run(device, compiled, True, shapes)  # traces (its draws are undone)
    expected = _dropout_run(device, fn, False, shapes)
    got = _dropout_run(device, compiled, True, shapes)
    assert torch.equal(got[0], expected[0])
    for e, g in zip(expected[1], got[1]):
        assert torch.equal(g, e)
    assert torch.equal(got[2], expected[2])  # the kernels reserved the eager keys
    return torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]


def test_dropout_mask_is_drawn_in_the_kernel_that_reads_it(device, monkeypatch):
    monkeypatch.setattr(_lower_multi, "DRAW_MASKS", True)
    def dropped(x, w):
        return torch.nn.functional.dropout(torch.relu(x * w), 0.1, training=True) * 2
    forward = _same_as_eager(device, dropped, (8, 300), (8, 300))
    assert "aten.bernoulli_.float" not in forward["eager_nodes"]
    (kernel,) = forward["kernels"]
    assert kernel["random"] and sum(p.split(" ").count("rand") for p in kernel["programs"]) >= 1
    assert all(p.split(" ").count("rand") <= 1 for p in kernel["programs"])


def test_mask_stays_eager_when_another_random_node_sits_between(device, monkeypatch):
    monkeypatch.setattr(_lower_multi, "DRAW_MASKS", True)
    def two(x, y):
        a = torch.nn.functional.dropout(x, 0.5, training=True)
        b = torch.nn.functional.dropout(y, 0.5, training=True)
        return a + b  # both masks would be drawn here; the first is drawn before the second
    forward = _same_as_eager(device, two, (4, 100), (4, 100))
    assert forward["eager_nodes"].get("aten.bernoulli_.float") == 1
    assert sum(k.get("random", False) for k in forward["kernels"]) == 1


def test_masks_stay_eager_when_switched_off(device, monkeypatch):
    monkeypatch.setattr(_lower_multi, "DRAW_MASKS", False)
    forward = _same_as_eager(device, lambda x: torch.nn.functional.dropout(x, 0.5, True) * 3,
                             (4, 100))
    assert forward["eager_nodes"].get("aten.bernoulli_.float") == 1


def test_first_output_overwrites_an_input_that_dies_there(device, monkeypatch):
    # Without the GEMM pass, which would take the first tree as the mm's epilogue.
    monkeypatch.setattr(_compile_lower, "_passes",
                        tuple(p for p in _compile_lower.passes() if p[1] != "gemm"))

    def fn(a, b, c):
        h = a @ b  # dies in the kernel: its buffer takes output 0
        t = torch.tanh(h * c)
        return t, t * c + 1

    a, b, c = (torch.randn(8, 8).to(device) for _ in range(3))
    compiled = torch_mimic.compile(fn)
    for _ in range(2):
        for e, g in zip(fn(a, b, c), compiled(a, b, c)):
            assert torch.equal(g.cpu(), e.cpu())
    multi = [k for k in _forward_kernels() if "programs" in k]
    assert len(multi) == 1 and multi[0]["in_place_input"] is not None
