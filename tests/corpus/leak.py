# Bug: a leak. A raw scratch buffer from the caching allocator is never given back.
import os

import torch
import torch_mimic

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"


def main():
    scratch = torch_mimic.caching_allocator_alloc(1 << 20)
    x = torch.ones(16, device="privateuseone")
    print(x.sum().item())
    if CLEAN:
        torch_mimic.caching_allocator_delete(scratch)


main()
