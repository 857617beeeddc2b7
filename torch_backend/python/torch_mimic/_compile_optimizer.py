"""``torch_mimic.compile(optimizer)``: the optimiser step as a few multi-tensor kernels.

PyTorch 1.13's AOT autograd captures a model's forward and backward, not the optimiser. The
compiled step runs the optimiser's own multi-tensor implementation (``foreach=True``) and records
its ``_foreach_*`` calls lazily instead of running them: each list element's new value is an
expression over the tensors as they were (the op table's programs, composed). At the end of the
step, or before any other device op, the pending values are launched, one elementwise program
per written list over all of its tensors (torch.ops.mimic.elementwise_list). So SGD with momentum
is 2 launches (its buffers, then its parameters) and Adam 3, whatever the number of parameters;
eager runs one kernel per tensor and op (36 and about 110 for 12 parameters) or, with
``foreach=True``, one per op (3 and 8).

Every call records again, so hyperparameters are read at each step (an LR scheduler changes
nothing but kernel arguments) and no guard is needed. The programs compute the same float32
operations in the same order as the eager kernels, so results are bit-identical to eager.
Temporaries (Adam's ``sqrt(v) / bc + eps``) live only inside the programs; a temporary still
referenced when the step ends is written too. What the recorder cannot fuse (another dtype,
non-contiguous or CPU tensors, a tensor scalar, a program beyond the kernel's 8 inputs or 8
scalars, an order it cannot satisfy) runs as the eager ops it recorded, in order.

``zero_grad`` defaults to ``set_to_none=True`` (PyTorch 2's default): no kernel clears the
gradients, and the backward's gradient accumulation becomes a move instead of an add.
"""
import functools
import sys
import types

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _lower_pointwise, _op_table
from ._compile_report import record

_MAX_INPUTS = _lower_pointwise._MAX_INPUTS
_MAX_SCALARS = _lower_pointwise._MAX_SCALARS
_SCALAR_TYPES = (int, float, bool)


@functools.lru_cache(maxsize=None)
def _per_tensor_names(name):
    """The per-tensor op's operand names in schema order (its entry with the most operands):
    a foreach op's arguments map onto them by position."""
    names = ()
    for (entry_name, _), entry in _op_table.op_table().items():
        if entry_name == name and entry.kind == "pointwise" and len(entry.operands) > len(names):
            names = entry.operands
    return names


class _Pending:
    """One list element's value not yet computed: the table entry's program over operands, each
    a _Pending, a tensor (its value when the step began) or a Python number."""

    __slots__ = ("program", "operands")

    def __init__(self, program, operands):
        self.program = program
        self.operands = operands


def _fusible_tensor(t, device):
    return (isinstance(t, torch.Tensor) and t.device == device and t.dtype == torch.float32
            and t.is_contiguous() and t.numel() > 0)


class _Recorder(TorchDispatchMode):
    """Records fusible ``_foreach_*`` calls; runs everything else after launching what is
    pending."""

    def __init__(self, plan_log):
        super().__init__()
        self.pending = {}   # data_ptr -> (tensor, _Pending): its value once launched
        self.created = {}   # data_ptr of outputs the recorder allocated
        self.calls = []     # (func, args, kwargs, outputs) since the last launch, for replay
        self.plan_log = plan_log

    def __torch_dispatch__(self, func, types_, args=(), kwargs=None):
        kwargs = kwargs or {}
        recorded = self._record(func, args, kwargs)
        if recorded is not _NOT_FUSED:
            return recorded
        if self.pending and _touches_device(args, kwargs):
            self.launch()
        return func(*args, **kwargs)

    def _value(self, t):
        entry = self.pending.get(t.data_ptr())
        return entry[1] if entry is not None else t

    def _record(self, func, args, kwargs):
        op = _foreach_op(func)
        if op is None:
            return _NOT_FUSED
        name, in_place, names, schema = op
        values = list(args) + [kwargs.get(a.name, a.default_value)
                               for a in schema.arguments[len(args):]]
        lists = [v for v in values if isinstance(v, (list, tuple))]
        if not lists or not isinstance(values[0], (list, tuple)):
            return _NOT_FUSED
        count = len(values[0])
        device = values[0][0].device if count else None
        if count == 0 or device.type == "cpu" or any(len(v) != count for v in lists):
            return _NOT_FUSED
        if len(values) > len(names):
            return _NOT_FUSED
        elements, entries = [], {}
        for j in range(count):
            element = {}
            for argument_name, value in zip(names, values):
                value = value[j] if isinstance(value, (list, tuple)) else value
                if isinstance(value, torch.Tensor):
                    if not _fusible_tensor(value, device):
                        return _NOT_FUSED
                elif value is not None and type(value) not in _SCALAR_TYPES:
                    return _NOT_FUSED
                element[argument_name] = value
            # The entry depends on the scalars only (alpha, an exponent): one lookup per value.
            scalars = tuple(v for v in element.values() if not isinstance(v, torch.Tensor))
            entry = entries.get(scalars, _NOT_FUSED)
            if entry is _NOT_FUSED:
                entry = entries[scalars] = _lower_pointwise.table_entry(name, element)
            if entry is None or entry.result not in ("promoted", "promoted_float",
                                                     "first_operand"):
                return _NOT_FUSED
            if any(operand not in element or element[operand] is None
                   for operand in entry.operands):
                return _NOT_FUSED
            elements.append((entry, element))
        targets = values[0] if in_place else [torch.empty_like(t) for t in values[0]]
        if not in_place:
            for t in targets:
                self.created[t.data_ptr()] = True
        for target, (entry, element) in zip(targets, elements):
            operands = tuple(self._value(element[operand])
                             if isinstance(element[operand], torch.Tensor) else element[operand]
                             for operand in entry.operands)
            self.pending[target.data_ptr()] = (target, _Pending(entry.program, operands))
        self.calls.append((func, args, kwargs, None if in_place else targets))
        return None if in_place else targets

    def launch(self):
        """Computes every pending value that is still needed, then forgets the record."""
        pending, created, calls = self.pending, self.created, self.calls
        self.pending, self.created, self.calls = {}, {}, []
        held = _held_references(calls)
        needed = {key: value for key, value in pending.items()
                  if key not in created or _referenced_elsewhere(value[0], 1 + held.get(key, 0))}
        if not needed:
            return
        plan = _plan(needed)
        if plan is None:
            self.plan_log.eager_replays += 1
            _replay(calls)
            return
        for program, scalars, outs, inputs in plan:
            torch.ops.mimic.elementwise_list(outs, [t for row in inputs for t in row],
                                             len(inputs[0]), program, torch.float32, scalars)
        self.plan_log.note(plan)


_NOT_FUSED = object()


@functools.lru_cache(maxsize=None)
def _foreach_op(func):
    """(per-tensor op name, in place, its operand names, schema) of a _foreach_ overload, or
    None for any other op."""
    schema = func._schema
    if not schema.name.startswith("aten::_foreach_"):
        return None
    name = schema.name[len("aten::_foreach_"):]
    return name.rstrip("_"), name.endswith("_"), _per_tensor_names(name.rstrip("_")), schema


def _tensors(values):
    """The tensors among ``values`` and in the lists and tuples among them (an op's arguments
    are one level deep)."""
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from (v for v in value if isinstance(v, torch.Tensor))


def _touches_device(args, kwargs):
    return any(t.device.type != "cpu" for t in _tensors(list(args) + list(kwargs.values())))


def _held_references(calls):
    """How many references the recorded calls hold to each tensor (by data_ptr)."""
    held = {}
    for _, args, kwargs, outputs in calls:
        for t in _tensors(list(args) + list(kwargs.values()) + [outputs or ()]):
            held[t.data_ptr()] = held.get(t.data_ptr(), 0) + 1
    return held


def _referenced_elsewhere(t, internal):
    # Beyond the recorder's own references: this frame's argument and getrefcount's.
    return sys.getrefcount(t) - 2 > internal


def _replay(calls):
    for func, args, kwargs, outputs in calls:
        result = func(*args, **kwargs)
        if outputs is not None:
            for out, value in zip(outputs, result):
                out.copy_(value)


class _Program:
    """The program text of one written value, with the tensors (x0, x1, ...) and scalars (s0,
    s1, ...) it reads. A value another launch writes is read from its tensor once written
    (``after``); a tensor some launch overwrites is read before that (``before``)."""

    def __init__(self, key, value, needed, final):
        self.key, self.needed, self.final = key, needed, final
        self.inputs, self.scalars = [], []
        self.after, self.before = set(), set()
        self.text = self._text(value, True)

    def _text(self, node, top):
        if isinstance(node, _Pending) and (top or id(node) not in self.final):
            tokens = [self._text(operand, False) for operand in node.operands]
            program = node.program
            for index in reversed(range(len(tokens))):
                program = program.replace("{" + str(index) + "}", tokens[index])
            return program
        if isinstance(node, _Pending):
            writer = self.final[id(node)]
            source = self.needed[writer][0]
            self.after.add(writer)
        elif isinstance(node, torch.Tensor):
            source = node
            if node.data_ptr() in self.needed and node.data_ptr() != self.key:
                self.before.add(node.data_ptr())
        else:
            self.scalars.append(node)
            return f"s{len(self.scalars) - 1}"
        if not any(source is i for i in self.inputs):
            self.inputs.append(source)
        return f"x{next(i for i, t in enumerate(self.inputs) if t is source)}"


def _plan(needed):
    """The launches for ``needed`` (data_ptr -> (tensor, _Pending)): (program, scalars, outs,
    inputs per out) in an order that reads each tensor's old value before it is overwritten and
    a written value after it is written; None when no such plan fits the kernel's limits."""
    final = {id(value): key for key, (_, value) in needed.items()}
    programs = {}
    after, before = {}, {}
    for key, (tensor, value) in needed.items():
        built = _Program(key, value, needed, final)
        if len(built.inputs) > _MAX_INPUTS or len(built.scalars) > _MAX_SCALARS:
            return None
        after[key], before[key] = built.after, built.before
        programs[key] = (built.text, tuple(built.scalars), tensor, built.inputs)
    order = _order(list(needed), after, before,
                   {key: programs[key][:2] for key in programs})
    if order is None:
        return None
    # Consecutive writes with one program and one set of scalars share a launch.
    plan = []
    for key in order:
        program, scalars, tensor, inputs = programs[key]
        if plan and plan[-1][0] == program and plan[-1][1] == list(scalars) and not any(
                dependency in plan[-1][4] for dependency in after[key] | before[key]):
            plan[-1][2].append(tensor)
            plan[-1][3].append(inputs)
            plan[-1][4].add(key)
        else:
            plan.append((program, list(scalars), [tensor], [inputs], {key}))
    return [launch[:4] for launch in plan]


def _order(keys, after, before, signature):
    """Keys sorted so each comes after the keys in after[key] and before those in before[key];
    among the keys free to go next, one with the last key's signature (program and scalars, so
    that they share a launch), else the first recorded. None for a cycle."""
    successors = {key: set() for key in keys}
    for key in keys:
        for earlier in after[key]:
            successors[earlier].add(key)
        for later in before[key]:
            successors[key].add(later)
    waiting = {key: 0 for key in keys}
    for key in keys:
        for successor in successors[key]:
            waiting[successor] += 1
    order, ready = [], [key for key in keys if waiting[key] == 0]
    rank = {key: index for index, key in enumerate(keys)}
    while ready:
        last = signature[order[-1]] if order else None
        key = min(ready, key=lambda k: (signature[k] != last, rank[k]))
        ready.remove(key)
        order.append(key)
        for successor in successors[key]:
            waiting[successor] -= 1
            if waiting[successor] == 0:
                ready.append(successor)
    return order if len(order) == len(keys) else None


class OptimizerRecord:
    """What the compiled step did, for compile_report(): steps, launches of the last step with
    each program and its tensors, and steps that ran their recorded ops eager."""

    def __init__(self, name, mode):
        self.name = name
        self.mode = mode
        self.steps = 0
        self.eager_replays = 0
        self.last_step = []
        self._current = []

    def begin(self):
        self.steps += 1
        self._current = []

    def note(self, plan):
        self._current += [{"program": program, "tensors": len(outs), "scalars": len(scalars)}
                          for program, scalars, outs, _ in plan]

    def end(self):
        self.last_step = self._current

    def as_dict(self):
        return {"name": self.name, "mode": self.mode, "kind": "optimizer", "steps": self.steps,
                "eager_replays": self.eager_replays, "launches": self.last_step}


def compile_optimizer(optimizer, mode):
    """Replaces ``optimizer.step`` and ``zero_grad`` with the compiled ones and returns the
    optimizer (schedulers and state_dict keep working on the same object)."""
    log = OptimizerRecord(type(optimizer).__name__, mode)
    record(log)
    original_step = optimizer.step
    original_zero_grad = optimizer.zero_grad

    def step(self, closure=None):
        # Optimisers without a closure argument exist: pass one only when given.
        arguments = () if closure is None else (closure,)
        if mode == "no-fusion":
            return original_step(*arguments)
        log.begin()
        # The optimiser's multi-tensor implementation: its _foreach_ calls are what is recorded.
        saved = [(group, group["foreach"]) for group in self.param_groups if "foreach" in group]
        for group, _ in saved:
            group["foreach"] = True
        recorder = _Recorder(log)
        try:
            with recorder:
                result = original_step(*arguments)
        finally:
            for group, value in saved:
                group["foreach"] = value
        recorder.launch()
        log.end()
        if mode == "debug":
            for launch in log.last_step:
                print(f"torch_mimic.compile: {log.name} step: {launch['tensors']} tensors: "
                      f"{launch['program']}")
        return result

    def zero_grad(self, set_to_none=True):
        return original_zero_grad(set_to_none=set_to_none)

    optimizer.step = types.MethodType(step, optimizer)
    optimizer.zero_grad = types.MethodType(zero_grad, optimizer)
    return optimizer
