#!/usr/bin/python3
"""OpInfo conformance of the mimic device: PyTorch's own op database, run on the CPU and on the
device, with outputs and input gradients compared.

For every op of ``torch.testing._internal.common_methods_invocations.op_db`` and every requested
dtype the op supports on the CPU, each sample input runs on the CPU (the reference) and on the
device. Outputs are compared with ``torch.testing.assert_close`` (the OpInfo's tolerance
overrides for the dtype where it has any, else the dtype's defaults). Where the op supports
autograd for the dtype, the gradients of the inputs are compared too: both sides back-propagate
the same random cotangent (fixed seed) through the floating outputs. Each (op, dtype) is recorded
as:

- ``pass``: every sample that ran matched;
- ``fail``: a sample raised on the device or did not match (the first error, on one line);
- ``skip``: not comparable: dtype not supported on CPU, no samples, the CPU reference itself
  fails, ``random`` (the outputs depend on the RNG, which differs between CPU and device), or
  the OpInfo says the output is not comparable (uninitialised memory: empty & co.);
- ``crash`` / ``timeout``: the worker process died, or exceeded ``--timeout`` on that op.

Every sample that ran on the device also counts as ``native`` or ``fallback``: whether any op of
it went through the CPU fallback (``torch_mimic.fallback_report()``), and which ones did.

Ops run in worker processes (``--jobs``), so a crash or a hang costs one op and a fresh worker,
never the run. The pass rate is pass / (pass + fail + crash + timeout): skips do not count.

Usage (PYTHONPATH must hold the build's python directory and tests/conformance)::

    export PYTHONPATH=/work/main/build/python:/work/main/tests/conformance
    # a few ops
    /usr/bin/python3 tests/conformance/opinfo_conformance.py --ops '^(add|mm|softmax)$'
    # the full run over op_db in float32: 621 ops, about 50 s with --jobs 2 on 2 cores
    /usr/bin/python3 tests/conformance/opinfo_conformance.py --jobs 2 \\
        --report conformance_float32.json --markdown conformance_float32.md

``--ops`` is a regular expression searched in the op's full name (``name`` or
``name.variant``, e.g. ``div.floor_rounding``).
"""
import argparse
import collections
import itertools
import json
import multiprocessing
import multiprocessing.connection
import os
import re
import sys
import tempfile
import time

# Fallbacks to the CPU are what this runner measures, not something to warn about.
os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402
from torch.utils._pytree import tree_flatten, tree_unflatten  # noqa: E402

STATUSES = ("pass", "fail", "skip", "crash", "timeout")
RUN_STATUSES = ("pass", "fail", "crash", "timeout")  # the denominator of the pass rate
PROBLEM_STATUSES = ("fail", "crash", "timeout")

# Seeds: the samples of an (op, dtype) and the cotangents are the same on every run.
SAMPLE_SEED = 0
COTANGENT_SEED = 1234
# A second CPU run under another seed tells RNG-dependent ops apart.
RNG_PROBE_SEED = 1

WORKER_START_TIMEOUT = 300.0  # importing torch, torch_mimic and op_db
MAX_REASON_LENGTH = 300


def parse_args(argv):
    parser = argparse.ArgumentParser(
        description="Runs PyTorch's OpInfo samples on the CPU and the mimic device and compares.")
    parser.add_argument("--ops", default=None,
                        help="regular expression searched in the op's full name (name.variant)")
    parser.add_argument("--dtypes", default="float32",
                        help="comma-separated dtypes, e.g. float32,float16,int64 (default float32)")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    parser.add_argument("--report", default=None, help="where to write the JSON report")
    parser.add_argument("--markdown", default=None, help="where to write a markdown report")
    parser.add_argument("--limit-samples", type=int, default=None,
                        help="run at most this many samples per op and dtype")
    parser.add_argument("--timeout", type=float, default=60.0,
                        help="seconds one op may take for one dtype, all samples (default 60)")
    parser.add_argument("--verbose", action="store_true",
                        help="print every result, not only the problems")
    options = parser.parse_args(argv)
    if options.jobs < 1:
        parser.error("--jobs must be at least 1")
    options.dtype_names = [name.strip() for name in options.dtypes.split(",") if name.strip()]
    for name in options.dtype_names:
        if not isinstance(getattr(torch, name, None), torch.dtype):
            parser.error(f"unknown dtype {name!r}")
    return options


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
        self._compare(normalise_output(device_output), normalise_output(cpu_output), "forward")

        if self.with_grad:
            fallbacks.update(self._check_gradients(sample, cpu_values, cpu_output,
                                                   device_values, device_output))
        return dict(fallbacks)

    def _call(self, values, seed):
        sample_input, args, kwargs = values
        with self.freeze_rng_state():
            torch.manual_seed(seed)
            return self.op(sample_input, *args, **kwargs)

    def _compare(self, actual, expected, stage):
        try:
            torch.testing.assert_close(actual, expected, atol=self.atol, rtol=self.rtol,
                                       equal_nan=True)
        except (AssertionError, TypeError, ValueError, RuntimeError) as error:
            raise SampleFailed(f"{stage}: {describe_error(error)}") from None

    def _check_rng_independence(self, probe_values, cpu_output):
        """Runs the CPU reference again under another seed: a different result means that the
        output depends on the RNG."""
        try:
            again = self._call(probe_values, RNG_PROBE_SEED)
            torch.testing.assert_close(normalise_output(again), normalise_output(cpu_output),
                                       atol=0, rtol=0, equal_nan=True)
        except (AssertionError, TypeError, ValueError, RuntimeError):
            raise RandomOutput() from None

    def _check_gradients(self, sample, cpu_values, cpu_output, device_values, device_output):
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
                      [grad.detach() for grad in cpu_grads], "gradient")
        return fallbacks


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


def worker_main(connection, log_path, limit_samples):
    """A worker process: checks the (op index, dtype name) tasks it receives until None.

    Its stdout and stderr go to ``log_path``, emptied before each task, so that after a crash
    the log holds the crashing op's last words.
    """
    # O_APPEND: after the log is emptied, writes start again at its beginning.
    log_fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)

    import warnings
    warnings.simplefilter("ignore")
    import torch_mimic

    # The workers share the cores with the simulator's threads: no intra-op CPU parallelism.
    torch.set_num_threads(1)
    op_db = load_op_db()
    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    connection.send(("ready", device.type))

    while True:
        task = connection.recv()
        if task is None:
            return
        index, dtype_name = task
        sys.stdout.flush()
        sys.stderr.flush()
        os.ftruncate(log_fd, 0)
        started = time.monotonic()
        try:
            result = check_op(op_db[index], getattr(torch, dtype_name), device, limit_samples)
        except Exception as error:  # a bug of the runner's own must not lose the op
            result = empty_result("fail", f"runner error: {describe_error(error)}")
        result["seconds"] = round(time.monotonic() - started, 3)
        connection.send(("result", result))


# ------------------------------------------------------------------------------------------
# Main side: the worker pool.
# ------------------------------------------------------------------------------------------

class Worker:
    """One worker process, its pipe, its log and the task it runs."""

    def __init__(self, context, log_path, limit_samples):
        self.log_path = log_path
        self.connection, child_connection = context.Pipe()
        self.process = context.Process(target=worker_main, daemon=True,
                                       args=(child_connection, log_path, limit_samples))
        self.process.start()
        child_connection.close()
        self.device_type = None  # set by the worker's "ready" message
        self.task = None
        self.timeout = None
        # Until then, the start-up deadline; then the running task's; None while idle.
        self.deadline = time.monotonic() + WORKER_START_TIMEOUT

    @property
    def ready(self):
        return self.device_type is not None

    def assign(self, task, timeout):
        self.task = task
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout
        self.connection.send(task)

    def collect(self, on_result):
        """Takes the worker's messages. Returns None while the worker is fine, else why it is
        lost: "crash" or "timeout" and a reason."""
        try:
            while self.connection.poll():
                kind, payload = self.connection.recv()
                if kind == "ready":
                    self.device_type = payload
                else:
                    on_result(self.task, payload)
                    self.task = None
                self.deadline = None
        except (EOFError, OSError):
            pass  # the worker died, maybe in the middle of a message: handled below
        if not self.process.is_alive():
            self.process.join()
            if not self.ready:
                raise SystemExit(f"a worker died while starting (exit code "
                                 f"{self.process.exitcode}): {self.last_words()}")
            return "crash", self._with_last_words(f"worker died (exit code "
                                                  f"{self.process.exitcode})")
        if self.deadline is not None and time.monotonic() > self.deadline:
            if not self.ready:
                raise SystemExit(f"a worker did not start in {WORKER_START_TIMEOUT:g} s: "
                                 f"{self.last_words()}")
            return "timeout", self._with_last_words(f"no result in {self.timeout:g} s")
        return None

    def _with_last_words(self, reason):
        """The reason, and the sample the worker was at (the last line of its log)."""
        last_words = self.last_words()
        return f"{reason}: {last_words}" if last_words else reason

    def last_words(self):
        """The last non-empty line of the worker's log."""
        try:
            with open(self.log_path, errors="replace") as log:
                lines = [line.strip() for line in log if line.strip()]
        except OSError:
            return ""
        return lines[-1] if lines else ""

    def stop(self):
        if self.process.is_alive():
            try:
                self.connection.send(None)
                self.process.join(10)
            except OSError:
                pass
        self.kill()

    def kill(self):
        if self.process.is_alive():
            self.process.kill()
        self.process.join()
        self.connection.close()


def run_tasks(tasks, options, on_result):
    """Runs (op index, dtype name) tasks on ``options.jobs`` workers and calls
    on_result(task, result) as they finish. A worker that dies or overruns its deadline costs
    its task (recorded as crash or timeout) and is replaced. Returns the device type."""
    with tempfile.TemporaryDirectory(prefix="opinfo_conformance_") as log_dir:
        return _run_tasks_logging_to(log_dir, tasks, options, on_result)


def _run_tasks_logging_to(log_dir, tasks, options, on_result):
    context = multiprocessing.get_context("spawn")
    spawned = itertools.count()

    def new_worker():
        return Worker(context, os.path.join(log_dir, f"worker{next(spawned)}.log"),
                      options.limit_samples)

    pending = collections.deque(tasks)
    workers = [new_worker() for _ in range(min(options.jobs, len(tasks)))]
    device_type = None
    try:
        while pending or any(worker.task for worker in workers):
            for worker in workers:
                if worker.ready and worker.task is None and pending:
                    worker.assign(pending.popleft(), options.timeout)
            deadlines = [worker.deadline for worker in workers if worker.deadline is not None]
            wait_for = max(0.0, min(deadlines) - time.monotonic()) + 0.1 if deadlines else None
            multiprocessing.connection.wait(
                [worker.connection for worker in workers]
                + [worker.process.sentinel for worker in workers], timeout=wait_for)

            survivors = []
            for worker in workers:
                lost = worker.collect(on_result)
                device_type = device_type or worker.device_type
                if lost is None:
                    survivors.append(worker)
                    continue
                status, reason = lost
                if worker.task is not None:
                    on_result(worker.task, empty_result(status, one_line(reason)))
                worker.kill()
                if pending:
                    survivors.append(new_worker())
            workers = survivors
    finally:
        for worker in workers:
            worker.stop()
    return device_type


# ------------------------------------------------------------------------------------------
# Reports.
# ------------------------------------------------------------------------------------------

def tally(results):
    counts = {status: 0 for status in STATUSES}
    samples = {"pass": 0, "fail": 0, "skip": 0, "native": 0, "fallback": 0}
    for result in results:
        counts[result["status"]] += 1
        for key in ("pass", "fail", "skip"):
            samples[key] += result["samples"][key]
        samples["native"] += result["native"]
        samples["fallback"] += result["fallback"]
    run = sum(counts[status] for status in RUN_STATUSES)
    counts["pass_rate"] = counts["pass"] / run if run else None
    counts["samples"] = samples
    return counts


def failure_category(result):
    """A short label that groups failures with the same cause."""
    if result["status"] in ("crash", "timeout"):
        return result["status"]
    match = re.match(r"sample \d+, ([^:]+): (.*)", result["reason"])
    if not match:
        return result["reason"][:70]
    stage, detail = match.groups()
    if "not close" in detail or "are not equal" in detail:
        return f"{stage}: values differ"
    # Numbers (sizes, counts, indices) vary between ops that fail for the same reason.
    return f"{stage}: {re.sub(r'[0-9]+', 'N', detail)[:70]}"


def categories(results):
    return collections.Counter(failure_category(result) for result in results
                               if result["status"] in PROBLEM_STATUSES).most_common()


def format_rate(rate):
    return "-" if rate is None else f"{100.0 * rate:.1f}%"


def summary_table(report):
    header = ["dtype", "ops", "pass", "fail", "skip", "crash", "timeout", "pass rate",
              "samples pass/run", "samples native/fallback"]
    rows = []
    for label, counts in list(report["per_dtype"].items()) + [("total", report["totals"])]:
        samples = counts["samples"]
        rows.append([label, sum(counts[status] for status in STATUSES)]
                    + [counts[status] for status in STATUSES]
                    + [format_rate(counts["pass_rate"]),
                       f"{samples['pass']}/{samples['pass'] + samples['fail']}",
                       f"{samples['native']}/{samples['fallback']}"])
    return header, rows


def skip_reasons(results):
    """Skip reasons without their details (the CPU's error messages), with counts."""
    return collections.Counter(result["reason"].split(":")[0].split(",")[-1].strip()
                               for result in results
                               if result["status"] == "skip").most_common()


def print_summary(report):
    results = report["results"]
    header, rows = summary_table(report)
    widths = [max(len(str(row[column])) for row in [header] + rows)
              for column in range(len(header))]
    print(f"\nOpInfo conformance on {report['device']}: {len(results)} (op, dtype) in "
          f"{report['seconds']:.0f} s with --jobs {report['options']['jobs']}")
    for row in [header] + rows:
        print("  ".join(str(cell).rjust(width) for cell, width in zip(row, widths)))
    problems = [result for result in results if result["status"] in PROBLEM_STATUSES]
    if problems:
        print("\nFailure categories:")
        for label, count in categories(results):
            print(f"  {count:4d}  {label}")
        print("\nFailing ops:")
        for result in problems:
            print(f"  {result['op']} [{result['dtype']}] {result['status']}: {result['reason']}")
    reasons = skip_reasons(results)
    if reasons:
        print("\nSkip reasons: " + ", ".join(f"{reason} ({count})" for reason, count in reasons))


def markdown_report(report):
    def table(header, rows):
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(str(cell).replace("|", "\\|") for cell in row) + " |"
                  for row in rows]
        return lines

    results = report["results"]
    lines = [f"# OpInfo conformance on {report['device']}", "",
             f"PyTorch {report['torch_version']}, dtypes {', '.join(report['dtypes'])}: "
             f"{len(results)} (op, dtype) in {report['seconds']:.0f} s with "
             f"--jobs {report['options']['jobs']}. "
             "Pass rate = pass / (pass + fail + crash + timeout).", ""]
    lines += table(*summary_table(report))
    problems = [result for result in results if result["status"] in PROBLEM_STATUSES]
    if problems:
        lines += ["", "## Failure categories", ""]
        lines += table(["ops", "category"], [[count, label]
                                             for label, count in categories(results)])
        lines += ["", "## Failing ops", ""]
        lines += table(["op", "dtype", "status", "reason"],
                       [[r["op"], r["dtype"], r["status"], r["reason"]] for r in problems])
    fallback_ops = collections.Counter()
    for result in results:
        fallback_ops.update(result["fallback_ops"])
    if fallback_ops:
        lines += ["", "## Ops that fell back to the CPU in passing samples", ""]
        lines += table(["op", "calls"], fallback_ops.most_common())
    skips = [result for result in results if result["status"] == "skip"]
    if skips:
        lines += ["", "## Skipped", ""]
        lines += table(["op", "dtype", "reason"],
                       [[r["op"], r["dtype"], r["reason"]] for r in skips])
    return "\n".join(lines) + "\n"


def main(argv=None):
    options = parse_args(sys.argv[1:] if argv is None else argv)
    op_db = load_op_db()
    pattern = re.compile(options.ops) if options.ops else None
    names = {index: full_name(op) for index, op in enumerate(op_db)
             if pattern is None or pattern.search(full_name(op))}
    if not names:
        raise SystemExit(f"no op of op_db matches {options.ops!r}")
    tasks = [(index, dtype_name) for index in names for dtype_name in options.dtype_names]

    results = {}
    started = time.monotonic()

    def on_result(task, result):
        index, dtype_name = task
        results[task] = result = {"op": names[index], "dtype": dtype_name, **result}
        if options.verbose or result["status"] in PROBLEM_STATUSES:
            reason = f": {result['reason']}" if result["reason"] else ""
            print(f"[{len(results)}/{len(tasks)}] {result['op']} [{dtype_name}] "
                  f"{result['status']}{reason}", flush=True)
        elif len(results) % 50 == 0:
            print(f"[{len(results)}/{len(tasks)}] ...", flush=True)

    device_type = run_tasks(tasks, options, on_result)
    ordered = [results[task] for task in tasks]
    report = {
        "torch_version": torch.__version__,
        "device": device_type,
        "dtypes": options.dtype_names,
        "options": {"ops": options.ops, "jobs": options.jobs, "timeout": options.timeout,
                    "limit_samples": options.limit_samples},
        "seconds": round(time.monotonic() - started, 1),
        "totals": tally(ordered),
        "per_dtype": {name: tally([r for r in ordered if r["dtype"] == name])
                      for name in options.dtype_names},
        "results": ordered,
    }
    print_summary(report)
    if options.report:
        with open(options.report, "w") as file:
            json.dump(report, file, indent=1)
    if options.markdown:
        with open(options.markdown, "w") as file:
            file.write(markdown_report(report))
    return report


if __name__ == "__main__":
    main()
