"""PyTorch 2's ``torch.compile`` on mimic: ``torch.compile(model, backend="mimic")``.

Dynamo captures the Python frames and hands each graph to the backend; the backend is AOT
autograd (torch._dynamo's aot_autograd) with the forward and backward compilers of
torch_mimic.compile: the min-cut partitioner, then the lowering passes (_compile_lower) that
put fused mimic kernels into the graphs. Dynamo keeps the guards, so there is no guard cache
here; each graph it compiles is one entry of torch_mimic.compile_report(), named "dynamo graph
N", with its kernels. ``backend(mode)`` gives the "no-fusion" and "debug" variants.

PyTorch 1.13 has no Dynamo: importing this module there raises ImportError saying so (use
torch_mimic.compile, which captures with functorch's AOT autograd). torch_mimic imports it
only on PyTorch 2, where it registers the "mimic" backend.
"""
import importlib.util
import itertools
import os
import re
import time

import torch

MINIMUM_TORCH = (2, 0)
BACKEND = "mimic"


def torch_version():
    """(major, minor) of the running PyTorch."""
    major, minor = re.match(r"(\d+)\.(\d+)", torch.__version__).groups()
    return int(major), int(minor)


if torch_version() < MINIMUM_TORCH:
    raise ImportError(
        f"torch_mimic._compile_pt2 needs PyTorch >= {'.'.join(map(str, MINIMUM_TORCH))} "
        f"(torch.compile and torch._dynamo); this is PyTorch {torch.__version__}: use "
        "torch_mimic.compile(model), which captures with functorch's AOT autograd")

from functorch.compile import default_partition, min_cut_rematerialization_partition  # noqa: E402
from torch._dynamo.backends.common import aot_autograd  # noqa: E402
from torch._dynamo.backends.registry import register_backend  # noqa: E402

from . import _compile_lower  # noqa: E402
from ._compile_report import CompileRecord, record  # noqa: E402

_MODES = ("default", "no-fusion", "debug")
# The same choice as torch_mimic.compile (_compile.PARTITIONER): min-cut needs networkx.
PARTITIONER = ("min_cut_rematerialization" if importlib.util.find_spec("networkx") is not None
               else "default")
_graph_numbers = itertools.count(1)


def _compilers(graph, mode):
    """The forward and backward compilers of one Dynamo graph, filling ``graph`` (its
    GraphRecord) as torch_mimic.compile does."""

    def compiler(kind):
        def compile_graph(graph_module, example_inputs):
            started = time.perf_counter()
            nodes = sum(1 for n in graph_module.graph.nodes if n.op == "call_function")
            reason = _compile_lower.data_dependent(graph_module)
            if reason is not None:
                graph.eager_reason = reason  # its shapes would be one run's: no fixed kernels
            fuse = mode != "no-fusion" and reason is None
            kernels = _compile_lower.lower(graph_module, fuse=fuse)
            graph.add(kind, nodes, kernels, _compile_lower.eager_nodes(graph_module),
                      time.perf_counter() - started)
            if mode == "debug" or os.environ.get("MIMIC_COMPILE_DEBUG") == "1":
                print(graph.describe(kind))
            return _compile_lower.boxed(graph_module)

        return compile_graph

    return compiler("forward"), compiler("backward")


def backend(mode="default"):
    """A torch.compile backend lowering to mimic kernels in ``mode`` (as torch_mimic.compile's:
    "default", "no-fusion" or "debug"): ``torch.compile(model, backend=backend("debug"))``."""
    if mode not in _MODES:
        raise ValueError(f"torch_mimic: the torch.compile backend's mode must be one of "
                         f"{_MODES}, not {mode!r}")
    partition = (min_cut_rematerialization_partition if PARTITIONER == "min_cut_rematerialization"
                 else default_partition)

    def mimic_backend(graph_module, example_inputs):
        entry = CompileRecord(f"dynamo graph {next(_graph_numbers)}", mode, PARTITIONER)
        record(entry)
        graph = entry.new_graph(guard=None, recompile=False)
        forward, backward = _compilers(graph, mode)
        compile_fn = aot_autograd(fw_compiler=forward, bw_compiler=backward,
                                  partition_fn=partition)
        return compile_fn(graph_module, example_inputs)

    return mimic_backend


register_backend(compiler_fn=backend(), name=BACKEND)
