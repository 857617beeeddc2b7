"""The driver's activity trace (driver/include/mimic/mimic_trace.h) through ctypes, on the very
libmimic.so that torch_mimic's backend library loaded (found in /proc/self/maps), so that both
see one simulation."""
import ctypes

MIMIC_SUCCESS = 0

KINDS = ["kernel", "memcpy", "memset", "host_func", "host_task", "event_record", "event_wait",
         "range", "synchronize", "alloc", "free", "collective"]
COPY_KINDS = ["HtoD", "DtoH", "DtoD", "Peer", "HtoH"]


class _Dim3(ctypes.Structure):
    _fields_ = [("x", ctypes.c_uint32), ("y", ctypes.c_uint32), ("z", ctypes.c_uint32)]


class _Counters(ctypes.Structure):
    _fields_ = [("workgroups", ctypes.c_uint64), ("instructions", ctypes.c_uint64 * 4),
                ("flops", ctypes.c_uint64), ("hbmBytesRead", ctypes.c_uint64),
                ("hbmBytesWritten", ctypes.c_uint64), ("startNs", ctypes.c_uint64),
                ("endNs", ctypes.c_uint64), ("cycles", ctypes.c_uint64),
                ("busy", ctypes.c_double * 4), ("cacheHitBytes", ctypes.c_uint64),
                ("dataDependentReads", ctypes.c_uint64)]


class _Activity(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("device", ctypes.c_int), ("queueId", ctypes.c_uint64),
                ("startNs", ctypes.c_uint64), ("endNs", ctypes.c_uint64),
                ("correlationId", ctypes.c_uint64), ("bytes", ctypes.c_uint64),
                ("copyKind", ctypes.c_int), ("hostPinned", ctypes.c_int),
                ("peerDevice", ctypes.c_int), ("name", ctypes.c_char * 64), ("grid", _Dim3),
                ("counters", _Counters)]


_library = None


def _lib():
    global _library
    if _library is None:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if line.rstrip().endswith("/libmimic.so")}
        if not paths:
            raise RuntimeError("torch_mimic.profiler: libmimic.so is not loaded "
                               "(import torch_mimic first)")
        _library = ctypes.CDLL(paths.pop())
    return _library


def _check(result, call):
    if result != MIMIC_SUCCESS:
        name = _lib().mimicGetErrorName
        name.restype = ctypes.c_char_p
        raise RuntimeError(f"torch_mimic.profiler: {call} failed: {name(result).decode()}")


def start(capacity):
    _check(_lib().mimicTraceStart(ctypes.c_size_t(capacity)), "mimicTraceStart")


def stop():
    _check(_lib().mimicTraceStop(), "mimicTraceStop")


def dropped():
    value = ctypes.c_uint64()
    _check(_lib().mimicTraceGetDropped(ctypes.byref(value)), "mimicTraceGetDropped")
    return value.value


def _as_dict(a):
    kind = KINDS[a.kind]
    record = {"kind": kind, "device": a.device, "queue": a.queueId or None,
              "start_ns": a.startNs, "end_ns": a.endNs, "correlation": a.correlationId,
              "name": a.name.decode(errors="replace") or kind, "bytes": a.bytes,
              "copy_kind": None, "pinned": None, "grid": None, "counters": None}
    if kind == "memcpy":
        record["copy_kind"] = COPY_KINDS[a.copyKind]
        if record["copy_kind"] in ("HtoD", "DtoH"):
            record["pinned"] = bool(a.hostPinned)
    if kind == "kernel":
        c = a.counters
        record["grid"] = [a.grid.x, a.grid.y, a.grid.z]
        record["counters"] = {"workgroups": c.workgroups, "flops": c.flops,
                              "hbm_bytes_read": c.hbmBytesRead,
                              "hbm_bytes_written": c.hbmBytesWritten,
                              "cache_hit_bytes": c.cacheHitBytes,
                              "data_dependent_reads": c.dataDependentReads,
                              "instructions": list(c.instructions), "busy": list(c.busy)}
    return record


def read(batch=4096):
    """Every finished record, in call order, as SCHEMA.md's activity dicts."""
    buffer = (_Activity * batch)()
    count = ctypes.c_size_t()
    records = []
    while True:
        _check(_lib().mimicTraceRead(buffer, ctypes.c_size_t(batch), ctypes.byref(count)),
               "mimicTraceRead")
        records.extend(_as_dict(buffer[i]) for i in range(count.value))
        if count.value < batch:
            return records
