"""The multi-output pass: pointwise kernels whose values are also needed elsewhere, merged into
the kernels that read them.

The pointwise pass inlines a producer only into a sole consumer, so a value with several
readers (other nodes, or a graph output such as an activation the backward saves) ends its tree
and costs a launch and an HBM round trip of its own. Once every pass that absorbs FusedKernels
(GEMM epilogues, reduce and row prologues) has taken its pick, this pass computes such a
kernel inside a later kernel of the same shape that reads it: the merged kernel (MultiKernel,
one torch.ops.mimic.elementwise_multi launch) writes the value as an extra output when it is
read outside, through getitem nodes. The programs compute the same float32 operations as the
kernels merged, so results are bit-identical; a program reads an earlier output back instead of
computing its expression again, and an expression read twice that is no output is computed
twice (RPN has no dup).

Why last (ORDER 90) and not in the pointwise pass: the later passes absorb single-output
FusedKernels only, and would lose their epilogues and prologues to multi-output kernels.

Dropout masks: the AOT graph draws one as bernoulli_(empty_like(x), p); the eager kernel runs
"rand s0 lt 1 0 where" with a key reserved by _random.next_key for its numel. The mask is drawn
inside the kernel that reads it instead, which reserves the key when it runs; that is the same
point in the RNG sequence as long as no other random node sits between the bernoulli_ and the
kernel in graph order, so masks stay bit-identical. A program holds one rand at most: the
generator numbers a program's rand tokens as its streams.
"""
import operator

import torch

from ._compile_graph import Kernel, aten_name, tensor_meta
from ._lower_pointwise import FusedKernel
from ._random import next_key

ORDER = 90  # last: every pass that absorbs FusedKernels has taken its pick
DRAW_MASKS = True  # draw dropout masks in the kernels that read them (see above)

_MAX_INPUTS = 8   # kMaxElementwiseInputs (torch_backend/ops/elementwise_program.h)
_MAX_SCALARS = 8  # kMaxElementwiseScalars
_MAX_OUTPUTS = 8  # kMaxElementwiseOutputs
# A value read twice in a program is computed twice (RPN has no dup): merges stop at programs
# of this many tokens, so that repeated reads cannot blow a program up.
_MAX_TOKENS = 160
_MASK = "rand s0 lt 1 0 where"  # ops_random.bernoulli_float's program
_RANDOM_OPS = frozenset({
    "bernoulli", "bernoulli_", "rand", "rand_like", "randn", "randn_like", "randint",
    "randint_like", "randperm", "normal", "normal_", "uniform_", "random_", "exponential_",
    "geometric_", "log_normal_", "cauchy_", "multinomial", "native_dropout", "rrelu_with_noise",
})


class MultiKernel(Kernel):
    """Elementwise programs over one float32 index space in one launch; returns a tuple, output
    j computed by programs[j]. A kernel that draws a mask reserves its key (numel counters)
    when it runs, as the bernoulli_ it replaces did. Other passes absorb FusedKernels only, so
    they leave these alone."""

    kind = "pointwise"
    # Output 0 may overwrite an input that dies here, as FusedKernel's output does: every
    # program computes a tile before any output of it is stored (elementwise.h).
    writes_in_place = True

    def __init__(self, programs, shape, scalars, nodes, random):
        super().__init__(nodes)
        self.programs = list(programs)
        self.shape = torch.Size(shape)
        self.scalars = list(scalars)
        self.random = random

    def __call__(self, *inputs):
        shape = self.shape
        device = inputs[0].device
        first = None
        if self.reuse is not None:
            dying = inputs[self.reuse]
            if dying.shape == shape and dying.dtype == torch.float32 and dying.is_contiguous():
                first = dying
        outs = [torch.empty(shape, dtype=torch.float32, device=device) if j or first is None
                else first for j in range(len(self.programs))]
        seed, offset = next_key(device.index or 0, outs[0].numel()) if self.random else (0, 0)
        if outs[0].numel() != 0:
            expanded = [t if t.shape == shape else t.expand(shape) for t in inputs]
            torch.ops.mimic.elementwise_multi(outs, expanded, self.programs, torch.float32,
                                              self.scalars, seed, offset)
        return tuple(outs)

    def describe(self):
        # "program" is what the debug report prints: every output's, in order.
        return dict(super().describe(), programs=self.programs, shape=tuple(self.shape),
                    random=self.random, program=" | ".join(self.programs))


def _renamed(text, inputs, scalars):
    """``text`` with x<i> replaced by inputs[i] (a token or a whole expression) and s<i> by
    s<scalars + i>."""
    tokens = []
    for token in text.split(" "):
        if token[0] == "x" and token[1:].isdigit():
            tokens.append(inputs[int(token[1:])])
        elif token[0] == "s" and token[1:].isdigit():
            tokens.append(f"s{int(token[1:]) + scalars}")
        else:
            tokens.append(token)
    return " ".join(tokens)


class _Group:
    """A kernel under construction: the nodes whose values it writes (outputs[0] is the root,
    where it goes), one program per output over its inputs and scalars, the graph nodes it
    replaces and the ops they fused. ``mask_at`` is the position of the bernoulli_ it draws."""

    def __init__(self, root, program, inputs, scalars, members, ops, shape, mask_at=None):
        self.root = root
        self.outputs = [root]
        self.programs = [program]
        self.inputs = list(inputs)
        self.scalars = list(scalars)
        self.members = list(members)
        self.ops = list(ops)
        self.shape = tuple(shape)
        self.mask_at = mask_at
        self.merged = False


def _kernel_group(node):
    kernel = node.target
    if node.kwargs or not all(isinstance(a, torch.fx.Node) for a in node.args):
        return None
    if len(set(node.args)) != len(node.args) or "rand" in kernel.program.split(" "):
        return None
    return _Group(node, kernel.program, node.args, kernel.scalars, [node], kernel.nodes,
                  kernel.shape)


def _mask_group(node, position):
    """The group drawing bernoulli_(empty_like(...), p) ``node``, or None."""
    if str(node.target) != "aten.bernoulli_.float" or node.kwargs.get("generator") is not None:
        return None
    target, p = (list(node.args) + [0.5])[:2]
    if type(p) not in (int, float) or not 0 <= p <= 1:
        return None
    meta = tensor_meta(node)
    if meta is None or meta[1] != torch.float32:
        return None
    members = [node]
    while isinstance(target, torch.fx.Node) and aten_name(target) == "empty_like":
        if len(target.users) != 1:
            return None
        members.append(target)
        target = target.args[0]
    if len(members) == 1:
        return None  # the mask fills a tensor that exists before it
    return _Group(node, _MASK, [], [p], members, [str(node.target)], meta[0],
                  mask_at=position[node])


def _merge(group, producer, position, owner, random_at):
    """Merges ``producer`` (an earlier group ``group`` reads) into ``group`` and returns True,
    or returns False when the shapes, the limits or the graph order forbid: values of
    ``producer`` read outside ``group`` become extra outputs, whose readers must all come after
    ``group``'s root."""
    if producer.shape != group.shape:
        return False
    if producer.mask_at is not None:
        if group.mask_at is not None:
            return False
        here = position[group.root]
        if any(producer.mask_at < at < here for at in random_at):
            return False  # the mask's key would be reserved after another random node's
    members = set(group.members) | set(producer.members)
    extra = []
    for output in producer.outputs:
        outside = [u for u in output.users if u not in members]
        if outside:
            extra.append(output)
        for user in outside:
            at = owner.get(user)
            if position[at.root if at is not None else user] <= position[group.root]:
                return False
    inputs = [n for n in group.inputs if n not in producer.outputs]
    for node in producer.inputs:
        if node not in inputs:
            inputs.append(node)
    if (len(inputs) > _MAX_INPUTS or len(group.scalars) + len(producer.scalars) > _MAX_SCALARS
            or len(group.outputs) + len(extra) > _MAX_OUTPUTS):
        return False
    offset = len(group.scalars)
    producer_tokens = [f"x{inputs.index(n)}" for n in producer.inputs]
    expressions = {out: _renamed(text, producer_tokens, offset)
                   for out, text in zip(producer.outputs, producer.programs)}
    group_tokens = [expressions[n] if n in expressions else f"x{inputs.index(n)}"
                    for n in group.inputs]
    programs = ([_renamed(text, group_tokens, 0) for text in group.programs]
                + [expressions[out] for out in extra])
    for text in programs:
        tokens = text.split(" ")
        if len(tokens) > _MAX_TOKENS or tokens.count("rand") > 1:
            return False
    group.programs = programs
    group.outputs += extra
    group.inputs = inputs
    group.scalars += producer.scalars
    group.members += producer.members
    group.ops = producer.ops + group.ops
    group.mask_at = producer.mask_at if producer.mask_at is not None else group.mask_at
    group.merged = True
    return True


def _replaced_runs(tokens, run, token):
    """``tokens`` with every occurrence of the token list ``run`` replaced by ``token``. A run of
    RPN tokens that is a whole program computes one value from nothing below it on the stack,
    so wherever it occurs it can stand for that value."""
    out, i = [], 0
    while i < len(tokens):
        if tokens[i:i + len(run)] == run:
            out.append(token)
            i += len(run)
        else:
            out.append(tokens[i])
            i += 1
    return out


def _share(group):
    """Orders the outputs shortest program first and lets each program read the earlier outputs
    whose programs it contains (as x<inputs + j>, elementwise.h) instead of computing them
    again: a value read twice, or a dropout mask both used and saved, is computed once."""
    order = sorted(range(len(group.outputs)), key=lambda j: len(group.programs[j]))
    group.outputs = [group.outputs[j] for j in order]
    original = [group.programs[j].split(" ") for j in order]
    programs = [list(tokens) for tokens in original]
    readable = max(_MAX_INPUTS - len(group.inputs), 0)
    for k in range(len(programs)):
        for j in sorted(range(min(k, readable)), key=lambda j: -len(original[j])):
            programs[k] = _replaced_runs(programs[k], original[j], f"x{len(group.inputs) + j}")
    group.programs = [" ".join(tokens) for tokens in programs]


def _groups(graph):
    position = {node: index for index, node in enumerate(graph.nodes)}
    random_at = [position[n] for n in graph.nodes if aten_name(n) in _RANDOM_OPS]
    groups = []
    for node in graph.nodes:
        if isinstance(node.target, FusedKernel):
            group = _kernel_group(node)
        else:
            group = _mask_group(node, position) if DRAW_MASKS else None
        if group is not None:
            groups.append(group)
    owner = {m: g for g in groups for m in g.members}
    made = {out: g for g in groups for out in g.outputs}
    alive = list(groups)
    for group in groups:
        merging = group in alive
        while merging:  # a merge brings the producer's inputs, which may be mergeable too
            merging = False
            for node in group.inputs:
                producer = made.get(node)
                if producer is None or producer is group:
                    continue
                if _merge(group, producer, position, owner, random_at):
                    alive.remove(producer)
                    for m in producer.members:
                        owner[m] = group
                    for out in producer.outputs:
                        made[out] = group
                    merging = True
                    break
    # A mask drawn by a kernel needs a tensor input to know the device; unmerged groups stay.
    return [g for g in alive if g.merged and g.inputs]


def run(graph):
    """Rewrites ``graph`` in place: merged kernels become MultiKernel calls read through
    getitem nodes. Returns the kernels made, in graph order."""
    if not hasattr(torch.ops.mimic, "elementwise_multi"):
        return []  # a library built before the primitive
    kernels = []
    replaced = {}  # outputs of the kernels made -> the getitem nodes standing for them
    position = {node: index for index, node in enumerate(graph.nodes)}
    for group in _groups(graph):
        _share(group)
        kernel = MultiKernel(group.programs, group.shape, group.scalars, group.ops,
                             group.mask_at is not None)
        with graph.inserting_before(group.root):
            fused = graph.call_function(kernel, tuple(replaced.get(n, n) for n in group.inputs))
            fused.meta = {"val": tuple(o.meta.get("val") for o in group.outputs)}
            for index, output in enumerate(group.outputs):
                item = graph.call_function(operator.getitem, (fused, index))
                item.meta = dict(output.meta)
                output.replace_all_uses_with(item)
                replaced[output] = item
        for member in sorted(group.members, key=position.get, reverse=True):  # readers first
            graph.erase_node(member)
        kernels.append(kernel)
    return kernels
