"""The wall time of `mimic demo` on the default preset (its defaults: 30 steps, 2 ranks with
DDP), the whole command as a user runs it, from start to report. Target: under 2 minutes on
this 2-core machine. Also prints the first and last loss and the simulated step time.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_demo.py [DEMO OPTIONS]
(MIMIC_CLI=build/bin/mimic runs that launcher instead of python3 -m mimic_cli.)
"""
import json
import os
import subprocess
import sys
import tempfile
import time

TARGET_S = 120.0


def main():
    cli = os.environ.get("MIMIC_CLI")
    command = [cli] if cli else [sys.executable, "-m", "mimic_cli"]
    with tempfile.TemporaryDirectory(prefix="bench_demo_") as out_dir:
        started = time.monotonic()
        done = subprocess.run(command + ["demo", "--preset", "default", "--out", out_dir]
                              + sys.argv[1:], capture_output=True, text=True)
        wall_s = time.monotonic() - started
        if done.returncode != 0:
            sys.exit(f"mimic demo failed (exit code {done.returncode}):\n"
                     f"{done.stdout[-3000:]}{done.stderr[-3000:]}")
        with open(os.path.join(out_dir, "demo-result.json")) as f:
            result = json.load(f)
    steps = result["steps"]
    print(f"mimic demo, preset {result['preset']}, {result['devices']} ranks, {len(steps)} steps")
    print(f"  wall time        {wall_s:7.1f} s   (target < {TARGET_S:.0f} s: "
          f"{'met' if wall_s < TARGET_S else 'MISSED'})")
    print(f"  first loss       {steps[0]['loss']:9.4f}")
    print(f"  last loss        {steps[-1]['loss']:9.4f}")
    print(f"  sim. step time   {steps[-1]['sim_ns'] / 1e6:9.3f} ms   (last step)")
    print(f"  training wall    {sum(s['wall_s'] for s in steps):7.1f} s   "
          "(the rest: start-up, rendezvous, trace export)")


if __name__ == "__main__":
    main()
