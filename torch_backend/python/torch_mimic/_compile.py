"""``torch_mimic.compile``: forward and backward graphs captured by functorch's AOT autograd
(PyTorch 1.13 has no Dynamo), lowered to fused mimic kernels by _compile_lower.

AOT autograd has no guards: a compiled function replays its first trace for any input. So each
guard key (shapes, strides, dtypes, requires_grad and devices of the inputs and parameters,
``model.training``, grad mode) gets its own ``aot_module`` capture; past the recompile limit
new keys run eager, with one warning. Tracing runs the model on real tensors (fake tensors do not
work on the device), which draws random numbers: mimic's RNG state is put back before the
compiled forward first runs, so its dropout masks are the ones eager would draw. A graph that
reads tensor values while tracing (``.item()``) or has data-dependent output shapes cannot be
replayed for other data: such guard keys run eager, with the reason in the report, after the
RNG is put back as it was before tracing. A module's buffers are explicit inputs of the traced
forward (_compile_buffers), so buffer updates (BatchNorm's running statistics in training) are
replayed and tracing leaves the buffers as they were.
"""
import importlib.util
import os
import time
import warnings

import torch

from . import _compile_lower, _random
from ._compile_buffers import BufferForward, share_buffers
from ._compile_report import CompileRecord, record

RECOMPILE_LIMIT = 8
_MODES = ("default", "no-fusion", "debug")
# The min-cut partitioner needs networkx (python3-networkx); without it functorch's default one.
PARTITIONER = ("min_cut_rematerialization" if importlib.util.find_spec("networkx") is not None
               else "default")


def _aot():
    """functorch.compile, imported at the first capture: it adds most of a second to import."""
    from functorch import compile as aot

    return aot


def _tensor_key(t):
    return (tuple(t.shape), t.stride(), t.dtype, t.device, t.requires_grad)


def _key_of(value):
    if isinstance(value, torch.Tensor):
        return _tensor_key(value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(_key_of(v) for v in value)
    if isinstance(value, dict):
        return tuple((k, _key_of(v)) for k, v in value.items())
    return (type(value).__name__, value)


def _device_index(args):
    for value in torch.utils._pytree.tree_flatten(args)[0]:
        if isinstance(value, torch.Tensor) and value.device.type not in ("cpu", "meta"):
            return value.device.index or 0
    return None


def _min_cut_partition(joint_module, joint_inputs):
    """functorch's min-cut partition, or its default one for the joint graphs on which 1.13's
    min-cut emits a backward graph that does not compile (an "Invalid Node" among its outputs,
    e.g. for sgn(pow(a, b)) with a tensor exponent)."""
    aot = _aot()
    try:
        return aot.min_cut_rematerialization_partition(joint_module, joint_inputs)
    except SyntaxError:
        return aot.default_partition(joint_module, joint_inputs)


class _Refused(Exception):
    """A captured graph that must not be replayed (data-dependent output shapes)."""


def _traced_data(error):
    # make_fx's error for .item() and other reads of a tensor's values while tracing.
    return isinstance(error, RuntimeError) and "get value out of a tracing tensor" in str(error)


class _Compiled:
    """The callable ``compile`` returns: a guard cache over AOT captures of the model."""

    def __init__(self, target, mode):
        self._target = target
        self._module = target if isinstance(target, torch.nn.Module) else None
        self._mode = mode
        self._cache = {}
        self._warned = False
        self._record = CompileRecord(getattr(target, "__name__", type(target).__name__), mode,
                                     PARTITIONER)
        record(self._record)

    def _key(self, args, kwargs):
        state = (torch.is_grad_enabled(),)
        if self._module is not None:
            state += (self._module.training,)
            state += tuple(_tensor_key(p) for p in self._module.parameters())
            state += tuple(_tensor_key(b) for b in self._module.buffers())
        return state + _key_of(args) + _key_of(kwargs)

    def __call__(self, *args, **kwargs):
        key = self._key(args, kwargs)
        compiled = self._cache.get(key)
        if compiled is not None:
            return compiled(*args, **kwargs)
        if len(self._cache) >= RECOMPILE_LIMIT:
            self._record.eager_calls += 1
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"torch_mimic.compile: {self._record.name} met more than {RECOMPILE_LIMIT} "
                    "guard keys (shapes, strides, dtypes, requires_grad, devices, training, grad "
                    "mode); new keys run eager from now on")
            return self._target(*args, **kwargs)
        return self._compile(key, args, kwargs)

    def _compile(self, key, args, kwargs):
        started = time.perf_counter()
        device = _device_index(args)
        rng = _random.get_rng_state(device) if device is not None else None
        forward = BufferForward(self._module) if self._module is not None else None

        def restore():
            if rng is not None:
                _random.set_rng_state(rng, device)

        graph = self._record.new_graph(key, recompile=bool(self._cache))

        aot = _aot()

        def compiler(kind):
            def compile_graph(graph_module, example_inputs):
                if kind == "forward":
                    restore()
                    reason = _compile_lower.data_dependent(graph_module)
                    if reason is None and forward is not None:
                        reason = share_buffers(graph_module, example_inputs, forward)
                    if reason is not None:
                        raise _Refused(reason)
                built = time.perf_counter()
                nodes = sum(1 for n in graph_module.graph.nodes if n.op == "call_function")
                kernels = _compile_lower.lower(graph_module, fuse=self._mode != "no-fusion")
                graph.add(kind, nodes, kernels, _compile_lower.eager_nodes(graph_module),
                          time.perf_counter() - built)
                if self._mode == "debug" or os.environ.get("MIMIC_COMPILE_DEBUG") == "1":
                    print(graph.describe(kind))
                return _compile_lower.boxed(graph_module)
            return compile_graph

        partition = (_min_cut_partition if PARTITIONER == "min_cut_rematerialization"
                     else aot.default_partition)
        options = dict(fw_compiler=compiler("forward"), bw_compiler=compiler("backward"),
                       partition_fn=partition)
        if forward is not None:
            traced = aot.aot_function(forward, **options)

            def compiled(*args, **kwargs):
                parameters, buffers = forward.state()
                out, values = traced(parameters, buffers, *args, **kwargs)
                forward.write_back(buffers, values)
                return out
        else:
            compiled = aot.aot_function(self._target, **options)
        try:
            result = compiled(*args, **kwargs)
        except (_Refused, RuntimeError) as error:
            if isinstance(error, RuntimeError) and not _traced_data(error):
                raise
            restore()
            graph.eager_reason = str(error).splitlines()[0]
            self._cache[key] = self._target
            return self._target(*args, **kwargs)
        self._cache[key] = compiled
        graph.first_call_seconds = time.perf_counter() - started
        return result


def compile(model_or_fn, *, mode="default", dynamic=False):
    """A callable that runs and trains like ``model_or_fn`` through fused mimic kernels; for a
    torch.optim.Optimizer, the same optimizer with a fused multi-tensor step
    (_compile_optimizer).

    mode: "default" fuses pointwise trees; "no-fusion" runs every captured node as its eager op;
    "debug" (or MIMIC_COMPILE_DEBUG=1 in the environment) also prints each kernel's program
    beside its FX nodes. ``dynamic=True`` (symbolic
    shapes) is not built yet: every new shape is a new guard key and a recompile."""
    if mode not in _MODES:
        raise ValueError(f"torch_mimic.compile: mode must be one of {_MODES}, not {mode!r}")
    if isinstance(model_or_fn, torch.optim.Optimizer):
        from ._compile_optimizer import compile_optimizer

        return compile_optimizer(model_or_fn, mode)
    if dynamic:
        raise NotImplementedError("torch_mimic.compile: dynamic=True is not supported yet; "
                                  "each new shape recompiles (dynamic=False)")
    compiled = _Compiled(model_or_fn, mode)
    if isinstance(model_or_fn, torch.nn.Module):
        # Keep the module interface (train()/eval(), parameters()) pointing at the original.
        return _CompiledModule(model_or_fn, compiled)
    return compiled


class _CompiledModule(torch.nn.Module):
    def __init__(self, module, compiled):
        super().__init__()
        self.orig_module = module
        self._compiled = compiled

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    def train(self, mode=True):
        self.orig_module.train(mode)
        return super().train(mode)
