"""torch_mimic.compile on random float32 pointwise DAGs drawn from the op table.

A seeded generator builds each DAG from the table's pointwise entries that compute on float
inputs, called as the aten ops they stand for: inputs of broadcasting shapes, values used by
several ops (shared subexpressions end a fused tree), where/masked_fill over comparisons, Python
scalars in place of some tensor operands, and several outputs. Compiled and eager run on the
device; forward values and input gradients must be bit-identical, because a fused program
computes the same float32 operations in the same order as the eager kernels (NaN compares equal
to NaN: the generator keeps domains valid, but products of large values can still overflow).
"""
import random

import pytest
import torch

import torch_mimic
from torch_mimic import _op_table

SHAPES = [(4, 5, 6), (5, 6), (6,), (4, 1, 6), (1, 5, 1), (5, 1)]
# Scalar operands that are not promoted, by schema argument name.
SCALARS = {"alpha": (-1.5, 0.5, 2.0), "value": (0.25, -0.75), "negative_slope": (0.01, 0.2),
           "threshold": (0.1, -0.3), "scale": (1.05,), "input_scale": (1.0, 0.5),
           "decimals": (1, 2)}
# Keyword arguments that select a variant without being an operand of its program.
VARIANT_ARGUMENTS = {"none": {"approximate": "none"}, "tanh": {"approximate": "tanh"},
                     "floor": {"rounding_mode": "floor"}, "trunc": {"rounding_mode": "trunc"},
                     "square": {"exponent": 2}}
# Operands kept in the ops' domains by guards made of table ops: > 0, or within [-3, 3] (exp).
POSITIVE = {("log", "self"), ("log2", "self"), ("log10", "self"), ("log1p", "self"),
            ("sqrt", "self"), ("rsqrt", "self"), ("reciprocal", "self"), ("pow", "self"),
            ("div", "other"), ("fmod", "other"), ("remainder", "other"),
            ("addcdiv", "tensor2")}
BOUNDED = {("exp", "self"), ("exp2", "self"), ("expm1", "self"), ("pow", "exponent"),
           ("elu", "self")}


def _entries():
    """Table entries computing a float result from float inputs, as (name, variant, entry).
    Integer-only ops (bitwise, trunc_integer), in-place-only fills, log_sigmoid_forward (two
    results) and the entries for backward ops (which the backward graphs of their forward ops
    exercise) are left out; bool results only make conditions."""
    chosen = []
    for (name, variant), entry in sorted(_op_table.op_table().items()):
        if (entry.kind != "pointwise" or name.startswith("bitwise") or name in ("fill", "zero")
                or variant in ("trunc_integer", "byte", "bool") or name.endswith("_backward")
                or name == "log_sigmoid_forward"):
            continue
        chosen.append((name, variant, entry))
    return chosen


ENTRIES = _entries()
FLOAT_ENTRIES = [e for e in ENTRIES if e[2].result != "bool"]
CONDITIONS = [e for e in ENTRIES if e[2].result == "bool"]


def _arguments(schema, given):
    """Positional and keyword-only arguments of ``schema`` for the named values, defaults
    filling the positional gaps; None when the schema does not take them."""
    names = [a.name for a in schema.arguments]
    if any(name not in names for name in given):
        return None
    positional = [a for a in schema.arguments if not a.kwarg_only]
    last = max((i for i, a in enumerate(positional) if a.name in given), default=-1)
    values = []
    for index, argument in enumerate(positional):
        if argument.name in given:
            values.append(given[argument.name])
        elif not argument.has_default_value():
            return None
        elif index < last:
            values.append(argument.default_value)
    keywords = {a.name: given[a.name] for a in schema.arguments
                if a.kwarg_only and a.name in given}
    return values, keywords


def _call(overload, given):
    values, keywords = _arguments(overload._schema, given)
    return overload(*values, **keywords)


def _resolve(name, given):
    """The first functional overload of aten ``name`` that takes the named CPU values
    ``given`` and computes a tensor from them."""
    packet = getattr(torch.ops.aten, name)
    for overload_name in packet.overloads():
        overload = getattr(packet, overload_name)
        schema = overload._schema
        if any(a.is_out or (a.alias_info is not None and a.alias_info.is_write)
               for a in schema.arguments) or len(schema.returns) != 1:
            continue
        if _arguments(schema, given) is None:
            continue
        try:
            result = _call(overload, given)
        except (RuntimeError, TypeError):
            continue
        if isinstance(result, torch.Tensor):
            return overload, result
    return None, None


class _Dag:
    """A random DAG: ``steps`` of (overload, arguments by name); an argument is ("value",
    index of an input or an earlier step's value) or ("constant", number or string)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.shapes = [self.rng.choice(SHAPES) for _ in range(self.rng.randint(3, 8))]
        self.steps = []
        self.read = set()  # inputs read so far
        probe = [torch.randn(s, generator=torch.Generator().manual_seed(seed + i))
                 for i, s in enumerate(self.shapes)]
        self.probe = probe
        # Entries dealt from a shuffled deck: every entry turns up across the seeds.
        deck = list(FLOAT_ENTRIES)
        self.rng.shuffle(deck)
        count = self.rng.randint(10, 22)
        dealt = 0
        while len(self.steps) < count:
            self._add(deck[dealt % len(deck)])
            dealt += 1
        # The last value, one that ops also read (a shared value) and one at random.
        floats = self._floats()[len(self.shapes):]
        read = [i for i in floats[:-1] if self.uses(i)] or floats
        self.outputs = sorted({floats[-1], self.rng.choice(read), self.rng.choice(floats)})

    def uses(self, index):
        """How many ops read value ``index``."""
        return sum(1 for _, given in self.steps for kind, value in given.values()
                   if kind == "value" and value == index)

    def _floats(self):
        return [i for i, value in enumerate(self.probe) if value.dtype == torch.float32]

    def _value(self):
        unused = [i for i in range(len(self.shapes)) if i not in self.read]
        if unused and self.rng.random() < 0.5:
            self.read.add(unused[0])
            return unused[0]
        # Recent values more often: deeper trees.
        floats = self._floats()
        return floats[min(len(floats) - 1, int(len(floats) * (1 - self.rng.random() ** 2)))]

    def _step(self, name, given, extra=None):
        """Appends one op on ``given`` (argument name -> ("value", i) or ("constant", x)) and
        ``extra`` constants; returns the index of its value, or None when no overload takes
        them."""
        given = {**given, **{k: ("constant", v) for k, v in (extra or {}).items()}}
        probe = {k: (self.probe[v] if kind == "value" else v) for k, (kind, v) in given.items()}
        overload, value = _resolve(name, probe)
        if overload is None:
            return None
        self.steps.append((overload, given))
        self.probe.append(value)
        return len(self.probe) - 1

    def _guarded(self, index, guard):
        if guard == "positive":
            index = self._step("abs", {"self": ("value", index)})
            return self._step("add", {"self": ("value", index), "other": ("constant", 0.5)})
        return self._step("clamp", {"self": ("value", index), "min": ("constant", -3.0),
                                    "max": ("constant", 3.0)})

    def _condition(self):
        name, _, entry = self.rng.choice(CONDITIONS)
        given = {operand: ("value", self._value()) for operand in entry.operands}
        return self._step(name, given)

    def _add(self, chosen):
        name, variant, entry = chosen
        given = {}
        for position, operand in enumerate(entry.operands):
            if operand in ("condition", "mask"):
                index = self._condition()
            elif operand in entry.promoted:
                if position > 0 and self.rng.random() < 0.2:
                    given[operand] = ("constant", self.rng.choice((0.5, -1.25, 3.0)))
                    continue
                index = self._value()
                guard = ("positive" if (name, operand) in POSITIVE
                         else "bounded" if (name, operand) in BOUNDED else None)
                if guard is not None:
                    index = self._guarded(index, guard)
            else:
                given[operand] = ("constant", self.rng.choice(SCALARS[operand]))
                continue
            if index is None:
                return
            given[operand] = ("value", index)
        self._step(name, given, VARIANT_ARGUMENTS.get(variant))

    def __call__(self, *tensors):
        values = list(tensors)
        for overload, given in self.steps:
            values.append(_call(overload, {k: values[v] if kind == "value" else v
                                           for k, (kind, v) in given.items()}))
        return tuple(values[i] for i in self.outputs)


SEEDS = range(24)


def _assert_identical(ours, theirs, what):
    torch.testing.assert_close(ours.detach().cpu(), theirs.detach().cpu(), rtol=0, atol=0,
                               equal_nan=True, msg=lambda m: f"{what}: {m}")


@pytest.mark.parametrize("seed", SEEDS)
def test_random_pointwise_dag_is_bit_identical(device, seed):
    dag = _Dag(seed)
    torch.manual_seed(seed)
    cpu = [torch.randn(s) for s in dag.shapes]
    eager_inputs = [t.to(device).requires_grad_() for t in cpu]
    inputs = [t.to(device).requires_grad_() for t in cpu]
    eager = dag(*eager_inputs)
    compiled = torch_mimic.compile(dag)(*inputs)
    for index, (ours, theirs) in enumerate(zip(compiled, eager)):
        _assert_identical(ours, theirs, f"output {index}")
    differentiable = [i for i, out in enumerate(eager) if out.requires_grad]
    grads = [torch.randn(eager[i].shape).to(device) for i in differentiable]
    torch.autograd.backward([eager[i] for i in differentiable], grads)
    torch.autograd.backward([compiled[i] for i in differentiable], grads)
    for index, (ours, theirs) in enumerate(zip(inputs, eager_inputs)):
        if theirs.grad is None:
            assert ours.grad is None
        else:
            _assert_identical(ours.grad, theirs.grad, f"gradient of input {index}")
    # The DAG was fused, not run op by op.
    forward = torch_mimic.compile_report()[-1]["captures"][0]["graphs"]["forward"]
    assert forward["kernels"]


def test_the_dags_cover_the_table_broadcasts_and_shared_values():
    dags = [_Dag(seed) for seed in SEEDS]
    drawn = {overload._schema.name for dag in dags for overload, _ in dag.steps}
    assert {f"aten::{name}" for name, _, _ in FLOAT_ENTRIES} <= drawn
    for dag in dags:
        assert len(set(dag.shapes)) > 1
        assert len(dag.outputs) > 1
        assert any(dag.uses(i) for i in dag.outputs[:-1])


def test_gradient_independent_of_the_incoming_one(device):
    """1.13's min-cut partitioner emits a backward that does not compile here (sgn's gradient is
    zero whatever comes in, through pow's with a tensor exponent): the capture partitions it
    with functorch's default partitioner instead."""
    def fn(a):
        return torch.sgn(torch.pow(a.abs() + 0.5, a.clamp(-3, 3)))

    cpu = torch.randn(4, 5)
    a, a_eager = cpu.to(device).requires_grad_(), cpu.to(device).requires_grad_()
    out, eager = torch_mimic.compile(fn)(a), fn(a_eager)
    _assert_identical(out, eager, "output")
    grad = torch.randn(4, 5).to(device)
    out.backward(grad)
    eager.backward(grad)
    _assert_identical(a.grad, a_eager.grad, "gradient")
    assert torch_mimic.compile_report()[-1]["captures"][0]["eager_reason"] is None
