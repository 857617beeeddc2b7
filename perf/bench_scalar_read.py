"""Host cost of one synchronous scalar read of device data: `all(x)` over a device bool tensor,
which is what PyTorch's test_linspace does with a million elements. Python iterates the tensor
(one 0-d view per element) and calls bool() on each, i.e. one `_local_scalar_dense` per element,
a 1-byte device-to-host copy that the host blocks on. Measured side by side with the same loop on
PyTorch's CPU device in one run (rounds interleaved, median of rounds), so a loaded machine moves
both sides alike. Also splits the mimic cost into its parts: the views alone (iteration without
the reads), the reads alone (bool() of one 0-d view, repeated), the copy to a CPU tensor that
`_local_scalar_dense` makes (one.cpu()), and the driver's synchronous 1-byte copy alone
(mimicMemcpy through ctypes, which adds about a microsecond of its own).

Target (issue 18, "0 hangs"): a read costs no more than a few tens of microseconds of host time,
so that PyTorch's 1M-element loops finish well inside a 60 s per-test watchdog.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_scalar_read.py [N]
"""
import ctypes
import os
import statistics
import sys
import time

os.environ.setdefault("MIMIC_FALLBACK", "silent")
os.environ.setdefault("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1")

import torch  # noqa: E402

import torch_mimic  # noqa: E402,F401

ROUNDS = 5
N = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def _per_element_us(fn, count):
    """Wall time and the calling thread's CPU time per element. A read runs the simulation on
    the calling thread (sim/simulator.h), so on a loaded host the CPU time is the cost of the
    work and the wall time adds the wait for a core."""
    t0, c0 = time.perf_counter(), time.thread_time()
    fn()
    return ((time.perf_counter() - t0) / count * 1e6, (time.thread_time() - c0) / count * 1e6)


def _memcpy(device, one):
    """The driver's synchronous copy of one byte into host memory, or memmove on the CPU."""
    byte = ctypes.create_string_buffer(1)
    source = ctypes.c_void_p(one.data_ptr())
    if device == "cpu":
        copy = ctypes.memmove
        return lambda: [copy(byte, source, 1) for _ in range(N)]
    library = next(line.split()[-1] for line in open("/proc/self/maps")
                   if line.rstrip().endswith("/libmimic.so"))
    copy = ctypes.CDLL(library).mimicMemcpy
    copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t]
    return lambda: [copy(byte, source, 1) for _ in range(N)]


def _cases(device):
    x = torch.ones(N, dtype=torch.bool, device=device)
    one = x[0]
    return {
        "all(x): iterate + bool() each": lambda: all(x),
        "iterate only (0-d views)": lambda: sum(1 for _ in x),
        "bool(x[0]) repeated (reads)": lambda: [bool(one) for _ in range(N)],
        "x[0].cpu() repeated": lambda: [one.cpu() for _ in range(N)],
        "1-byte memcpy to host (ctypes)": _memcpy(device, one),
    }


def main():
    devices = ["cpu", "privateuseone"]
    cases = {d: _cases(d) for d in devices}
    samples = {d: {name: [] for name in cases[d]} for d in devices}
    for _ in range(ROUNDS):
        for d in devices:
            for name, fn in cases[d].items():
                samples[d][name].append(_per_element_us(fn, N))
    print(f"per-element host cost, {N} elements, median of {ROUNDS} rounds; wall time, and the "
          "thread's CPU time")
    print(f"{'case':34s} {'CPU dev us':>10s} {'mimic us':>9s} {'ratio':>6s} "
          f"{'CPU dev cpu':>11s} {'mimic cpu':>9s}")

    def median(device, name, column):
        return statistics.median(sample[column] for sample in samples[device][name])

    for name in cases["cpu"]:
        c, m = median("cpu", name, 0), median("privateuseone", name, 0)
        print(f"{name:34s} {c:10.2f} {m:9.2f} {m / c:5.1f}x "
              f"{median('cpu', name, 1):11.2f} {median('privateuseone', name, 1):9.2f}")
    read = "bool(x[0]) repeated (reads)"
    wall, cpu = median("privateuseone", read, 0), median("privateuseone", read, 1)
    print(f"one read costs {wall:.1f} us of wall time ({cpu:.1f} us of CPU); "
          f"1M reads {wall:.0f} s")


if __name__ == "__main__":
    main()
