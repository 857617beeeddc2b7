"""The compiled runtime's kernel sharing: kernels are cached by program text (scalars are
arguments), so identical layers share their kernels and a 6-layer model builds no more kernels
than a 1-layer one. Each count comes from a fresh process, whose kernel cache starts empty."""
import os
import subprocess
import sys

_BUILD_AND_COUNT = r"""
import sys, torch, torch_mimic
from torch import nn
layers = int(sys.argv[1])
device = torch.device(torch_mimic.DEVICE_TYPE, 0)
torch.manual_seed(0)
model = nn.Sequential(*[nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
                        for _ in range(layers)]).to(device)
x = torch.randn(2, 16, 64).to(device).requires_grad_()
compiled = torch_mimic.compile(model)
for _ in range(2):
    compiled(x).sum().backward()
torch_mimic.synchronize()
assert not any(c["eager_reason"] for c in torch_mimic.compile_report()[-1]["captures"])
print(torch_mimic.kernel_cache_stats()["misses"])
"""


def _kernels_built(layers):
    result = subprocess.run([sys.executable, "-c", _BUILD_AND_COUNT, str(layers)],
                            capture_output=True, text=True, env=dict(os.environ), timeout=600)
    assert result.returncode == 0, result.stderr
    return int(result.stdout.split()[-1])


def test_identical_layers_share_their_kernels():
    assert _kernels_built(6) == _kernels_built(1)
