"""Neural-network ops on the device against PyTorch's CPU: softmax, layer and batch norm, losses,
convolution, pooling and dropout, forward and backward (through autograd on both devices), in
float32, bfloat16 and float16, with no CPU fallback on the native paths.

PyTorch 1.13's CPU kernels lack float16 for most of these ops, so float16 results are compared
with the CPU's float32 result on the same (float16-rounded) inputs."""
import pytest
import torch
import torch.nn.functional as F

import torch_mimic

aten = torch.ops.aten

# dtype -> (rtol, atol) of device results against the reference
TOLERANCES = {torch.float32: (1e-4, 1e-5), torch.bfloat16: (2e-2, 2e-2), torch.float16: (2e-3, 2e-3)}
LOW_PRECISION = [torch.bfloat16, torch.float16]


def _reference_dtype(dtype):
    return torch.float32 if dtype == torch.float16 else dtype


def _leaf(t, dtype, device, grad):
    if not t.dtype.is_floating_point:
        return t.to(device)
    t = t.to(dtype).clone()  # ops may update inputs in place (running statistics)
    if device.type == "cpu":
        t = t.to(_reference_dtype(dtype))
    return t.to(device).detach().requires_grad_(grad)


def _as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _assert_close(actual, expected, dtype, what):
    rtol, atol = TOLERANCES[dtype]
    if expected.dtype.is_floating_point:
        assert actual.dtype == (dtype if expected.dtype == _reference_dtype(dtype) else expected.dtype), what
        actual, expected = actual.float(), expected.float()
    torch.testing.assert_close(actual.cpu(), expected, rtol=rtol, atol=atol, equal_nan=True,
                               msg=lambda m: f"{what}: {m}")


def check(fn, inputs, device, dtype=torch.float32, grad=True, constants=()):
    """Runs fn on CPU and device copies of ``inputs`` (floating ones converted to ``dtype``),
    compares the outputs and, with ``grad``, the gradients of every floating input (except
    those at the ``constants`` positions) after a backward pass with the same random output
    gradients."""
    results = {}
    for where in (torch.device("cpu"), device):
        leaves = [_leaf(t, dtype, where, grad and i not in constants) if isinstance(t, torch.Tensor) else t
                  for i, t in enumerate(inputs)]
        outputs = _as_tuple(fn(*leaves))
        results[where.type] = leaves, outputs
    (cpu_leaves, cpu_out), (dev_leaves, dev_out) = results["cpu"], results[device.type]
    for index, (actual, expected) in enumerate(zip(dev_out, cpu_out)):
        _assert_close(actual, expected, dtype, f"output {index}")
    if not grad:
        return
    differentiable = [i for i, out in enumerate(cpu_out) if out.requires_grad]
    seeds = [torch.randn(dev_out[i].shape).to(dev_out[i].dtype) for i in differentiable]
    torch.autograd.backward([cpu_out[i] for i in differentiable],
                            [s.to(cpu_out[i].dtype) for i, s in zip(differentiable, seeds)])
    torch.autograd.backward([dev_out[i] for i in differentiable], [s.to(device) for s in seeds])
    for index, (actual, expected) in enumerate(zip(dev_leaves, cpu_leaves)):
        if isinstance(expected, torch.Tensor) and expected.requires_grad:
            _assert_close(actual.grad, expected.grad, dtype, f"gradient of input {index}")


def assert_same_error(fn, inputs, device):
    """fn raises on the device the exception type it raises on the CPU."""
    with pytest.raises(Exception) as on_cpu:
        fn(*inputs)
    with pytest.raises(Exception) as on_device:
        fn(*[t.to(device) if isinstance(t, torch.Tensor) else t for t in inputs])
    assert type(on_device.value) is type(on_cpu.value), (on_cpu.value, on_device.value)


@pytest.fixture(autouse=True)
def _seeded():
    torch.manual_seed(0)


# --- softmax -------------------------------------------------------------------------------


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", [((4, 7), 1), ((4, 7), 0), ((2, 3, 5), -2), ((), 0)])
def test_softmax(log, shape, dim, device, fallbacks):
    fn = torch.log_softmax if log else torch.softmax
    check(lambda x: fn(x, dim), [torch.randn(shape) * 5], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
@pytest.mark.parametrize("log", [False, True])
def test_softmax_low_precision(log, dtype, device, fallbacks):
    fn = torch.log_softmax if log else torch.softmax
    check(lambda x: fn(x, -1), [torch.randn(3, 9)], device, dtype)
    assert fallbacks() == {}


def test_softmax_is_stable_and_takes_strided_input(device, fallbacks):
    x = torch.tensor([[1000.0, 1001.0, 999.0], [-1000.0, -1002.0, -1e4]])
    check(lambda t: torch.softmax(t.t(), 0), [x], device)
    check(lambda t: torch.log_softmax(t, 1), [x], device)
    assert fallbacks() == {}


def test_softmax_out_and_half_to_float(device, fallbacks):
    x = torch.randn(3, 5)
    for op, fn in ((aten._softmax, torch.softmax), (aten._log_softmax, torch.log_softmax)):
        out = torch.empty(0, device=device)
        assert op.out(x.to(device), 1, False, out=out) is out
        torch.testing.assert_close(out.cpu(), fn(x, 1))
        # half_to_float (CUDA's convention; the CPU rejects it): a float16 input, a float32 result
        half = x.half()
        result = op(half.to(device), 1, True)
        assert result.dtype == torch.float32
        torch.testing.assert_close(result.cpu(), fn(half.float(), 1), rtol=1e-4, atol=1e-5)
    assert fallbacks() == {}


def test_softmax_backward_data_out(device, fallbacks):
    grad, x = torch.randn(4, 6), torch.randn(4, 6)
    for op, forward, out_name in ((aten._softmax_backward_data, torch.softmax, "grad_input"),
                                  (aten._log_softmax_backward_data, torch.log_softmax, "out")):
        output = forward(x, 1)
        expected = op(grad, output, 1, torch.float32)
        out = torch.empty(0, device=device)
        assert op.out(grad.to(device), output.to(device), 1, torch.float32, **{out_name: out}) is out
        torch.testing.assert_close(out.cpu(), expected)
        torch.testing.assert_close(op(grad.to(device), output.to(device), 1, torch.float32).cpu(), expected)
    assert fallbacks() == {}


def test_softmax_errors(device):
    assert_same_error(lambda x: torch.softmax(x, 2), [torch.randn(3, 4)], device)
    assert_same_error(lambda x: aten._softmax(x, 0, False), [torch.arange(4)], device)
    assert_same_error(lambda x: aten._softmax(x, 0, True), [torch.randn(3).bfloat16()], device)


# --- layer norm ----------------------------------------------------------------------------


@pytest.mark.parametrize("shape, normalized, affine", [
    ((4, 10), (10,), True), ((2, 3, 4, 5), (4, 5), True), ((2, 3, 6), (6,), False)])
def test_layer_norm(shape, normalized, affine, device, fallbacks):
    inputs = [torch.randn(shape) * 3 + 1]
    if affine:
        inputs += [torch.randn(normalized), torch.randn(normalized)]
    check(lambda x, *params: F.layer_norm(x, normalized, *params, eps=1e-5), inputs, device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_layer_norm_low_precision(dtype, device, fallbacks):
    check(lambda x, w, b: F.layer_norm(x, (8,), w, b), [torch.randn(3, 8), torch.randn(8), torch.randn(8)],
          device, dtype)
    assert fallbacks() == {}


def test_native_layer_norm_statistics(device, fallbacks):
    x = torch.randn(2, 3, 4)
    expected = aten.native_layer_norm(x, [3, 4], None, None, 1e-5)
    actual = aten.native_layer_norm(x.to(device), [3, 4], None, None, 1e-5)
    for a, e in zip(actual, expected):
        assert a.shape == e.shape and a.dtype == e.dtype
        torch.testing.assert_close(a.cpu(), e, rtol=1e-4, atol=1e-5)
    assert fallbacks() == {}


def test_layer_norm_errors(device):
    assert_same_error(lambda x: F.layer_norm(x, (5,)), [torch.randn(2, 4)], device)
    assert_same_error(lambda x, w: F.layer_norm(x, (4,), w), [torch.randn(2, 4), torch.randn(3)], device)


# --- batch norm ----------------------------------------------------------------------------


def _batch_norm(training, momentum=0.1):
    def run(x, weight, bias, running_mean, running_var):
        output = F.batch_norm(x, running_mean, running_var, weight, bias, training, momentum, 1e-5)
        return output, running_mean, running_var

    return run


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5, 2)])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm(shape, training, device, fallbacks):
    channels = shape[1]
    inputs = [torch.randn(shape) * 2 + 0.5, torch.randn(channels), torch.randn(channels),
              torch.randn(channels), torch.rand(channels) + 0.5]
    check(_batch_norm(training, momentum=0.3), inputs, device, constants=(3, 4))
    assert fallbacks() == {}


def test_batch_norm_without_parameters_or_running_stats(device, fallbacks):
    check(lambda x: F.batch_norm(x, None, None, training=True), [torch.randn(5, 4, 3)], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_batch_norm_low_precision(dtype, device, fallbacks):
    x = torch.randn(4, 3, 2, 2)
    check(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), [x, torch.randn(3), torch.randn(3)], device,
          dtype)
    assert fallbacks() == {}


def test_batch_norm_mixed_precision_statistics(device, fallbacks):
    """bfloat16 input with float32 parameters keeps float32 statistics, as on the CPU."""
    x, mean, var = torch.randn(4, 3, 5).bfloat16(), torch.zeros(3), torch.ones(3)
    for training in (True, False):
        expected = aten.native_batch_norm(x, None, None, mean.clone(), var.clone(), training, 0.1, 1e-5)
        actual = aten.native_batch_norm(x.to(device), None, None, mean.to(device), var.to(device), training, 0.1,
                                        1e-5)
        for a, e in zip(actual, expected):
            assert a.shape == e.shape and a.dtype == e.dtype
            torch.testing.assert_close(a.cpu(), e, rtol=2e-2, atol=2e-2)
    assert fallbacks() == {}


def test_batch_norm_errors(device):
    assert_same_error(lambda x, w: F.batch_norm(x, None, None, w, None, True), [torch.randn(4, 3), torch.randn(2)],
                      device)


# --- losses --------------------------------------------------------------------------------


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss(reduction, weighted, device, fallbacks):
    target = torch.tensor([0, 3, 1, -100, 3, 2])
    weight = torch.rand(4) + 0.5 if weighted else None
    check(lambda x, t, w: F.nll_loss(x, t, w, reduction=reduction), [torch.randn(6, 4), target, weight], device,
          constants=(2,))
    assert fallbacks() == {}


def test_nll_loss_unbatched_and_ignore_index(device, fallbacks):
    check(lambda x, t: F.nll_loss(x, t, reduction="none"), [torch.randn(5), torch.tensor(2)], device)
    check(lambda x, t: F.nll_loss(x, t, ignore_index=1), [torch.randn(3, 4), torch.tensor([1, 0, 1])], device)
    # Every target ignored: the mean is 0/0.
    check(lambda x, t: F.nll_loss(x, t, ignore_index=1), [torch.randn(2, 4), torch.tensor([1, 1])], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_cross_entropy_spatial(reduction, device, fallbacks):
    """cross_entropy on [N, C, H, W] inputs decomposes into log_softmax and nll_loss2d."""
    target = torch.randint(0, 3, (2, 4, 5))
    target[0, 1, 2] = -100
    check(lambda x, t, w: F.cross_entropy(x, t, w, reduction=reduction),
          [torch.randn(2, 3, 4, 5), target, torch.rand(3) + 0.5], device, constants=(2,))
    assert fallbacks() == {}


def test_nll_loss_of_other_ranks(device, fallbacks):
    """nll_loss on [N, C, d1] and [N, C, d1, d2, d3] inputs goes through nll_loss2d on a view."""
    check(lambda x, t: F.nll_loss(x, t), [torch.randn(2, 3, 4), torch.randint(0, 3, (2, 4))], device)
    check(lambda x, t: F.nll_loss(x, t, reduction="none"),
          [torch.randn(2, 3, 2, 2, 2), torch.randint(0, 3, (2, 2, 2, 2))], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cross_entropy(dtype, device, fallbacks):
    check(lambda x, t: F.cross_entropy(x, t), [torch.randn(5, 7), torch.randint(0, 7, (5,))], device, dtype)
    assert fallbacks() == {}


def test_nll_loss_errors(device):
    # A target out of bounds is the device's fault at the next synchronisation, as on CUDA (no
    # host read): test_fused_rows.py checks it in a process of its own.
    x = torch.randn(3, 4)
    assert_same_error(F.nll_loss, [x, torch.tensor([0, 1])], device)  # batch sizes differ
    assert_same_error(lambda x, t, w: F.nll_loss(x, t, w), [x, torch.tensor([0, 1, 2]), torch.rand(3)], device)
    assert_same_error(aten.nll_loss2d_forward, [torch.randn(2, 3, 4), torch.zeros(2, 4, dtype=torch.int64),
                                                None, 1, -100], device)
    assert_same_error(aten.nll_loss_forward, [x, torch.tensor([0, 1, 2], dtype=torch.int32), None, 1, -100],
                      device)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_mse_loss(reduction, dtype, device, fallbacks):
    check(lambda x, t: F.mse_loss(x, t, reduction=reduction), [torch.randn(3, 5), torch.randn(3, 5)], device,
          dtype)
    assert fallbacks() == {}


# --- convolution ---------------------------------------------------------------------------

CONV_CASES = [
    # input shape, weight shape, stride, padding, dilation, groups, bias
    ((2, 3, 7, 6), (4, 3, 3, 3), 1, 1, 1, 1, True),
    ((1, 2, 9, 8), (3, 2, 3, 2), (2, 1), (1, 2), (2, 1), 1, False),
    ((2, 4, 6, 6), (6, 2, 3, 3), 2, 0, 1, 2, True),
    ((1, 3, 5, 5), (3, 1, 3, 3), 1, 1, 1, 3, False),  # depthwise
    ((2, 3, 4, 4), (5, 3, 1, 1), 1, 0, 1, 1, True),
]


@pytest.mark.parametrize("input_shape, weight_shape, stride, padding, dilation, groups, bias", CONV_CASES)
def test_conv2d(input_shape, weight_shape, stride, padding, dilation, groups, bias, device, fallbacks):
    inputs = [torch.randn(input_shape), torch.randn(weight_shape), torch.randn(weight_shape[0]) if bias else None]
    check(lambda x, w, b: F.conv2d(x, w, b, stride, padding, dilation, groups), inputs, device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_conv2d_low_precision(dtype, device, fallbacks):
    inputs = [torch.randn(1, 2, 5, 5), torch.randn(3, 2, 3, 3) / 3, torch.randn(3)]
    check(lambda x, w, b: F.conv2d(x, w, b, padding=1), inputs, device, dtype)
    assert fallbacks() == {}


def test_conv_strided_input_and_conv1d(device, fallbacks):
    check(lambda x, w: F.conv2d(x.transpose(2, 3), w, stride=2), [torch.randn(1, 2, 6, 7), torch.randn(2, 2, 2, 2)],
          device)
    check(lambda x, w: F.conv2d(x.contiguous(memory_format=torch.channels_last), w, padding=1),
          [torch.randn(2, 3, 5, 5), torch.randn(2, 3, 3, 3)], device)
    check(lambda x, w, b: F.conv1d(x, w, b, padding=2, dilation=2),
          [torch.randn(2, 3, 10), torch.randn(4, 3, 3), torch.randn(4)], device)
    assert fallbacks() == {}


def test_conv_transposed_and_3d_fall_back_to_the_cpu(device, fallbacks):
    check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2),
          [torch.randn(1, 2, 3, 3), torch.randn(2, 3, 2, 2), torch.randn(3)], device)
    check(lambda x, w: F.conv3d(x, w), [torch.randn(1, 1, 3, 3, 3), torch.randn(2, 1, 2, 2, 2)], device)
    assert set(fallbacks()) == {"aten::convolution_overrideable", "aten::convolution_backward_overrideable"}


def test_conv_errors(device):
    assert_same_error(F.conv2d, [torch.randn(1, 3, 5, 5), torch.randn(2, 4, 3, 3)], device)  # channels differ
    assert_same_error(F.conv2d, [torch.randn(1, 3, 2, 2), torch.randn(2, 3, 3, 3)], device)  # kernel too big


# --- pooling -------------------------------------------------------------------------------

MAX_POOL_CASES = [
    # kernel, stride, padding, dilation, ceil_mode
    (2, None, 0, 1, False),
    (3, 2, 1, 1, True),
    ((3, 2), (1, 2), (1, 0), (2, 1), False),
    (2, 3, 1, 1, True),
]


@pytest.mark.parametrize("kernel, stride, padding, dilation, ceil_mode", MAX_POOL_CASES)
def test_max_pool2d(kernel, stride, padding, dilation, ceil_mode, device, fallbacks):
    def pool(x):
        return F.max_pool2d(x, kernel, stride, padding, dilation, ceil_mode, return_indices=True)

    check(pool, [torch.randn(2, 3, 7, 8)], device)
    assert fallbacks() == {}


def test_max_pool2d_unbatched_and_without_indices(device, fallbacks):
    check(lambda x: F.max_pool2d(x, 3, 1, 1, return_indices=True), [torch.randn(2, 5, 5)], device)
    check(lambda x: torch.nn.MaxPool2d(2, ceil_mode=True)(x), [torch.randn(1, 2, 5, 5)], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_max_pool2d_low_precision(dtype, device, fallbacks):
    check(lambda x: F.max_pool2d(x, 2, 1, return_indices=True), [torch.randn(1, 2, 4, 4)], device, dtype)
    assert fallbacks() == {}


def test_max_pool2d_window_of_minus_infinity(device, fallbacks):
    """A window whose input values are all -inf: its index is the window's first position inside
    the input, as on the CPU, never a padding position."""
    x = torch.randn(1, 1, 5, 5)
    x[0, 0, :2] = float("-inf")
    check(lambda x: F.max_pool2d(x, 3, 1, 1, 2, return_indices=True), [x], device, grad=False)
    check(lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True),
          [torch.full((1, 1, 4, 4), float("-inf"))], device, grad=False)
    assert fallbacks() == {}


def test_max_pool2d_errors(device):
    assert_same_error(lambda x: F.max_pool2d(x, 2, padding=2), [torch.randn(1, 1, 4, 4)], device)
    assert_same_error(lambda x: F.max_pool2d(x, 5), [torch.randn(1, 1, 4, 4)], device)
    assert_same_error(lambda x: F.max_pool2d(x, 2), [torch.randn(4, 4)], device)


AVG_POOL_CASES = [
    # kernel, stride, padding, ceil_mode, count_include_pad, divisor_override
    (2, None, 0, False, True, None),
    (3, 2, 1, True, True, None),
    (3, 2, 1, True, False, None),
    ((3, 2), (2, 1), (1, 1), False, False, None),
    (2, 2, 1, False, True, 3),
]


@pytest.mark.parametrize("kernel, stride, padding, ceil_mode, count_include_pad, divisor", AVG_POOL_CASES)
def test_avg_pool2d(kernel, stride, padding, ceil_mode, count_include_pad, divisor, device, fallbacks):
    check(lambda x: F.avg_pool2d(x, kernel, stride, padding, ceil_mode, count_include_pad, divisor),
          [torch.randn(2, 3, 7, 6)], device)
    assert fallbacks() == {}


def test_avg_pool2d_unbatched(device, fallbacks):
    check(lambda x: F.avg_pool2d(x, 3, 2, 1), [torch.randn(2, 5, 6)], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_avg_pool2d_low_precision(dtype, device, fallbacks):
    check(lambda x: F.avg_pool2d(x, 2, 1, ceil_mode=True), [torch.randn(1, 2, 5, 5)], device, dtype)
    assert fallbacks() == {}


def test_avg_pool2d_errors(device):
    assert_same_error(lambda x: F.avg_pool2d(x, 2, divisor_override=0), [torch.randn(1, 1, 4, 4)], device)
    assert_same_error(lambda x: F.avg_pool2d(x, 3, padding=2), [torch.randn(1, 1, 4, 4)], device)


@pytest.mark.parametrize("shape, output_size", [
    ((2, 3, 7, 5), (3, 3)), ((1, 2, 8, 8), (2, 4)), ((3, 6, 4), (4, 6)), ((2, 3, 5, 5), (1, 1)),
    ((1, 2, 5, 7), (7, 3))])
def test_adaptive_avg_pool2d(shape, output_size, device, fallbacks):
    check(lambda x: F.adaptive_avg_pool2d(x, output_size), [torch.randn(shape)], device)
    assert fallbacks() == {}


@pytest.mark.parametrize("dtype", LOW_PRECISION)
def test_adaptive_avg_pool2d_low_precision(dtype, device, fallbacks):
    check(lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [torch.randn(1, 2, 5, 7)], device, dtype)
    assert fallbacks() == {}


def test_adaptive_avg_pool2d_errors(device):
    assert_same_error(lambda x: F.adaptive_avg_pool2d(x, (2, 2)), [torch.randn(4, 4)], device)
    assert_same_error(lambda x: F.adaptive_avg_pool2d(x, (2, 2)), [torch.randn(1, 0, 4)], device)


# --- dropout -------------------------------------------------------------------------------


def test_native_dropout(device, fallbacks):
    x = torch.randn(64, 64, device=device, requires_grad=True)
    torch_mimic.manual_seed(7)
    output, mask = torch.native_dropout(x, 0.25, True)
    assert mask.dtype == torch.bool
    kept = mask.float().mean().item()
    assert 0.7 < kept < 0.8
    torch.testing.assert_close(output.cpu(), (x * mask / 0.75).detach().cpu())
    grad = torch.randn(64, 64)
    output.backward(grad.to(device))
    torch.testing.assert_close(x.grad.cpu(), grad * mask.cpu() / 0.75)
    # The same seed gives the same mask.
    torch_mimic.manual_seed(7)
    assert torch.equal(torch.native_dropout(x.detach(), 0.25, True)[1].cpu(), mask.cpu())
    assert fallbacks() == {}


def test_native_dropout_edge_cases(device, fallbacks):
    x = torch.randn(5, 6, device=device)
    output, mask = torch.native_dropout(x, 0.5, False)
    assert mask.dtype == torch.bool and bool(mask.all()) and torch.equal(output.cpu(), x.cpu())
    output, mask = torch.native_dropout(x, 0.0, True)
    assert bool(mask.all()) and torch.equal(output.cpu(), x.cpu())
    output, mask = torch.native_dropout(x, 1.0, True)
    assert not bool(mask.any()) and not bool(output.cpu().any())
    half = torch.randn(8, device=device).half()
    assert torch.native_dropout(half, 0.5, True)[0].dtype == torch.float16
    assert fallbacks() == {}
