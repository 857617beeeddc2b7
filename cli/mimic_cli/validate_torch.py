"""The PyTorch workloads of `mimic validate`: `python3 -m mimic_cli.validate_torch ROWS.json`,
in a child whose MIMIC_PRESET names the preset (validate.py starts it).

ROWS.json is a list of {"id", "workload"}. Each workload runs for real on device 0 through
torch_mimic and is timed in simulated time. Building and loading kernels takes no simulated
time, so a warm-up call only matters for what the device keeps between calls (its cache): it is
made for workloads small enough that a warm cache could show, as the real benchmarks' warm-up
iterations do, and skipped for large ones, where it would only double the host's work. For each row one line goes to stdout:
RESULT_MARK + JSON {"id", "sim_ns", "work"} (work: bytes or flops done in sim_ns) or
{"id", "error"}. How each kind is timed, after the benchmarks its figures come from:
  stream  host time (sim_time) of one call until it has completed, as BabelStream times its
          kernels; dot reads its result back to the host, as BabelStream's does. Bytes counted
          as BabelStream does: copy and mul 2 arrays, add and triad 3, dot 2.
  gemm    host time of `calls` back-to-back torch.mm until they have completed, as
          zzc0721/torch-performance-test-data times 30 calls (and cuBLASLt benchmarks loop):
          as many calls as do about 2^36 FLOPs, from 1 to 30; work 2mnk per call.
  reduce  device time between two events around torch.sum, torch.dot or
          torch.linalg.vector_norm of the whole tensor; work the bytes of input read.
A workload that ran any op through the CPU fallback fails: its time would not be the device's.
"""
import json
import os
import sys
import traceback

import torch

RESULT_MARK = "MIMIC-VALIDATE-RESULT "
WARM_UP_BELOW = 1 << 36  # work (bytes or FLOPs) below which a warm cache could show
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
SCALAR = 0.4  # BabelStream's start values and scalar
STREAM_ARRAYS = {"copy": 2, "mul": 2, "add": 3, "triad": 3, "dot": 2}


def _element_bytes(dtype):
    return torch.tensor([], dtype=dtype).element_size()


def _require_host_memory(nbytes):
    """The simulated device keeps its data in host memory: a workload that needs most of it
    fails with the reason instead of being killed (total memory, so the outcome is stable)."""
    total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    if nbytes > 0.75 * total:
        raise MemoryError(f"needs about {nbytes / 2**30:.1f} GiB of host memory for the device's "
                          f"data; this host has {total / 2**30:.1f} GiB")


def _stream(w, device, torch_mimic):
    dtype, n = DTYPES[w["dtype"]], w["elements"]
    _require_host_memory(3 * n * _element_bytes(dtype))
    a = torch.full((n,), 0.1, dtype=dtype, device=device)
    b = torch.full((n,), 0.2, dtype=dtype, device=device)
    c = torch.zeros(n, dtype=dtype, device=device)
    calls = {"copy": lambda: c.copy_(a),
             "mul": lambda: torch.mul(c, SCALAR, out=b),
             "add": lambda: torch.add(a, b, out=c),
             "triad": lambda: torch.add(b, c, alpha=SCALAR, out=a),
             "dot": lambda: torch.dot(a, b).item()}
    call = calls[w["op"]]

    def timed():
        start = torch_mimic.sim_time()
        call()
        torch_mimic.synchronize()
        return torch_mimic.sim_time() - start

    return timed, STREAM_ARRAYS[w["op"]] * n * _element_bytes(dtype)


def _events(call, torch_mimic):
    def timed():
        start = torch_mimic.Event(enable_timing=True)
        end = torch_mimic.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e6

    return timed


def _gemm(w, device, torch_mimic):
    dtype, (m, n, k) = DTYPES[w["dtype"]], (w["m"], w["n"], w["k"])
    # the operands, drawn in f32 then converted, and the result of the warm-up and timed calls
    _require_host_memory((m * k + k * n) * 4 + (m * k + k * n + 2 * m * n) * _element_bytes(dtype))
    a = torch.randn(m, k, device=device).to(dtype)
    b = torch.randn(k, n, device=device).to(dtype)
    flops = 2 * m * n * k
    calls = max(1, min(30, WARM_UP_BELOW // flops))

    def timed():
        start = torch_mimic.sim_time()
        for _ in range(calls):
            torch.mm(a, b)
        torch_mimic.synchronize()
        return torch_mimic.sim_time() - start

    return timed, flops * calls


def _reduce(w, device, torch_mimic):
    dtype, n = DTYPES[w["dtype"]], w["elements"]
    _require_host_memory(2 * n * _element_bytes(dtype))
    x = torch.full((n,), 0.5, dtype=dtype, device=device)
    y = torch.full((n,), 0.25, dtype=dtype, device=device)
    calls = {"sum": lambda: torch.sum(x), "dot": lambda: torch.dot(x, y),
             "norm": lambda: torch.linalg.vector_norm(x)}
    inputs = 2 if w["op"] == "dot" else 1
    return _events(calls[w["op"]], torch_mimic), inputs * n * _element_bytes(dtype)


KINDS = {"stream": _stream, "gemm": _gemm, "reduce": _reduce}


def run_row(row, device, torch_mimic):
    w = row["workload"]
    timed, work = KINDS[w["kind"]](w, device, torch_mimic)
    torch_mimic.synchronize()
    if work < WARM_UP_BELOW:
        timed()
    torch_mimic.reset_fallback_report()
    sim_ns = timed()
    fallbacks = torch_mimic.fallback_report()
    if fallbacks:
        raise RuntimeError(f"ran on the CPU through the fallback: {', '.join(sorted(fallbacks))}"
                           " (the time would not be the device's)")
    if sim_ns <= 0:
        raise RuntimeError(f"took {sim_ns} ns of simulated time")
    return {"id": row["id"], "sim_ns": sim_ns, "work": work}


def main(argv):
    with open(argv[0]) as src:
        rows = json.load(src)
    import torch_mimic

    device = torch.device(torch_mimic.DEVICE_TYPE, 0)
    for row in rows:
        try:
            result = run_row(row, device, torch_mimic)
        except Exception as error:  # reported per row; the other rows still run
            detail = str(error).strip().splitlines()
            result = {"id": row["id"],
                      "error": f"{type(error).__name__}: {detail[0] if detail else ''}",
                      "traceback": traceback.format_exc()}
        print(RESULT_MARK + json.dumps(result), flush=True)
        torch_mimic.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
