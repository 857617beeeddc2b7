# Bug: use after free. The extension reads a tensor's bytes after the tensor was freed (its
# block is still cached by the allocator, so only the sanitizer can tell).
import os

import torch
from driver_extension import download

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"
dev = torch.device("privateuseone", 0)


def main():
    x = torch.ones(1024, device=dev)
    address = x.data_ptr()
    if CLEAN:
        print(download(address, 4096)[1][:4])
    del x
    if not CLEAN:
        print(download(address, 4096)[1][:4])  # the poison pattern, 0xff


main()
