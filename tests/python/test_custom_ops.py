"""Custom ops: the fused bias + GELU of examples/custom_ops both ways (torch_mimic.kernels and a
torch.utils.cpp_extension built against an installed SDK), and the kernel API's contract:
sources it loads, errors naming what is wrong, streams, the profiler and the sanitizer."""
import importlib.util
import os
import subprocess
import sys

import pytest
import torch
import torch.nn.functional as F

import torch_mimic
from torch_mimic import kernels

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("MIMIC_CLI", "")
BUILD = os.path.dirname(os.path.dirname(CLI)) if CLI else ""

_spec = importlib.util.spec_from_file_location(
    "bias_gelu", os.path.join(ROOT, "examples", "custom_ops", "bias_gelu.py"))
bias_gelu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bias_gelu)

SCALE_ASM = """
.kernel scale 24                  # y, x, alpha: y[0:256] = alpha * x[0:256]
  arg s1, 0
  arg s2, 1
  arg s3, 2
  li s4, 256
  li s5, 4
  dma.desc.f32 d0, 0, s4, s5, s5
  li s6, 0
  dma.load s7, s6, s2, d0
  wait s7
  vbins.mul.f32 s6, s6, s3, s4
  dma.store s8, s1, s6, d0
  wait s8
  exit
.end
"""


def within_error_bound(got, x, bias):
    """gelu(x + bias) in float32 steps (an add, 4 multiplies or adds, erf) against the float64
    result: each step rounds by half an ulp and xsimd's erf is within a few ulps, and the
    GELU's slope is below 1.13, so 16 ulps of (|v| + 1) bound the error."""
    v = x.double() + bias.double()
    want = F.gelu(v)
    bound = 16 * torch.finfo(torch.float32).eps * (v.abs() + 1)
    return bool(((got.double() - want).abs() <= bound).all())


def test_bias_gelu_with_the_kernel_api(device):
    torch.manual_seed(0)
    x, bias = torch.randn(37, 1000) * 3, torch.randn(1000)
    got = bias_gelu.bias_gelu_kernel_api(x.to(device), bias.to(device)).cpu()
    assert within_error_bound(got, x, bias)
    assert not within_error_bound(got + 1e-3, x, bias)  # the bound can fail


def test_bias_gelu_as_a_cpp_extension(device, tmp_path):
    """Installs the build into a scratch prefix and builds bias_gelu_ext.cpp (with
    torch_api_probe.cpp) against it with torch.utils.cpp_extension: compiles of torch TUs, about
    a minute on a loaded 2-core machine, so one test checks the op and mimic/torch.h's streams."""
    if not BUILD:
        pytest.skip("MIMIC_CLI is not set: run through ctest, which points it at the build")
    prefix = tmp_path / "prefix"
    env = dict(os.environ, PYTHONUSERBASE=str(tmp_path / "userbase"))  # mimic.pth goes there
    subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix)], env=env, check=True,
                   capture_output=True, timeout=300)
    probe = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_api_probe.cpp")
    bias_gelu.build_extension(str(prefix), build_directory=str(tmp_path), extra_sources=[probe])
    torch.manual_seed(1)
    x, bias = torch.randn(4, 33, 512) * 3, torch.randn(512)
    got = torch.ops.mimic_ext.bias_gelu(x.to(device), bias.to(device)).cpu()
    assert got.shape == x.shape
    assert within_error_bound(got, x, bias)
    with pytest.raises(RuntimeError, match="bias must be 1-D with x's last dimension"):
        torch.ops.mimic_ext.bias_gelu(x.to(device), bias[:7].to(device))

    # mimic/torch.h's streams, from C++ (tests/python/torch_api_probe.cpp).
    side = torch_mimic.Stream(device)
    side_id = side._cdata & 0xFFFFFFFFFFFF  # c10::Stream::pack keeps the id in the low 48 bits
    with torch_mimic.stream(side):
        current, round_trip, default, guarded, guarded_queue, after, index, count = \
            torch.ops.mimic_probe.streams(torch_mimic.default_stream(device)._cdata)
    assert (current, round_trip, default) == (side_id, 1, 0)
    assert (guarded, guarded_queue, after) == (0, 1, side_id)
    assert (index, count) == (0, torch_mimic.device_count())
    with pytest.raises(RuntimeError, match="is not the queue of a stream of mimic device 0"):
        torch.ops.mimic_probe.foreign_queue()


def scale_on(device, module, **launch):
    x = torch.arange(256, dtype=torch.float32)
    y = torch.empty(256, device=device)
    module.launch("scale", 1, y, x.to(device), -2.5, **launch)
    return y.cpu(), x * -2.5


def test_sources_text_image_and_files(device, tmp_path):
    text_module = kernels.load(SCALE_ASM)
    assert text_module.names == ["scale"]
    image = bytes(torch.ops.mimic.kernels_assemble(SCALE_ASM).numpy())
    (tmp_path / "scale.s").write_text(SCALE_ASM)
    (tmp_path / "scale.mimod").write_bytes(image)
    for module in (text_module, kernels.load(image), kernels.load(str(tmp_path / "scale.s")),
                   kernels.load(tmp_path / "scale.mimod")):
        got, want = scale_on(device, module)
        assert torch.equal(got, want)


def test_errors_name_what_is_wrong(device):
    module = kernels.load(SCALE_ASM)
    x = torch.ones(256, device=device)
    with pytest.raises(ValueError, match="no kernel 'scal' .*it has: scale"):
        module.launch("scal", 1, x, x, 1.0)
    with pytest.raises(TypeError, match="'scale' takes 3 argument\\(s\\), got 2"):
        module.launch("scale", 1, x, x)
    with pytest.raises(TypeError, match="argument 1: a tensor on cpu, not on the mimic device"):
        module.launch("scale", 1, x, torch.ones(256), 1.0)
    with pytest.raises(TypeError, match="argument 2: expected a mimic tensor, an int or a float, "
                                        "got str"):
        module.launch("scale", 1, x, x, "2")
    with pytest.raises(ValueError, match="grid must be a positive int"):
        module.launch("scale", (0, 1), x, x, 1.0)
    with pytest.raises(ValueError, match="does not assemble: line 3"):
        kernels.load(".kernel k 8\n  arg s1, 0\n  bogus s1\n.end\n")
    with pytest.raises(ValueError, match="not a valid module image"):
        kernels.load(b"MIMICMOD\x01")
    with pytest.raises(ValueError, match="neither a file nor assembler text"):
        kernels.load("no/such/file.s")


def test_launch_on_a_given_stream_is_ordered_with_it(device):
    module = kernels.load(SCALE_ASM)
    side = torch_mimic.Stream(device)
    x = torch.arange(256, dtype=torch.float32, device=device)
    y = torch.empty(256, device=device)
    side.wait_stream(torch_mimic.current_stream(device))
    module.launch("scale", 1, y, x, 3.0, stream=side)
    torch_mimic.current_stream(device).wait_stream(side)
    assert torch.equal((y + 1).cpu(), torch.arange(256, dtype=torch.float32) * 3 + 1)
    with torch_mimic.stream(side):  # the current stream, when none is given
        got, want = scale_on(device, module)
    assert torch.equal(got, want)


def test_profiler_shows_the_kernel_under_its_host_op(device):
    from torch_mimic.profiler import profile

    module = kernels.load(SCALE_ASM)
    x = torch.ones(256, device=device)
    torch_mimic.synchronize()
    with profile() as prof:
        module.launch("scale", 1, x, x, 2.0)
    trace = prof.trace
    [kernel] = [a for a in trace["activities"] if a["kind"] == "kernel"]
    assert kernel["name"] == "scale" and kernel["grid"] == [1, 1, 1]
    assert kernel["counters"]["hbm_bytes_read"] == 1024
    [op] = [op for op in trace["host_ops"] if op["id"] == kernel["correlation"]]
    assert op["name"] == "mimic.kernels:scale"


def test_sanitizer_names_the_launch(tmp_path):
    """A launch that reads past its tensor (128 floats, the kernel reads 256), in a process of
    its own with MIMIC_SANITIZE (the sanitizer starts with mimic)."""
    program = (
        "import torch, torch_mimic\n"
        f"module = torch_mimic.kernels.load({SCALE_ASM!r})\n"
        "x = torch.ones(128, device=torch_mimic.DEVICE_TYPE)\n"
        "y = torch.empty(256, device=torch_mimic.DEVICE_TYPE)\n"
        "module.launch('scale', 1, y, x, 2.0)\n"
        "torch_mimic.synchronize()\n")
    env = dict(os.environ, MIMIC_SANITIZE="memcheck", MIMIC_FALLBACK="silent")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env, cwd=tmp_path)
    assert "mimic memcheck: kernel 'scale'" in done.stderr, done.stderr
    assert "mimic.kernels:scale (<string>:5)" in done.stderr, done.stderr
