"""The README's commands and code samples, extracted from README.md and run, so that the README
cannot go stale: the C++ tour of the driver (compiled against the build and run), the kernel in
assembler text (assembled with mimic-asm and launched by the C++ kernel sample), the PyTorch and
profiler samples, the torch.distributed sample (as a group of one) and the `mimic` commands."""
import os
import re
import shlex
import socket
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("MIMIC_CLI", "")
BUILD = os.path.dirname(os.path.dirname(CLI)) if CLI else ""


def blocks(language):
    """The README's fenced code blocks of a language ("" for unlabelled ones), in order."""
    with open(os.path.join(ROOT, "README.md")) as readme:
        text = readme.read()
    return [m.group(2) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)
            if m.group(1) == language]


def block_with(language, marker):
    [block] = [b for b in blocks(language) if marker in b]
    return block


def need_build():
    if not BUILD:
        pytest.skip("MIMIC_CLI is not set: run through ctest, which points it at the build")


def run(command, **kwargs):
    env = dict(os.environ, MIMIC_FALLBACK="silent", SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1",
               **kwargs.pop("env", {}))
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=env,
                          **kwargs)
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    return done.stdout


def test_driver_and_kernel_samples_compile_and_run(tmp_path):
    need_build()
    (tmp_path / "scale.s").write_text(block_with("", ".kernel scale2"))
    asm = block_with("sh", "mimic-asm scale.s").split("#")[0].split()
    run([os.path.join(BUILD, asm[0].replace("build/", "", 1)), *asm[1:]], cwd=tmp_path)
    tour = block_with("cpp", "mimicEventElapsedTime")
    launch = block_with("cpp", "mimicLaunchKernel")
    program = tmp_path / "readme.cpp"
    program.write_text(
        "#include <cstdio>\n#include <fstream>\n#include <iterator>\n#include <vector>\n" +
        tour.replace('#include "mimic/mimic.hpp"', '#include "mimic/mimic.hpp"\nint main() {') +
        'std::ifstream in("scale.mimod", std::ios::binary);\n'
        "std::vector<char> image((std::istreambuf_iterator<char>(in)), {});\n"
        "void* src = dev;\nvoid* dst; MIMIC_CHECK(mimicMemAlloc(0, 1 << 20, &dst));\n" +
        launch +
        'std::printf("copy %.4f ms, kernel flops %llu\\n", ms, '
        "(unsigned long long)counters.flops);\nreturn 0;\n}\n")
    binary = tmp_path / "readme"
    run(["g++", "-std=c++17", str(program), "-I", os.path.join(ROOT, "driver", "include"),
         "-L", os.path.join(BUILD, "driver"), "-lmimic",
         "-Wl,-rpath," + os.path.join(BUILD, "driver"), "-o", str(binary)])
    out = run([str(binary)], cwd=tmp_path, env={"MIMIC_PRESET": "tiny"})
    assert "copy " in out and "kernel flops 2048" in out, out  # 8 workgroups x 256 floats


def test_pytorch_and_profiler_samples_run(tmp_path):
    pytorch = block_with("python", "fallback_report")
    profiler = block_with("python", "export_timeline")
    out = run([sys.executable, "-c", pytorch + profiler], cwd=tmp_path)
    assert "simulated ms:" in out and "{}" in out, out
    assert (tmp_path / "trace.json").exists() and (tmp_path / "trace.html").exists()


def test_compile_sample_runs(tmp_path):
    out = run([sys.executable, "-c", block_with("python", "torch_mimic.compile(optimizer)")],
              cwd=tmp_path)
    assert float(out.split()[0]) > 0, out  # the loss
    # Both graphs fused something; AdamW's step is 3 list launches over the 4 parameters.
    assert "'forward': 0" not in out and "'backward': 0" not in out, out
    assert out.strip().endswith("[4, 4, 4]"), out


def test_distributed_sample_runs_as_a_group_of_one(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    sample = block_with("python", 'init_process_group("mimic")')
    run([sys.executable, "-c", sample + "\nassert x[0].item() == 1.0\n"], cwd=tmp_path,
        env={"RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
             "MASTER_PORT": str(port)})


def test_mimic_commands_exist_and_the_quick_ones_run(tmp_path):
    need_build()
    commands = [line.split("#")[0].split() for line in block_with("sh", "mimic devices")
                .splitlines() if line.startswith("build/bin/mimic")]
    assert len(commands) >= 8
    for command in commands:
        subcommand = command[1]
        if subcommand in ("devices", "presets"):
            out = run([CLI, *command[1:]])
            assert out.strip(), command
        else:  # they need a user's script or take minutes: their usage must parse
            out = run([CLI, subcommand, "--help"])
            ours = command[2:command.index("--")] if "--" in command else command[2:]
            for option in (word for word in ours if word.startswith("--")):
                assert option in out, (shlex.join(command), option)
