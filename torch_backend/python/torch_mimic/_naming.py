"""The device's name in PyTorch: ``privateuseone`` on 1.13, ``mimic`` where it can be renamed."""
import sys

import torch

if hasattr(torch.utils, "rename_privateuse1_backend"):  # PyTorch 2.x
    torch.utils.rename_privateuse1_backend("mimic")
    DEVICE_TYPE = "mimic"
else:
    DEVICE_TYPE = "privateuseone"

torch._register_device_module(DEVICE_TYPE, sys.modules[__package__])
