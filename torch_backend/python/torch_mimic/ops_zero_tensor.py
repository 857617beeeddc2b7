"""aten::_efficientzerotensor for the device: a zero-filled device tensor.

Forward-mode AD stands in for an undefined tangent with _efficientzerotensor (for example the
LU's tangent in linalg_lu_solve's JVP when only B is dual). PyTorch 1.13 has only a CPU kernel
for it: through the fallback it made a tensor that claims the mimic device yet carries the CPU
dispatch key and no storage, and the first CPU kernel that read it (tril in that JVP) crashed.
Real zeros give the formulas the same values; only the ZeroTensor shortcut is lost."""
import torch

from ._lib import impl


@impl("_efficientzerotensor")
def efficientzerotensor(size, *, dtype=None, layout=None, device=None, pin_memory=None):
    return torch.zeros(size, dtype=dtype, device=device)
