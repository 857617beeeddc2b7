"""Fused bias + GELU on the mimic device, both ways a custom op can be written:

  1. with the Python kernel API: the kernel in assembler text, loaded by torch_mimic.kernels.load
     and launched with Module.launch on the current stream (``bias_gelu_kernel_api``);
  2. as a C++ extension (bias_gelu_ext.cpp) built with torch.utils.cpp_extension against an
     installed SDK, giving torch.ops.mimic_ext.bias_gelu (``build_extension``).

Both compute gelu(x + bias) (the erf form) in one kernel: one read of x and one write of the
result. Run it (after `cmake --install build --prefix P`) as

    /usr/bin/python3 examples/custom_ops/bias_gelu.py P

It checks both against PyTorch's CPU result and prints the simulated time of each.
"""
import os
import sys

import torch
import torch.nn.functional as F
import torch_mimic

# One row per pass of the loop: rows wgid, wgid + griddim, ...; a row, the bias and the result
# each take 16 KiB of scratchpad, so a row has at most 4096 floats.
BIAS_GELU_ASM = """
.kernel bias_gelu 40                # out, x, bias, rows, cols: 5 argument slots
  arg s1, 0
  arg s2, 1
  arg s3, 2
  arg s4, 3
  arg s5, 4
  li s6, 4
  dma.desc.f32 d0, 0, s5, s6, s6    # a row: cols floats, 4-byte strides
  li s7, 0                          # scratchpad: the row at 0, the bias at 16 KiB,
  li s8, 16384                      # the result at 32 KiB
  li s9, 32768
  dma.load s10, s8, s3, d0          # the bias, once per workgroup
  wait s10
  salu.mul s11, s5, #4              # bytes per row
  wgid s12, 0                       # this workgroup's first row
  griddim s13, 0
top:
  scmp.lt s14, s12, s4
  brz s14, done
  salu.mul s15, s12, s11
  salu.add s16, s2, s15
  salu.add s17, s1, s15
  dma.load s18, s7, s16, d0
  wait s18
  vbin.add.f32 s7, s7, s8, s5       # v = x + bias
  vbins.mul.f32 s9, s7, #0.70710678118654752, s5
  vun.erf.f32 s9, s9, s5
  vbins.add.f32 s9, s9, #1.0, s5
  vbin.mul.f32 s9, s9, s7, s5
  vbins.mul.f32 s9, s9, #0.5, s5    # 0.5 v (1 + erf(v / sqrt 2))
  dma.store s19, s17, s9, d0
  wait s19                          # the next row must not overwrite the result being stored
  salu.add s12, s12, s13
  br top
done:
  exit
.end
"""
MAX_COLS = 4096

_module = None


def bias_gelu_kernel_api(x, bias):
    """gelu(x + bias) through torch_mimic.kernels: float32, bias over the last dimension."""
    global _module
    if _module is None:
        _module = torch_mimic.kernels.load(BIAS_GELU_ASM)
    if x.dtype != torch.float32 or bias.dtype != torch.float32:
        raise TypeError(f"bias_gelu: float32 tensors only, got {x.dtype} and {bias.dtype}")
    cols = x.shape[-1]
    if bias.shape != (cols,) or not 1 <= cols <= MAX_COLS:
        raise ValueError(f"bias_gelu: bias {tuple(bias.shape)} for x {tuple(x.shape)}: bias must "
                         f"be 1-D with x's last dimension, at most {MAX_COLS}")
    x, bias = x.contiguous(), bias.contiguous()
    out = torch.empty_like(x)
    rows = x.numel() // cols
    if rows:
        units = torch_mimic.get_device_properties(x.device).compute_units
        _module.launch("bias_gelu", min(rows, 2 * units), out, x, bias, rows, cols)
    return out


def build_extension(prefix, build_directory=None, extra_sources=()):
    """Builds bias_gelu_ext.cpp (and ``extra_sources``) against the SDK installed in ``prefix``
    and loads it into this process: torch.ops.mimic_ext.bias_gelu then exists. Import
    torch_mimic first."""
    from torch.utils import cpp_extension

    backend_dir = os.path.dirname(torch_mimic.__file__)  # libmimic_torch.so
    lib_dir = os.path.join(prefix, "lib")
    cpp_extension.load(
        name="bias_gelu_ext",
        sources=[os.path.join(os.path.dirname(os.path.abspath(__file__)), "bias_gelu_ext.cpp"),
                 *extra_sources],
        extra_include_paths=[os.path.join(prefix, "include")],
        extra_ldflags=[f"-L{lib_dir}", "-lmimic_isa", "-lmimic", f"-L{backend_dir}",
                       "-lmimic_torch", f"-Wl,-rpath,{lib_dir}:{backend_dir}"],
        build_directory=build_directory,
        is_python_module=False)


def main(prefix):
    device = torch_mimic.DEVICE_TYPE
    torch.manual_seed(0)
    x = torch.randn(64, 1000)
    bias = torch.randn(1000)
    v = x.double() + bias.double()
    want = F.gelu(v)
    # Six float32 roundings and xsimd's erf (a few ulps), through a slope below 1.13.
    bound = 16 * torch.finfo(torch.float32).eps * (v.abs() + 1)
    build_extension(prefix)
    ways = {"kernel API": bias_gelu_kernel_api, "C++ extension": torch.ops.mimic_ext.bias_gelu}
    for way, op in ways.items():
        xd, bd = x.to(device), bias.to(device)
        torch_mimic.synchronize()
        start = torch_mimic.sim_time()
        got = op(xd, bd).cpu()
        error = (got.double() - want).abs()
        print(f"{way}: max |error| {error.max().item():.2e}, "
              f"{(torch_mimic.sim_time() - start) / 1e3:.1f} us simulated (with the copy back)")
        if (error > bound).any():
            sys.exit(f"bias_gelu: the {way} result is off by up to {error.max().item()}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MIMIC_PREFIX", "/usr/local"))
