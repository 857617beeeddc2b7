# Bug: a missing wait_stream. The side stream reads x before the default stream has written it.
import os

import torch
import torch_mimic

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"
dev = torch.device("privateuseone", 0)


def main():
    side = torch_mimic.Stream()
    x = torch.ones(1 << 16, device=dev)
    if CLEAN:
        side.wait_stream(torch_mimic.current_stream())
    with torch_mimic.stream(side):
        y = x * 2
    torch_mimic.synchronize()
    print(y.sum().item())


main()
