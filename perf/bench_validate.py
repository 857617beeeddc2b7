"""How close the a100, h100 and mi300x presets (and the multi-node a100-4x8 and h100-4x8) come
to their real parts: `mimic validate --json` once per preset, then per preset the device rows'
(memory, compute, copy, launch) and the collective rows' geometric-mean error and worst row
against the targets (geomean <= 10 %, worst row <= 25 %), and the host wall time the
validation took. A benchmark that prints; it fails
only when a workload could not run.

Run after a build:  PYTHONPATH=build/python /usr/bin/python3 perf/bench_validate.py [PRESET ...]
(MIMIC_CLI=build/bin/mimic runs that launcher instead of python3 -m mimic_cli.)
"""
import json
import os
import subprocess
import sys
import time

PRESETS = ("a100", "h100", "mi300x", "a100-4x8", "h100-4x8")


def _part(summary, name):
    if not summary:
        return f"  {name:<16} no rows"
    worst = summary["worst"]
    geomean = 100 * summary["geomean_error"]
    return (f"  {name:<16} {summary['rows']:3d} rows  geomean error {geomean:6.1f} % "
            f"({'met' if summary['geomean_met'] else 'MISSED'})  worst {worst['id']} "
            f"{100 * worst['error']:.1f} %, ratio {worst['ratio']:.3f} "
            f"({'met' if summary['worst_met'] else 'MISSED'})")


def main():
    cli = os.environ.get("MIMIC_CLI")
    command = [cli] if cli else [sys.executable, "-m", "mimic_cli"]
    failed = False
    for preset in sys.argv[1:] or PRESETS:
        started = time.monotonic()
        done = subprocess.run(command + ["validate", "--preset", preset, "--json"],
                              stdout=subprocess.PIPE, text=True)
        wall_s = time.monotonic() - started
        if done.returncode not in (0, 1):
            sys.exit(f"mimic validate --preset {preset} failed (exit code {done.returncode})")
        result = json.loads(done.stdout)["presets"][0]
        summary = result["summary"]
        print(f"{preset}: {result['part']}")
        print(_part(summary["device"], "device rows"))
        print(_part(summary["collective"], "collective rows"))
        print(f"  host wall time   {wall_s:.1f} s")
        for row in result["rows"]:
            if row["status"] == "failed":
                failed = True
                print(f"  FAILED {row['id']}: {row['failure']}")
    print("error = exp(|ln ratio|) - 1; geomean error = exp(mean |ln ratio|) - 1; "
          "ratio > 1: mimic too fast.")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
