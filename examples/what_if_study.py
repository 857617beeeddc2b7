"""what_if_study: the same PyTorch workload on several variants of a preset.

"How much faster would this be with twice the HBM bandwidth?" The device is configured when
a process first touches it, from MIMIC_PRESET and MIMIC_OVERRIDES ("field=value,..."; the
fields are those of sim/presets/*.preset, e.g. hbm.bandwidth_gbps, compute.units,
isa.mma_f32_macs_per_cycle). A process holds one simulation, so each variant runs in a child
process of its own, and the parent prints a table of simulated times. Simulated time is
deterministic: the baseline runs twice and must give the same nanoseconds.

The workload has two phases, timed with events: elementwise ops and a sum over 4 Mi floats,
and a 512^3 matmul on the matrix pipe. The table shows which resource limits each: on `tiny`
the streaming phase follows HBM bandwidth, and so, mostly, does the matmul (its tiles are
re-read from HBM), while four times the MACs per cycle barely help it.

    PYTHONPATH=build/python /usr/bin/python3 examples/what_if_study.py [--preset tiny]

The children are forked from the parent, which imports torch but never touches the device
(the simulation's thread would not survive a fork); each sets MIMIC_OVERRIDES before it
imports torch_mimic. Exits non-zero if a check fails.
"""
import argparse
import multiprocessing
import os
import sys

import torch  # imported once here; the forked children share it


def workload():
    """Runs in a child: returns the simulated ms of each phase, measured with events."""
    import torch_mimic  # the first device call builds the system from the environment

    dev = torch.device(torch_mimic.DEVICE_TYPE, 0)
    props = torch_mimic.get_device_properties(0)
    x = torch.full((4 << 20,), 1.5, device=dev)
    a = torch.full((512, 512), 0.5, device=dev)
    b = torch.full((512, 512), 0.25, device=dev)

    def streaming():
        return ((x * 2.0 + 1.0).relu()).sum()

    def matmul():
        return a @ b

    def timed(fn):
        fn()  # warm-up: kernels built, allocator blocks cached
        start, end = torch_mimic.Event(enable_timing=True), torch_mimic.Event(enable_timing=True)
        start.record()
        out = fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end), out

    stream_ms, total = timed(streaming)
    matmul_ms, c = timed(matmul)
    assert total.item() == 4.0 * (4 << 20), "streaming result"
    assert torch.all(c == 0.125 * 512).item(), "matmul result"
    return {"hbm_gbps": props.hbm_bandwidth_gbps, "macs": props.mma_f32_macs_per_cycle,
            "stream_ms": stream_ms, "matmul_ms": matmul_ms, "sim_ns": torch_mimic.sim_time()}


def _child(preset, overrides, connection):
    os.environ.update(MIMIC_PRESET=preset, MIMIC_OVERRIDES=overrides, MIMIC_FALLBACK="silent",
                      SYSTEMC_DISABLE_COPYRIGHT_MESSAGE="1")
    try:
        connection.send(workload())
    except BaseException as e:  # noqa: B902 - reported to the parent
        connection.send({"error": f"{type(e).__name__}: {e}"})


def run_variants(preset, variants):
    """Runs one child per variant, two at a time; returns their results in order."""
    context = multiprocessing.get_context("fork")
    results = []
    for first in range(0, len(variants), 2):
        batch = []
        for name, overrides in variants[first:first + 2]:
            receiver, sender = context.Pipe(duplex=False)
            child = context.Process(target=_child, args=(preset, overrides, sender))
            child.start()
            batch.append((name, child, receiver))
        for name, child, receiver in batch:
            result = receiver.recv() if receiver.poll(120) else {"error": "no result in 120 s"}
            child.join()
            if "error" in result or child.exitcode != 0:
                raise RuntimeError(f"variant {name!r} failed: {result.get('error')} "
                                   f"(exit {child.exitcode})")
            results.append(result)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--preset", default=os.environ.get("MIMIC_PRESET", "tiny"))
    args = parser.parse_args()

    # The baseline, twice, tells us the preset's figures; the variants scale them.
    base, again = run_variants(args.preset, [("baseline", ""), ("baseline (again)", "")])
    hbm, macs = base["hbm_gbps"], base["macs"]
    variants = [
        ("HBM x2", f"hbm.bandwidth_gbps={hbm * 2:g}"),
        ("HBM x4", f"hbm.bandwidth_gbps={hbm * 4:g}"),
        ("MMA x4", f"isa.mma_f32_macs_per_cycle={macs * 4}"),
    ]
    hbm2, hbm4, mma4 = run_variants(args.preset, variants)
    results = [base, again, hbm2, hbm4, mma4]
    names = ["baseline", "baseline (again)"] + [name for name, _ in variants]
    overrides = ["", ""] + [o for _, o in variants]

    print(f"preset {args.preset}: simulated ms per phase (speed-up against the baseline)")
    print(f"{'variant':18} {'MIMIC_OVERRIDES':34} {'streaming':>16} {'matmul 512^3':>16}")
    for name, override, r in zip(names, overrides, results):
        s = base["stream_ms"] / r["stream_ms"]
        m = base["matmul_ms"] / r["matmul_ms"]
        print(f"{name:18} {override or '-':34} {r['stream_ms']:9.4f} ({s:4.2f}x)"
              f" {r['matmul_ms']:9.4f} ({m:4.2f}x)")

    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    check(again == base, "the baseline's simulated times are identical in two runs")
    check(base["stream_ms"] > hbm2["stream_ms"] > hbm4["stream_ms"],
          "streaming gets faster with more HBM bandwidth")
    check(base["stream_ms"] / hbm2["stream_ms"] > 1.3, "HBM x2 speeds streaming up by > 1.3x")
    check(base["matmul_ms"] / hbm4["matmul_ms"] > 1.5, "the matmul follows HBM bandwidth too")
    check(abs(mma4["matmul_ms"] / base["matmul_ms"] - 1) < 0.1,
          "four times the MACs per cycle barely change the bandwidth-bound matmul")
    check(abs(mma4["stream_ms"] - base["stream_ms"]) <= 1e-3 * base["stream_ms"],
          "MACs per cycle do not change the streaming phase")
    for what in failures:
        print("FAIL ", what, file=sys.stderr)
    if failures:
        return 1
    print("what_if_study: OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
