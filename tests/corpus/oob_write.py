# Bug: out-of-bounds write. The extension uploads 1001 floats into a tensor of 1000.
import os
import struct

import torch
from driver_extension import upload

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"
dev = torch.device("privateuseone", 0)


def main():
    x = torch.zeros(1000, device=dev)
    values = struct.pack("1001f", *range(1001))
    upload(x.data_ptr(), values[:4000] if CLEAN else values)
    print(x.sum().item())


main()
