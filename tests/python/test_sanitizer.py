"""racecheck (MIMIC_SANITIZE=racecheck) on PyTorch programs with one seeded stream bug each, and
their fixed versions: every bug is found and named, the fixed programs give no finding. Each
program runs in a process of its own (the sanitizer is chosen when mimic initialises)."""
import os
import subprocess
import sys

import pytest

PROLOGUE = """
import torch, torch_mimic
dev = torch.device("privateuseone", 0)
side = torch_mimic.Stream()
"""

PROGRAMS = {
    # The side stream reads x before the default stream has written it.
    "missing_wait_stream": """
x = torch.ones(1 << 16, device=dev)
{fix}
with torch_mimic.stream(side):
    y = x * 2
torch_mimic.synchronize()
""",
    # x, last used on the side stream, is freed without record_stream: the allocator hands its
    # block to the next allocation of the default stream, which overwrites it while the side
    # stream may still read it.
    "missing_record_stream": """
x = torch.ones(1 << 16, device=dev)
side.wait_stream(torch_mimic.current_stream())
with torch_mimic.stream(side):
    y = x * 2
{fix}
del x
z = torch.zeros(1 << 16, device=dev)
torch_mimic.synchronize()
""",
}
FIXES = {"missing_wait_stream": "side.wait_stream(torch_mimic.current_stream())",
         "missing_record_stream": "x.record_stream(side)"}


def run(name, fixed):
    program = PROLOGUE + PROGRAMS[name].format(fix=FIXES[name] if fixed else "")
    env = dict(os.environ, MIMIC_SANITIZE="racecheck", MIMIC_FALLBACK="silent")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    return [line for line in done.stderr.splitlines() if line.startswith("mimic racecheck:")]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_seeded_stream_bug_is_found(name):
    findings = run(name, fixed=False)
    assert len(findings) == 1, findings
    assert "no event or host wait orders them" in findings[0]
    assert "allocation at" in findings[0]
    assert findings[0].count("host op aten::") == 2, findings[0]  # both commands' ops


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_fixed_program_has_no_finding(name):
    assert run(name, fixed=True) == []
