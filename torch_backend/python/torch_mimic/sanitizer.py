"""The sanitizer of mimic's driver (driver/include/mimic/mimic_debug.h) from Python.

Choose its tools when the process starts, with MIMIC_SANITIZE=memcheck,racecheck,initcheck,
leakcheck (any subset, or "all"), or from Python with enable(). Each finding is printed once on
stderr, naming the aten op and the Python line behind each command and allocation; findings()
counts them by kind, and MIMIC_SANITIZE_REPORT=FILE writes them as JSON at exit.
"""
import torch

_ops = torch.ops.mimic

TOOLS = {"memcheck": 0x1, "racecheck": 0x2, "initcheck": 0x4, "leakcheck": 0x8}
KINDS = ("out_of_bounds", "use_after_free", "double_free", "uninitialized_read", "race", "leak")


def _bits(names):
    if isinstance(names, str):
        names = [n for n in names.split(",") if n]
    bits = 0
    for name in names:
        if name == "all":
            bits |= sum(TOOLS.values())
        elif name in TOOLS:
            bits |= TOOLS[name]
        else:
            raise ValueError(f"'{name}' is not a sanitizer tool ({', '.join(TOOLS)} or all)")
    return bits


def enable(tools="all"):
    """Turns on the given tools (names or a comma-separated string) and turns the others off.
    Allocations made before memcheck, initcheck or leakcheck was on are not checked."""
    _ops.sanitizer_set_tools(_bits(tools))
    if _bits(tools):
        _ops.sanitizer_name_ops()


def disable():
    _ops.sanitizer_set_tools(0)


def tools():
    """The tools that are on, by name."""
    bits = _ops.sanitizer_tools()
    return [name for name, bit in TOOLS.items() if bits & bit]


def findings():
    """The findings reported so far, by kind, and their total."""
    counts = dict(zip(KINDS, _ops.sanitizer_findings()))
    counts["total"] = sum(counts.values())
    return counts


def check_leaks():
    """Reports every device allocation and tensor live now as a leak (leakcheck does so at exit)
    and returns how many there are."""
    return _ops.sanitizer_check_leaks()
