# Bug: a missing record_stream with an allocator reuse. x, last used on the side stream, is
# freed without record_stream: the allocator hands its block to the next allocation of the
# default stream, which overwrites it while the side stream may still read it.
import os

import torch
import torch_mimic

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"
dev = torch.device("privateuseone", 0)


def main():
    side = torch_mimic.Stream()
    x = torch.ones(1 << 16, device=dev)
    side.wait_stream(torch_mimic.current_stream())
    with torch_mimic.stream(side):
        y = x * 2
    if CLEAN:
        x.record_stream(side)
    del x
    z = torch.zeros(1 << 16, device=dev)
    torch_mimic.synchronize()
    print(y.sum().item(), z.sum().item())


main()
