# Bug: read of uninitialised memory. The accumulator is made with torch.empty where torch.zeros
# was meant (found once, though every step of the loop reads it).
import os

import torch
import torch_mimic  # noqa: F401

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"
dev = torch.device("privateuseone", 0)


def main():
    total = torch.zeros(4096, device=dev) if CLEAN else torch.empty(4096, device=dev)
    for step in range(3):
        total += torch.full((4096,), float(step), device=dev)
    print(total[0].item())


main()
