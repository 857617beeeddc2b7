"""mimic presets [show NAME [--set field=value,...]]: the presets and every parameter."""
import textwrap

from . import presets_api
from .common import UsageError, box_table, format_bytes

TOPOLOGY = {"ring": "ring", "full_mesh": "full mesh", "switch": "switch"}
SIZE_SUFFIXES = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10),
                 ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("KB", 1e3), ("T", 1 << 40),
                 ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1))
SHOW_WIDTH = 100  # columns of `presets show`
VALUE_COLUMN_MAX = 28
SOURCE_MIN_WIDTH = 30


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "presets", usage="mimic presets [show NAME [--set FIELD=VALUE,...]]",
        help="list the presets, or show every parameter of one",
        description="Without arguments: the built-in presets side by side. "
                    "`mimic presets show NAME`: every parameter of the model with its value, "
                    "default, source and description; --set marks what overrides change "
                    "(old -> new).")
    parser.add_argument("action", nargs="?", choices=["show"], help="show one preset")
    parser.add_argument("name", nargs="?", help="preset name or .preset file (with show)")
    parser.add_argument("--set", metavar="FIELD=VALUE,...", default="",
                        help="overrides, as MIMIC_OVERRIDES takes them; aliases such as "
                             "hbm_bandwidth are accepted")
    return parser


def parse_number(text):
    """A preset value as a number: '1500', '164KiB', '1.5e9'; None if it is not one."""
    text = text.strip()
    for suffix, scale in SIZE_SUFFIXES:
        if text.endswith(suffix) and text[:-len(suffix)].strip():
            text, factor = text[:-len(suffix)].strip(), scale
            break
    else:
        factor = 1
    try:
        return float(text) * factor
    except ValueError:
        return None


def overrides_from(text):
    """'alias=value,field=value' with aliases resolved; raises UsageError on bad syntax."""
    items = []
    for item in filter(None, (i.strip() for i in text.split(","))):
        field, sep, value = item.partition("=")
        if not sep or not field.strip():
            raise UsageError(f"override '{item}' is not of the form field=value",
                             "e.g. --set hbm_bandwidth=2000,compute.units=8")
        items.append(f"{presets_api.resolve_field(field.strip())}={value.strip()}")
    return ",".join(items)


def summary(params):
    """The headline figures of a described preset, by name, as numbers where they are."""
    value = {p["field"]: p["value"] for p in params}
    clock_hz = parse_number(value["compute.clock_mhz"]) * 1e6
    matrix_hz = parse_number(value["compute.matrix_clock_mhz"]) * 1e6 or clock_hz
    units = parse_number(value["compute.units"])
    return {"device": value["device.name"],
            "devices": int(parse_number(value["system.num_devices"])),
            "units": int(units), "clock_mhz": clock_hz / 1e6,
            "hbm_bytes": parse_number(value["hbm.capacity"]),
            "hbm_gbps": parse_number(value["hbm.bandwidth_gbps"]),
            "f32_tflops": 2 * parse_number(value["isa.mma_f32_macs_per_cycle"]) * units * matrix_hz
            / 1e12,
            "f16_tflops": 2 * parse_number(value["isa.mma_f16_macs_per_cycle"]) * units * matrix_hz
            / 1e12,
            "topology": value["device_link.topology"],
            "link_gbps": parse_number(value["device_link.bandwidth_gbps"])}


def list_presets():
    rows = []
    for name in presets_api.names():
        s = summary(presets_api.describe(name))
        rows.append([name, s["device"], s["devices"], s["units"], f"{s['clock_mhz']:.0f} MHz",
                     format_bytes(s["hbm_bytes"]), f"{s['hbm_gbps']:g} GB/s",
                     f"{s['f32_tflops']:.1f}", f"{s['f16_tflops']:.1f}",
                     f"{TOPOLOGY.get(s['topology'], s['topology'])} {s['link_gbps']:g} GB/s"])
    print(box_table(["Preset", "Device", "Devs", "CUs", "Clock", "HBM", "HBM BW", "TF32/s",
                     "TF16/s", "Links (each way)"], rows,
                    ["<", "<", ">", ">", ">", ">", ">", ">", ">", "<"]))
    print("TF32/s, TF16/s: peak matrix TFLOP/s per device.")
    print("mimic presets show NAME shows every parameter; MIMIC_PRESET=NAME or --preset picks one.")


def _readable_default(param):
    """A size default the way the preset writes sizes (16 GiB, not 17179869184)."""
    value, default = param["value"], param["default"]
    written_as_size = parse_number(value) is not None and not value.replace(".", "").isdigit()
    if written_as_size and default.isdigit():
        return format_bytes(int(default))
    return default


def _value_text(p):
    """The value column of one parameter: old -> new for an override, and its default."""
    if p["overridden"] and p["value"] != p["preset_value"]:
        value = f"{p['preset_value']} -> {p['value']}"
    else:
        value = p["value"]
    if not p["set_by_preset"] and not p["overridden"]:
        return f"{value}  (default)"
    if p["value"] != p["default"]:
        return f"{value}  (default {_readable_default(p)})"
    return value


def show(name, overrides, width=SHOW_WIDTH):
    params = presets_api.describe(name, overrides)
    field_width = max(len(p["field"]) for p in params)
    values = {p["field"]: _value_text(p) for p in params}
    # Long values (overrides with their defaults) spill the source onto the next line rather
    # than push every source far to the right.
    value_width = min(max(len(v) for v in values.values()), VALUE_COLUMN_MAX)
    source_column = 2 + field_width + 2 + value_width + 2
    source_width = max(width - source_column, SOURCE_MIN_WIDTH)
    print(f"preset {name}" + (f" with {overrides}" if overrides else ""))
    print(f"\n  {'field':<{field_width}}  {'value':<{value_width}}  source")
    # Sections in the order they first appear; the model reads some fields out of turn.
    sections = list(dict.fromkeys(p["field"].split(".")[0] for p in params))
    params = sorted(params, key=lambda p: sections.index(p["field"].split(".")[0]))
    section = None
    for p in params:
        group = p["field"].split(".")[0]
        if group != section:
            print(f"\n[{group}]")
            section = group
        mark = "*" if p["overridden"] else " "
        head = f"{mark} {p['field']:<{field_width}}  {values[p['field']]}"
        source = textwrap.wrap(p["source"] or "-", source_width)
        if len(head) > source_column - 2:
            print(head)
            head = ""
        print(f"{head:<{source_column}}{source[0]}")
        for line in source[1:]:
            print(f"{'':<{source_column}}{line}")
        for line in textwrap.wrap(p["description"], width - 12 - field_width):
            print(f"  {'':<{field_width}}    {line}")
    aliases = ", ".join(f"{a}={f}" for a, f in sorted(presets_api.ALIASES.items()))
    print("\n" + textwrap.fill("* set by --set. source: where the value comes from (the comment "
                               "at the end of its line in the preset file); - when none is "
                               "given.", width))
    print(textwrap.fill(f"Aliases for --set and --vary: {aliases}", width))


def run(args):
    if args.action is None:
        if args.name or args.set:
            raise UsageError("a preset name and --set go with `show`",
                             f"mimic presets show {args.name or 'NAME'}")
        list_presets()
        return 0
    if not args.name:
        raise UsageError("`presets show` needs a preset name", "mimic presets lists them")
    show(args.name, overrides_from(args.set))
    return 0
