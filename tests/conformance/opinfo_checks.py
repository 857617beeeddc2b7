"""Checking one op of PyTorch's OpInfo database on the device against the CPU: loading op_db,
running each sample on both devices, comparing outputs and input gradients, and classifying what
cannot be compared. opinfo_conformance.py runs this in worker processes and reports.

The comparison rule, the same for every dtype and op:

1. Each output tensor is compared with the CPU's by assert_close with the OpInfo's tolerances
   for the sample's dtype (``tolerances``), and at least assert_close's defaults for the
   tensor's own dtype: a float32 result of integer inputs is judged as float32 (exactly only
   where the result is an integer or bool tensor).
2. Where that fails, the CPU is not taken as the truth: the op runs again on the CPU with the
   sample's floating tensors one step wider (float16, bfloat16, float32 to float64; complex64 to
   complex128), and the sample passes if the device's result is at least as accurate as the
   CPU's against that reference, within the dtype's bound (``within_reference_bound``). The
   device computes half types in float32 and rounds once where the CPU may round every step,
   so the device can be the more accurate one; a result farther from the reference than the
   CPU's (beyond the tolerance) still fails, as does any integer or bool difference.
"""
import collections
import itertools
import sys

import torch
from torch.utils._pytree import tree_flatten, tree_unflatten

# Seeds: the samples of an (op, dtype) and the cotangents are the same on every run.
SAMPLE_SEED = 0
COTANGENT_SEED = 1234
# A second CPU run under another seed tells RNG-dependent ops apart.
RNG_PROBE_SEED = 1

MAX_REASON_LENGTH = 300

def load_op_db():
    """PyTorch's op database. common_utils parses sys.argv when imported: it must not see ours."""
    saved_argv = sys.argv
    sys.argv = saved_argv[:1]
    try:
        from torch.testing._internal.common_methods_invocations import op_db
    finally:
        sys.argv = saved_argv
    return op_db


def full_name(op):
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def one_line(text):
    """A message on one line, short enough for a table."""
    joined = " | ".join(line.strip() for line in str(text).splitlines() if line.strip())
    return joined if len(joined) <= MAX_REASON_LENGTH else joined[:MAX_REASON_LENGTH - 3] + "..."


def describe_error(error):
    return one_line(f"{type(error).__name__}: {error}")


def describe_sample(sample):
    """A short description of a sample: its tensors' shapes and dtypes, its other arguments."""
    def describe(value):
        if isinstance(value, torch.Tensor):
            return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)}"
        return repr(value)

    leaves, _ = tree_flatten([sample.input, sample.args, sample.kwargs])
    return one_line(", ".join(describe(leaf) for leaf in leaves))[:150]


def empty_result(status="skip", reason=""):
    return {"status": status, "reason": reason, "samples": {"pass": 0, "fail": 0, "skip": 0},
            "native": 0, "fallback": 0, "fallback_ops": {}}


# ------------------------------------------------------------------------------------------
# Worker side: checking one op for one dtype.
# ------------------------------------------------------------------------------------------

class SampleSkipped(Exception):
    """The sample cannot be compared: the CPU reference fails on it."""


class SampleFailed(Exception):
    """The device fails on the sample or disagrees with the CPU."""


class RandomOutput(Exception):
    """The op's output depends on the RNG, so the CPU and the device cannot agree."""


def uses_rng(op):
    """Whether the OpInfo says its outputs depend on the RNG.

    Newer PyTorch has ``nondeterministic_seeded``; 1.13 wraps such ops in ``wrapper_set_seed``
    (which seeds the CPU generator only), in ``op`` or in ``gradcheck_wrapper``.
    """
    if getattr(op, "nondeterministic_seeded", False):
        return True
    for function in (op.op, op.gradcheck_wrapper):
        if getattr(function, "__name__", "") == "wrapper_set_seed":
            return True
        code = getattr(function, "__code__", None)
        if code is not None and "wrapper_set_seed" in code.co_names:
            return True
    return False


def not_comparable_reason(op):
    """The OpInfo's own skip reason where it says the output is not comparable (empty & co.)."""
    from torch.testing._internal.opinfo.core import DecorateInfo

    for info in op.decorators:
        if not isinstance(info, DecorateInfo):
            continue
        for decorator in info.decorators:
            # unittest.skip(reason) marks what it decorates with the reason: probe it on a
            # throwaway function to read the reason.
            try:
                probe = decorator(lambda: None)
            except Exception:
                continue
            reason = getattr(probe, "__unittest_skip_why__", "")
            if isinstance(reason, str) and "not comparable" in reason:
                return reason
    return None


def tolerances(op, dtype):
    """(atol, rtol) for comparing the op's results of ``dtype``.

    The larger of assert_close's defaults for the dtype and any toleranceOverride or
    precisionOverride the OpInfo declares for the dtype (for any test or device type): the
    overrides exist where the op's results legitimately vary between implementations, which is
    what a comparison of the CPU with another device sees.
    """
    from torch.testing._comparison import default_tolerances
    from torch.testing._internal.common_device_type import precisionOverride, toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    rtol, atol = default_tolerances(dtype)
    for info in op.decorators:
        if not isinstance(info, DecorateInfo) or not info.active_if:
            continue
        if info.dtypes is not None and dtype not in info.dtypes:
            continue
        for decorator in info.decorators:
            if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype].atol)
                rtol = max(rtol, decorator.d[dtype].rtol)
            elif isinstance(decorator, precisionOverride) and dtype in decorator.d:
                atol = max(atol, decorator.d[dtype])
    return atol, rtol


# The float64 reference: each floating dtype computed one step wider.
WIDE_DTYPES = {torch.float16: torch.float64, torch.bfloat16: torch.float64,
               torch.float32: torch.float64, torch.complex64: torch.complex128}


def leaf_tolerances(tensor, atol, rtol):
    """(atol, rtol) for one compared tensor: the op's tolerances for the sample's dtype, and at
    least assert_close's defaults for the tensor's own dtype. An op of integer inputs with a
    float32 result (cos of int64) is judged as float32, as assert_close judges float32."""
    from torch.testing._comparison import default_tolerances

    own_rtol, own_atol = default_tolerances(tensor.dtype)
    return max(atol, own_atol), max(rtol, own_rtol)


def compare_leaves(actual, expected, atol, rtol):
    """assert_close of two normalised outputs, each tensor with its leaf_tolerances; raises
    AssertionError (or the error assert_close raises on a structure mismatch)."""
    actual_leaves, actual_spec = tree_flatten(actual)
    expected_leaves, expected_spec = tree_flatten(expected)
    if actual_spec != expected_spec:
        torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, equal_nan=True)
        return
    for actual_leaf, expected_leaf in zip(actual_leaves, expected_leaves):
        if isinstance(expected_leaf, torch.Tensor):
            leaf_atol, leaf_rtol = leaf_tolerances(expected_leaf, atol, rtol)
        else:
            leaf_atol, leaf_rtol = atol, rtol
        torch.testing.assert_close(actual_leaf, expected_leaf, atol=leaf_atol, rtol=leaf_rtol,
                                   equal_nan=True)


def within_reference_bound(actual, expected, wide, atol, rtol):
    """Whether the device's output ``actual`` is as accurate as the CPU's ``expected``, measured
    against the float64 reference ``wide``, where they differ from each other.

    Floating tensors: every element of the device's result is NaN where the CPU's or the
    reference is, equals the CPU's value or the reference rounded to the result's dtype, or
    |device - reference| <= |CPU - reference| + atol + rtol |reference| (the CPU's own error plus
    the dtype's bound). Everything else (integer and bool results, shapes, dtypes) must match the
    CPU's exactly as compare_leaves has it."""
    actual_leaves, spec = tree_flatten(actual)
    expected_leaves, expected_spec = tree_flatten(expected)
    wide_leaves, wide_spec = tree_flatten(wide)
    if not spec == expected_spec == wide_spec:
        return False
    for device, cpu, reference in zip(actual_leaves, expected_leaves, wide_leaves):
        if not isinstance(cpu, torch.Tensor) or not (cpu.is_floating_point() or cpu.is_complex()):
            try:
                compare_leaves(device, cpu, atol, rtol)
            except (AssertionError, TypeError, ValueError, RuntimeError):
                return False
            continue
        if not isinstance(device, torch.Tensor) or not isinstance(reference, torch.Tensor) or \
                device.dtype != cpu.dtype or device.shape != cpu.shape or \
                reference.shape != cpu.shape:
            return False
        leaf_atol, leaf_rtol = leaf_tolerances(cpu, atol, rtol)
        wide_dtype = torch.complex128 if cpu.is_complex() else torch.float64
        device_wide, cpu_wide = device.to(wide_dtype), cpu.to(wide_dtype)
        reference = reference.to(wide_dtype)
        rounded = reference.to(cpu.dtype).to(wide_dtype)
        nan = device_wide.isnan()
        ok = torch.where(nan, cpu_wide.isnan() | reference.isnan(),
                         (device_wide == cpu_wide) | (device_wide == rounded) |
                         ((device_wide - reference).abs() <=
                          (cpu_wide - reference).abs() + leaf_atol +
                          leaf_rtol * reference.abs()))
        if not bool(ok.all()):
            return False
    return True


def widen_values(values, dtype):
    """(input, args, kwargs) with every tensor of ``dtype`` (and every dtype argument equal to
    it) one step wider (WIDE_DTYPES), detached copies keeping requires_grad; None where the
    dtype has no wider one."""
    wide_dtype = WIDE_DTYPES.get(dtype)
    if wide_dtype is None:
        return None
    leaves, spec = tree_flatten(list(values))
    widened = []
    for value in leaves:
        if isinstance(value, torch.Tensor):
            target = wide_dtype if value.dtype == dtype else value.dtype
            value = value.detach().to(target, copy=True).requires_grad_(value.requires_grad)
        elif isinstance(value, torch.dtype) and value == dtype:
            value = wide_dtype
        widened.append(value)
    return tuple(tree_unflatten(widened, spec))


def cpu_resident_leaves(op, dtype, with_grad, samples):
    """For each sample, the leaf positions (of its flattened input, args and kwargs) of the
    tensors its sample function puts on the CPU whatever the device, such as tensor_split's
    indices: they stay on the CPU, as in PyTorch's own device tests.

    Found by generating the samples again for the meta device. Where that fails or gives other
    samples, the positions are empty: every tensor moves to the device.
    """
    nothing = [frozenset()] * len(samples)
    torch.manual_seed(SAMPLE_SEED)
    try:
        meta_samples = list(itertools.islice(
            op.sample_inputs("meta", dtype, requires_grad=with_grad), len(samples)))
    except Exception:
        return nothing
    if len(meta_samples) != len(samples):
        return nothing
    positions = []
    for sample, meta_sample in zip(samples, meta_samples):
        leaves, _ = tree_flatten([sample.input, sample.args, sample.kwargs])
        meta_leaves, _ = tree_flatten([meta_sample.input, meta_sample.args, meta_sample.kwargs])
        if len(leaves) != len(meta_leaves):
            return nothing
        positions.append(frozenset(
            position for position, leaf in enumerate(meta_leaves)
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "cpu"))
    return positions


def copy_sample_values(sample, device, keep_on_cpu=frozenset()):
    """(input, args, kwargs) of ``sample`` copied to ``device``, and whether any of them refers
    to the device. Tensors keep requires_grad and become leaves, the ones at the leaf positions
    ``keep_on_cpu`` copied on the CPU; a CPU device argument ("cpu" or torch.device, as factory
    functions and ``to`` take) becomes ``device``."""
    leaves, spec = tree_flatten([sample.input, sample.args, sample.kwargs])
    moved = False
    copies = []
    for position, value in enumerate(leaves):
        if isinstance(value, torch.Tensor):
            target = torch.device("cpu") if position in keep_on_cpu else device
            moved = moved or target == device
            value = value.detach().to(target, copy=True).requires_grad_(value.requires_grad)
        elif (isinstance(value, torch.device) and value.type == "cpu") or \
                (isinstance(value, str) and value == "cpu"):
            moved = True
            value = device
        copies.append(value)
    return tuple(tree_unflatten(copies, spec)), moved


def normalise_output(value):
    """An output as plain tuples/lists/dicts of detached CPU tensors, for assert_close.

    torch.return_types (structseq) are tuple subclasses that pytree does not traverse.
    """
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, tuple):
        return tuple(normalise_output(item) for item in value)
    if isinstance(value, list):
        return [normalise_output(item) for item in value]
    if isinstance(value, dict):
        return {key: normalise_output(item) for key, item in value.items()}
    return value


def tensors_of(value):
    """Every tensor in an output, in order."""
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [tensor for item in value for tensor in tensors_of(item)]
    if isinstance(value, dict):
        return [tensor for item in value.values() for tensor in tensors_of(item)]
    return []


def differentiable_positions(outputs):
    """Positions (in tensors_of order) of the outputs that gradients flow back through."""
    return [position for position, tensor in enumerate(outputs)
            if tensor.requires_grad and (tensor.is_floating_point() or tensor.is_complex())]


def input_gradients(inputs, outputs, cotangents):
    """d(sum(cotangent * output)) / d(input) for each input (zeros where it is unused)."""
    grads = torch.autograd.grad(outputs, inputs, grad_outputs=cotangents, allow_unused=True)
    return [torch.zeros_like(tensor) if grad is None else grad
            for tensor, grad in zip(inputs, grads)]


def random_cotangents(outputs):
    """Cotangents for ``outputs``, the same on every run. Drawn in double precision because the
    CPU's normal_ lacks some reduced-precision dtypes."""
    generator = torch.Generator().manual_seed(COTANGENT_SEED)
    cotangents = []
    for output in outputs:
        wide = torch.complex128 if output.is_complex() else torch.float64
        cotangents.append(torch.randn(output.shape, generator=generator, dtype=wide)
                          .to(output.dtype))
    return cotangents


class SampleChecker:
    """Runs samples of one op and dtype on the CPU and on the device and compares them."""

    def __init__(self, op, dtype, device, with_grad):
        from torch.testing._internal.common_utils import freeze_rng_state

        self.op = op
        self.dtype = dtype
        self.device = device
        self.with_grad = with_grad
        self.atol, self.rtol = tolerances(op, dtype)
        self.freeze_rng_state = freeze_rng_state

    def check(self, sample, keep_on_cpu):
        """Returns {op: calls} of the device run's CPU fallbacks ({} when it ran natively);
        raises SampleSkipped, SampleFailed or RandomOutput. ``keep_on_cpu``: see
        cpu_resident_leaves."""
        import torch_mimic

        # The copies come first: the CPU reference may modify its inputs in place.
        try:
            device_values, on_device = copy_sample_values(sample, self.device, keep_on_cpu)
        except Exception as error:
            raise SampleFailed(f"copy to the device: {describe_error(error)}") from None
        if not on_device:
            raise SampleSkipped("no tensor or device argument: the sample runs on the CPU")
        probe_values, _ = copy_sample_values(sample, torch.device("cpu"))
        cpu_values = (sample.input, sample.args, sample.kwargs)
        reference = WideReference(self, widen_values(cpu_values, self.dtype))
        try:
            cpu_output = self._call(cpu_values, SAMPLE_SEED)
        except Exception as error:
            raise SampleSkipped(f"CPU reference fails: {describe_error(error)}") from None
        self._check_rng_independence(probe_values, cpu_output)

        torch_mimic.reset_fallback_report()
        try:
            device_output = self._call(device_values, SAMPLE_SEED)
            torch_mimic.synchronize()
        except Exception as error:
            raise SampleFailed(f"forward on the device: {describe_error(error)}") from None
        fallbacks = collections.Counter(torch_mimic.fallback_report())

        misplaced = [tensor.device for tensor in tensors_of(device_output)
                     if tensor.device.type != self.device.type]
        if misplaced:
            raise SampleFailed(f"forward: an output is on {misplaced[0]}, not on the device")
        self._compare(normalise_output(device_output), normalise_output(cpu_output), "forward",
                      reference.output)

        if self.with_grad:
            fallbacks.update(self._check_gradients(sample, cpu_values, cpu_output,
                                                   device_values, device_output, reference))
        return dict(fallbacks)

    def _call(self, values, seed):
        sample_input, args, kwargs = values
        with self.freeze_rng_state():
            torch.manual_seed(seed)
            return self.op(sample_input, *args, **kwargs)

    def _compare(self, actual, expected, stage, reference=None):
        """Raises SampleFailed unless ``actual`` (the device's) matches ``expected`` (the CPU's)
        by the rule of the module docstring; ``reference`` gives the float64 reference
        (normalised like them) or None, and is called only when the direct comparison fails."""
        try:
            compare_leaves(actual, expected, self.atol, self.rtol)
        except (AssertionError, TypeError, ValueError, RuntimeError) as error:
            failure = f"{stage}: {describe_error(error)}"
        else:
            return
        wide = reference() if reference is not None else None
        if wide is None or not within_reference_bound(actual, expected, wide, self.atol,
                                                      self.rtol):
            raise SampleFailed(failure) from None

    def _check_rng_independence(self, probe_values, cpu_output):
        """Runs the CPU reference again under another seed: a different result means that the
        output depends on the RNG."""
        try:
            again = self._call(probe_values, RNG_PROBE_SEED)
            torch.testing.assert_close(normalise_output(again), normalise_output(cpu_output),
                                       atol=0, rtol=0, equal_nan=True)
        except (AssertionError, TypeError, ValueError, RuntimeError):
            raise RandomOutput() from None

    def _check_gradients(self, sample, cpu_values, cpu_output, device_values, device_output,
                         reference):
        """Back-propagates the same cotangents on both sides and compares the input gradients;
        returns {op: calls} of the backward's CPU fallbacks."""
        import torch_mimic

        cpu_leaves, _ = tree_flatten(list(cpu_values))
        device_leaves, _ = tree_flatten(list(device_values))
        pairs = [(cpu, dev) for cpu, dev in zip(cpu_leaves, device_leaves)
                 if isinstance(cpu, torch.Tensor) and cpu.requires_grad]
        cpu_outputs = tensors_of(sample.output_process_fn_grad(cpu_output))
        positions = differentiable_positions(cpu_outputs)
        if not pairs or not positions:
            return {}
        cpu_inputs = [cpu for cpu, _ in pairs]
        device_inputs = [dev for _, dev in pairs]
        try:
            cotangents = random_cotangents([cpu_outputs[position] for position in positions])
            cpu_grads = input_gradients(cpu_inputs, [cpu_outputs[p] for p in positions],
                                        cotangents)
        except Exception:
            return {}  # no CPU reference for the backward: the forward comparison stands alone

        device_outputs = tensors_of(sample.output_process_fn_grad(device_output))
        if differentiable_positions(device_outputs) != positions:
            raise SampleFailed("backward: the outputs that require grad differ from the CPU's")
        torch_mimic.reset_fallback_report()
        try:
            device_grads = input_gradients(
                device_inputs, [device_outputs[p] for p in positions],
                [cotangent.to(self.device) for cotangent in cotangents])
            torch_mimic.synchronize()
        except Exception as error:
            raise SampleFailed(f"backward on the device: {describe_error(error)}") from None
        fallbacks = torch_mimic.fallback_report()
        self._compare([grad.detach().cpu() for grad in device_grads],
                      [grad.detach() for grad in cpu_grads], "gradient",
                      lambda: reference.gradients(sample, positions, cotangents))
        return fallbacks


class WideReference:
    """The float64 reference of one sample (see within_reference_bound): the op run on the CPU
    with the sample's tensors widened (widen_values), computed only when a comparison needs it,
    once. None wherever it cannot be had (no wider dtype, the wide run fails, or its outputs
    differ in structure), and the direct comparison's failure then stands."""

    def __init__(self, checker, wide_values):
        self.checker = checker
        self.values = wide_values
        self.raw_output = None
        self.failed = wide_values is None

    def _forward(self):
        if self.raw_output is None and not self.failed:
            try:
                self.raw_output = self.checker._call(self.values, SAMPLE_SEED)
            except Exception:
                self.failed = True
        return None if self.failed else self.raw_output

    def output(self):
        raw = self._forward()
        return None if raw is None else normalise_output(raw)

    def gradients(self, sample, positions, cotangents):
        """The input gradients of the wide run for the same cotangents (widened), or None."""
        raw = self._forward()
        if raw is None:
            return None
        leaves, _ = tree_flatten(list(self.values))
        inputs = [leaf for leaf in leaves if isinstance(leaf, torch.Tensor) and leaf.requires_grad]
        try:
            outputs = tensors_of(sample.output_process_fn_grad(raw))
            if differentiable_positions(outputs) != positions:
                return None
            wide = [outputs[p] for p in positions]
            grads = input_gradients(inputs, wide, [cotangent.to(output.dtype)
                                                   for cotangent, output in zip(cotangents, wide)])
        except Exception:
            return None
        return [grad.detach() for grad in grads]


def check_op(op, dtype, device, limit_samples):
    """The result of one op for one dtype, as a dict for the report."""
    if dtype not in op.supported_dtypes("cpu"):
        return empty_result(reason="dtype not supported on CPU")
    if uses_rng(op):
        return empty_result(reason="random")
    reason = not_comparable_reason(op)
    if reason:
        return empty_result(reason=f"not comparable: {reason}")

    # Samples require grad only for the dtypes the op differentiates: integer tensors cannot.
    with_grad = op.supports_autograd and dtype in op.supported_backward_dtypes("cpu")
    torch.manual_seed(SAMPLE_SEED)
    try:
        samples = list(itertools.islice(op.sample_inputs("cpu", dtype, requires_grad=with_grad),
                                        limit_samples))
    except Exception as error:
        return empty_result(reason=f"sample inputs fail on CPU: {describe_error(error)}")
    if not samples:
        return empty_result(reason="no samples")

    result = empty_result()
    checker = SampleChecker(op, dtype, device, with_grad)
    cpu_resident = cpu_resident_leaves(op, dtype, with_grad, samples)
    first_failure = first_skip = None
    fallback_ops = collections.Counter()
    for index, (sample, keep_on_cpu) in enumerate(zip(samples, cpu_resident)):
        # The worker's log: should the sample crash the worker, the report names it.
        print(f"sample {index}: {describe_sample(sample)}", flush=True)
        try:
            fallbacks = checker.check(sample, keep_on_cpu)
        except RandomOutput:
            return empty_result(reason="random")
        except SampleSkipped as skipped:
            result["samples"]["skip"] += 1
            first_skip = first_skip or f"sample {index}, {skipped}"
            continue
        except SampleFailed as failure:
            result["samples"]["fail"] += 1
            first_failure = first_failure or f"sample {index}, {failure}"
            continue
        result["samples"]["pass"] += 1
        result["fallback" if fallbacks else "native"] += 1
        fallback_ops.update(fallbacks)

    result["fallback_ops"] = dict(fallback_ops)
    if first_failure:
        result.update(status="fail", reason=one_line(first_failure))
    elif result["samples"]["pass"]:
        result.update(status="pass")
    else:
        result.update(status="skip", reason=one_line(first_skip))
    return result
