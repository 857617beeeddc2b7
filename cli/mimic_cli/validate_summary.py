"""The comparison maths of `mimic validate`: speed ratios, errors, and their summaries.

ratio  a SPEED ratio, above 1 when mimic is too fast: mimic / real for throughputs (TB/s, GB/s,
       TF), real / mimic for times (us, ms).
error  of a row: |ln ratio|, shown as exp(|ln ratio|) - 1 (a ratio of 1.25 or of 0.8 is 25 %).
geometric-mean error of a set of rows: exp(mean over the rows of |ln ratio|) - 1.
"""
import math

from .figures import DEVICE_GROUPS, GROUPS, SETS, TIME_UNITS

TARGET_GEOMEAN = 0.10  # geometric-mean error of a set of rows
TARGET_WORST = 0.25    # error of its worst row


def ratio(real, mimic, unit):
    return real / mimic if unit in TIME_UNITS else mimic / real


def error(speed_ratio):
    return math.exp(abs(math.log(speed_ratio))) - 1


def aggregate(rows):
    """Summary of rows that carry 'id' and 'ratio': their count, geometric-mean error, worst
    row and whether each meets its target; None for no rows."""
    if not rows:
        return None
    logs = [abs(math.log(r["ratio"])) for r in rows]
    worst_index = max(range(len(rows)), key=lambda i: logs[i])
    geomean = math.exp(sum(logs) / len(logs)) - 1
    worst = math.exp(logs[worst_index]) - 1
    return {"rows": len(rows), "geomean_error": geomean,
            "geomean_met": geomean <= TARGET_GEOMEAN,
            "worst": {"id": rows[worst_index]["id"], "ratio": rows[worst_index]["ratio"],
                      "error": worst},
            "worst_met": worst <= TARGET_WORST}


def summarize(rows):
    """Summaries of the measured rows (those with a ratio): per group, per set, the device rows
    (memory, compute, copy, launch: the issue's accuracy target), the collective rows, and all.
    Groups and sets without rows are left out."""
    measured = [r for r in rows if r.get("ratio") is not None]
    parts = {"groups": {}, "sets": {}}
    for group in GROUPS:
        summary = aggregate([r for r in measured if r["group"] == group])
        if summary:
            parts["groups"][group] = summary
    for name in SETS:
        summary = aggregate([r for r in measured if r["set"] == name])
        if summary:
            parts["sets"][name] = summary
    parts["device"] = aggregate([r for r in measured if r["group"] in DEVICE_GROUPS])
    parts["collective"] = aggregate([r for r in measured if r["group"] == "collective"])
    parts["all"] = aggregate(measured)
    return parts


def percent(fraction):
    return f"{100 * fraction:.1f} %"
