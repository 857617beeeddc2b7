"""The driver's preset API (mimicPreset* in driver/include/mimic/mimic.h) through ctypes.

It builds no simulation and needs no torch, so listings are fast and a configuration can be
checked before a child process is started for it. Friendly aliases (hbm_bandwidth) for the
model's field names (hbm.bandwidth_gbps) live here too.
"""
import ctypes
import difflib

from . import _build
from .common import UsageError

FIELD_CHARS, VALUE_CHARS, DESCRIPTION_CHARS, SOURCE_CHARS = 64, 128, 256, 256

# alias -> field, for --vary and --set; `mimic presets show` prints the list.
ALIASES = {
    "devices": "system.num_devices",
    "compute_units": "compute.units",
    "lanes": "compute.lanes",
    "clock": "compute.clock_mhz",
    "scratchpad": "compute.scratchpad",
    "hbm_capacity": "hbm.capacity",
    "hbm_bandwidth": "hbm.bandwidth_gbps",
    "hbm_latency": "hbm.latency_ns",
    "host_link_bandwidth": "host_link.bandwidth_gbps",
    "pcie_bandwidth": "host_link.bandwidth_gbps",
    "link_bandwidth": "device_link.bandwidth_gbps",
    "link_latency": "device_link.latency_ns",
    "topology": "device_link.topology",
    "launch_latency": "cp.command_latency_ns",
    "mma_f32": "isa.mma_f32_macs_per_cycle",
    "mma_f16": "isa.mma_f16_macs_per_cycle",
}


class _Param(ctypes.Structure):
    _fields_ = [("field", ctypes.c_char * FIELD_CHARS), ("value", ctypes.c_char * VALUE_CHARS),
                ("presetValue", ctypes.c_char * VALUE_CHARS),
                ("defaultValue", ctypes.c_char * VALUE_CHARS),
                ("description", ctypes.c_char * DESCRIPTION_CHARS),
                ("source", ctypes.c_char * SOURCE_CHARS),
                ("setByPreset", ctypes.c_int), ("overridden", ctypes.c_int)]


class PresetError(Exception):
    """A failed mimicPreset* call: `code` is the result's name, `detail` the driver's message."""

    def __init__(self, code, detail):
        super().__init__(detail)
        self.code = code
        self.detail = detail


_library = None


def _lib():
    global _library
    if _library is None:
        lib = ctypes.CDLL(_build.LIBMIMIC)
        lib.mimicGetErrorName.restype = ctypes.c_char_p
        lib.mimicPresetGetName.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
        lib.mimicPresetDescribe.argtypes = [ctypes.c_char_p, ctypes.c_char_p,
                                            ctypes.POINTER(_Param), ctypes.c_int,
                                            ctypes.POINTER(ctypes.c_int)]
        _library = lib
    return _library


def _check(result):
    if result != 0:
        lib = _lib()
        detail = ctypes.c_char_p()
        lib.mimicGetErrorDetail(ctypes.byref(detail))
        text = (detail.value or b"").decode(errors="replace")
        # The detail starts with the function's name, which says nothing to a user.
        text = text.split(": ", 1)[-1]
        raise PresetError(lib.mimicGetErrorName(result).decode(), text)


def names():
    """The built-in presets, in name order."""
    count = ctypes.c_int()
    _check(_lib().mimicPresetGetCount(ctypes.byref(count)))
    result = []
    for index in range(count.value):
        name = ctypes.c_char_p()
        _check(_lib().mimicPresetGetName(index, ctypes.byref(name)))
        result.append(name.value.decode())
    return result


def describe_raw(preset, overrides=""):
    """Every parameter as a dict (field, value, preset_value, default, description, source,
    set_by_preset, overridden); raises PresetError."""
    count = ctypes.c_int()
    preset_b, overrides_b = preset.encode(), (overrides or "").encode()
    _check(_lib().mimicPresetDescribe(preset_b, overrides_b, None, 0, ctypes.byref(count)))
    params = (_Param * count.value)()
    _check(_lib().mimicPresetDescribe(preset_b, overrides_b, params, count.value,
                                      ctypes.byref(count)))
    return [{"field": p.field.decode(), "value": p.value.decode(),
             "preset_value": p.presetValue.decode(), "default": p.defaultValue.decode(),
             "description": p.description.decode(), "source": p.source.decode(),
             "set_by_preset": bool(p.setByPreset),
             "overridden": bool(p.overridden)} for p in params]


def field_names():
    return [p["field"] for p in describe_raw("default")]


def resolve_field(name):
    """The model's field for a field name or an alias; raises UsageError for neither."""
    if name in ALIASES:
        return ALIASES[name]
    fields = field_names()
    if name in fields:
        return name
    close = difflib.get_close_matches(name, fields + list(ALIASES), n=3)
    raise UsageError(f"unknown field '{name}'" + (f" (did you mean {' or '.join(close)}?)"
                                                   if close else ""),
                     "mimic presets show default lists every field and alias")


def describe(preset, overrides=""):
    """describe_raw with the driver's errors turned into UsageErrors that say what to do."""
    try:
        return describe_raw(preset, overrides)
    except PresetError as error:
        if error.code == "MIMIC_ERROR_UNKNOWN_PRESET":
            if "/" in preset or preset.endswith(".preset"):
                raise UsageError(f"preset file '{preset}' cannot be read",
                                 "give a built-in name or the path of a .preset file") from None
            raise UsageError(f"unknown preset '{preset}' (known: {', '.join(names())})",
                             "mimic presets lists them") from None
        if error.code == "MIMIC_ERROR_UNKNOWN_CONFIG_FIELD":
            raise UsageError(error.detail,
                             "mimic presets show default lists every field") from None
        raise UsageError(error.detail, "mimic presets show PRESET shows every field's value "
                                       "and description") from None


def check(preset, overrides=""):
    """Raises UsageError unless mimicInit would accept the preset with the overrides."""
    describe(preset, overrides)
