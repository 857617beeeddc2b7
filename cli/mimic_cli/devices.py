"""mimic devices: the simulated devices and their properties, in the manner of nvidia-smi."""
import os

from . import presets_api
from .common import add_device_options, base_overrides, box_table, format_bytes, format_ns
from .presets import TOPOLOGY



def add_parser(subparsers):
    parser = subparsers.add_parser(
        "devices", help="the simulated devices and their properties",
        description="Builds the simulated system (as a PyTorch program would get it) and lists "
                    "its devices: memory, compute units, clock, peak FLOP/s, HBM and links.")
    add_device_options(parser)
    return parser


def run(args):
    overrides = base_overrides(args.devices)
    params = {p["field"]: p["value"] for p in presets_api.describe(args.preset, overrides)}
    # mimicInit reads these when torch_mimic first touches the device, in this very process.
    os.environ["MIMIC_PRESET"] = args.preset
    os.environ.pop("MIMIC_NUM_DEVICES", None)
    if overrides:
        os.environ["MIMIC_OVERRIDES"] = overrides
    import torch_mimic

    count = torch_mimic.device_count()
    links = TOPOLOGY.get(params["device_link.topology"], params["device_link.topology"])
    rows = []
    for index in range(count):
        p = torch_mimic.get_device_properties(index)
        clock_hz = p.matrix_clock_mhz * 1e6
        f32 = 2 * p.mma_f32_macs_per_cycle * p.compute_units * clock_hz / 1e12
        f16 = 2 * p.mma_f16_macs_per_cycle * p.compute_units * clock_hz / 1e12
        used = torch_mimic.memory_reserved(index)
        rows.append([index, p.name, p.preset,
                     f"{format_bytes(used)} / {format_bytes(p.total_memory)}",
                     p.compute_units, f"{p.clock_mhz:g} MHz", f"{f32:.1f}", f"{f16:.1f}",
                     f"{p.hbm_bandwidth_gbps:g}",
                     f"{links} {p.device_link_bandwidth_gbps:g} GB/s" if count > 1 else "-"])
    first = torch_mimic.get_device_properties(0)
    print(f"mimic simulated system: preset {first.preset}, {count} device"
          f"{'s' * (count != 1)}, simulated clock at {format_ns(torch_mimic.sim_time())}")
    print(box_table(["#", "Name", "Preset", "Memory used / total", "CUs", "Clock",
                     "TFLOP/s f32", "TFLOP/s f16", "HBM GB/s", "Links (each way)"], rows,
                    [">", "<", "<", ">", ">", ">", ">", ">", ">", "<"]))
    print(f"Per device: {first.vector_lanes} vector lanes and "
          f"{format_bytes(first.scratchpad_bytes)} scratchpad per CU, {first.hardware_queues} "
          f"hardware queues, host link {first.host_link_bandwidth_gbps:g} GB/s each way.")
    print("PyTorch: torch.device('privateuseone', i) after `import torch_mimic`; "
          "mimic presets show " + first.preset + " lists every parameter.")
    return 0
