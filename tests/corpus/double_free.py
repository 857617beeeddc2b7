# Bug: a double free. An error path gives the raw buffer back, and the cleanup gives it again.
import os

import torch_mimic

CLEAN = os.environ.get("MIMIC_CORPUS_CLEAN") == "1"


def main():
    scratch = torch_mimic.caching_allocator_alloc(4096)
    torch_mimic.caching_allocator_delete(scratch)
    if not CLEAN:
        try:
            torch_mimic.caching_allocator_delete(scratch)
        except RuntimeError as error:
            print("caught:", error)


main()
