"""Runs a function on N ranks with torch.multiprocessing (spawn), each rank a process with its
own simulated device, and collects what each rank returned. A hang fails the test instead of
stalling the suite: the ranks are killed after a deadline."""
import json
import os
import time
import traceback

import torch.multiprocessing as mp

from mimic_cli.common import free_port

DEFAULT_DEADLINE_S = 180


def _entry(rank, fn, size, port, out_dir, extra):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    os.environ["RANK"] = str(rank)
    os.environ["WORLD_SIZE"] = str(size)
    # The collective model places every rank on a device of the simulated system.
    if size > 2:
        os.environ.setdefault("MIMIC_NUM_DEVICES", str(size))
    try:
        result = {"ok": True, "value": fn(rank, size, *extra)}
    except BaseException as e:  # noqa: B902 - reported to the test, which fails on it
        result = {"ok": False, "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()}
    with open(os.path.join(out_dir, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)


def run_ranks(fn, size, tmp_path, *extra, deadline_s=DEFAULT_DEADLINE_S):
    """fn(rank, size, *extra) runs on every rank; returns [rank 0's result, ...] where each
    result is {"ok": True, "value": ...} or {"ok": False, "error": ..., "trace": ...}."""
    out_dir = str(tmp_path)
    os.makedirs(out_dir, exist_ok=True)
    context = mp.start_processes(_entry, args=(fn, size, free_port(), out_dir, extra),
                                 nprocs=size, join=False, start_method="spawn")
    end = time.monotonic() + deadline_s
    try:
        # Not context.join: it kills the other ranks as soon as one exits with an error, and a
        # test may make a rank die on purpose.
        while any(process.is_alive() for process in context.processes):
            if time.monotonic() > end:
                raise AssertionError(f"ranks still running after {deadline_s} s (a hang)")
            time.sleep(0.05)
    finally:
        for process in context.processes:
            if process.is_alive():
                process.kill()
    results = []
    for rank in range(size):
        path = os.path.join(out_dir, f"rank{rank}.json")
        if not os.path.exists(path):
            results.append({"ok": False, "error": "died without a result", "trace": ""})
            continue
        with open(path) as f:
            results.append(json.load(f))
    return results


def values(results):
    """The ranks' return values; fails with the first rank's traceback if any rank raised."""
    for rank, r in enumerate(results):
        assert r["ok"], f"rank {rank} raised: {r['error']}\n{r['trace']}"
    return [r["value"] for r in results]


def run_in_both_modes(fn, size, base):
    """fn(rank, size, mode) on `size` ranks once per simulation mode ("full", then "timing"; the
    worker sets MIMIC_MODE from its argument); returns {mode: [each rank's value]}."""
    return {mode: values(run_ranks(fn, size, base / mode, mode)) for mode in ("full", "timing")}
