"""Timing-only mode (``MIMIC_MODE=timing``) on the PyTorch side: the host reads of device data.

In timing mode the device computes no values, and every copy from a device into host memory
gets placeholder bytes (the driver's rule: zeros, or bytes a small host copy of at most 64 KiB
left there, so the host's own control data survives a round trip). Scalar reads, the CPU
fallback's inputs and the sizes of data-dependent ops always read zeros. The backend reports each such copy here with the
op that made it (torch_backend/src/placeholder_reads.*); this module adds the Python line that
caused it, counts it per (op, line) and warns once per (op, line), since a Python branch on the
value cannot follow the real program. What counts as a placeholder read:

- ``scalar``: ``.item()``, ``bool(t)``, ``int(t)``, ``float(t)``, ``if t:`` (one scalar read);
- ``copy``: ``.cpu()``, ``.to("cpu")``, ``.tolist()``, printing a tensor;
- ``op_sync``: a host sync inside one of torch_mimic's own op kernels, chiefly the one read of
  an op whose output size depends on the data (``nonzero``, ``argwhere``, ``masked_select``,
  ``unique``...): it reads the count 0, so the op returns an empty result (no rows, no
  elements), and the work after it is timed for that empty result;
- ``fallback``: an op without a mimic kernel, which the CPU fallback computes from the
  placeholder zeros (each of its device inputs is one read); its results are zeros-derived.
"""
import atexit
import ctypes
import os
import sys
import threading
import warnings

import torch

_ops = torch.ops.mimic

_KINDS = ("copy", "scalar", "fallback")
_PACKAGE_DIRS = (os.sep + "torch" + os.sep, os.sep + "torch_mimic" + os.sep)


class TimingModeWarning(UserWarning):
    """A host read of device data in timing-only mode returned placeholder zeros."""


_HOOK_TYPE = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_uint64)
_lock = threading.Lock()
_reads = {}  # (kind, op, file, line) -> [count, bytes]


def simulation_mode():
    """``"full"`` or ``"timing"``: the driver's mode (``MIMIC_MODE`` or the preset's
    ``system.mode``). Initialises the driver."""
    return _ops.simulation_mode()


def _is_package_file(filename):
    return any(part in filename for part in _PACKAGE_DIRS)


def _python_kernel_op(frame):
    """The aten op of the outermost torch_mimic Python kernel on the stack (``impl`` in _lib.py
    wraps each in a function named ``kernel`` holding the op as ``_op``), or None."""
    found = None
    while frame is not None:
        code = frame.f_code
        if code.co_name == "kernel" and code.co_filename.endswith(os.sep + "_lib.py"):
            op = frame.f_locals.get("_op")
            if op is not None:
                found = op
        frame = frame.f_back
    return found


def _user_line(frame):
    """(file, line) of the innermost frame outside torch and torch_mimic, or ("", 0) when the
    read came from a thread that runs no Python (autograd's engine)."""
    while frame is not None:
        if not _is_package_file(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno
        frame = frame.f_back
    return "", 0


def _describe(kind, op):
    if kind == "scalar":
        return f"{op} (.item(), bool(), int() or float() of a device tensor)"
    if kind == "copy":
        return f"{op} (a copy to the host: .cpu(), .tolist() or printing)"
    if kind == "op_sync":
        return (f"{op}'s own host sync (nonzero, masked_select and unique read their output "
                "size as 0 and return an empty result)")
    return f"{op} (no mimic kernel: the CPU fallback computed it from the placeholder zeros)"


_BRANCH = ("A Python branch or a size that depends on this value cannot be simulated "
           "faithfully.")
_CONSEQUENCE = {"copy": _BRANCH, "scalar": _BRANCH, "op_sync": _BRANCH,
                "fallback": "What the program does with its results cannot be simulated "
                            "faithfully."}


def _on_read(op_bytes, kind_index, nbytes):
    """Counts and warns; returns 1 when the read must give zeros (a data-dependent op's size)."""
    kind = None
    try:
        kind, op = _KINDS[kind_index], op_bytes.decode()
        caller = sys._getframe(0).f_back  # None on a thread that runs no Python
        python_op = _python_kernel_op(caller)
        if python_op is not None and kind in ("copy", "scalar"):
            kind, op = "op_sync", _op_name(python_op)
        filename, line = _user_line(caller)
        key = (kind, op, filename, line)
        with _lock:
            entry = _reads.setdefault(key, [0, 0])
            entry[0] += 1
            entry[1] += nbytes
            first = entry[0] == 1
        if first:
            where = f"{filename}:{line}" if filename else "a thread without Python (autograd)"
            warnings.warn_explicit(
                f"mimic timing mode: {_describe(kind, op)} at {where} read device data, which "
                f"timing mode does not compute: it got placeholder zeros. {_CONSEQUENCE[kind]}"
                " Warned once per op and line; torch_mimic.timing_mode_report() counts them.",
                TimingModeWarning, filename or "<mimic>", line or 0)
    except TimingModeWarning as warning:  # the filter "error": the C++ caller cannot raise it
        print(f"mimic: {warning}", file=sys.stderr)
    except BaseException as error:  # noqa: BLE001 - nothing may escape into the C++ caller
        print(f"mimic: the timing-mode read hook failed: {error!r}", file=sys.stderr)
    return 1 if kind == "op_sync" else 0


def _op_name(op):
    name = op.name()
    return name[:-len(".default")] if name.endswith(".default") else name


_hook = _HOOK_TYPE(_on_read)


def install():
    _ops.set_placeholder_read_hook(ctypes.cast(_hook, ctypes.c_void_p).value)
    # Copies made while the interpreter shuts down must not call into it.
    atexit.register(_ops.set_placeholder_read_hook, 0)


def timing_mode_report():
    """The host reads of device data that returned placeholders, as a dict:

    - ``mode``: ``"full"`` or ``"timing"`` (in full mode nothing is counted);
    - ``reads``: one dict per (kind, op, Python line), most frequent first, with ``kind``
      (``scalar``, ``copy``, ``op_sync`` or ``fallback``: see the module's doc),
      ``op``,
      ``where`` (``file.py:line``, the innermost frame outside torch and torch_mimic; empty on
      autograd's thread), ``count`` and ``bytes``;
    - ``total_reads``, ``total_bytes``: their sums;
    - ``driver_placeholder_copies``, ``driver_placeholder_bytes``: the driver's own count
      (``mimicGetPlaceholderCopies``), which also covers copies made outside PyTorch and the
      exact reads of control data that DDP's parameter check makes (_distributed.py).
    """
    with _lock:
        items = sorted(_reads.items(), key=lambda item: (-item[1][0], item[0]))
    reads = [{"kind": kind, "op": op, "where": f"{os.path.basename(f)}:{line}" if f else "",
              "count": count, "bytes": nbytes}
             for (kind, op, f, line), (count, nbytes) in items]
    copies, nbytes = _ops.placeholder_copies()
    return {"mode": simulation_mode(), "reads": reads,
            "total_reads": sum(r["count"] for r in reads),
            "total_bytes": sum(r["bytes"] for r in reads),
            "driver_placeholder_copies": copies, "driver_placeholder_bytes": nbytes}


def reset_timing_mode_report():
    """Forgets the counted reads (the driver's own count keeps running); their warnings are
    given again."""
    with _lock:
        _reads.clear()
