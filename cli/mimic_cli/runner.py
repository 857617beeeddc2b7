"""The child side of `mimic run` and `mimic what-if`: runs a user's script as __main__ on the
simulated devices (chosen by the environment, see common.child_env), under the profiler if asked,
and writes what the parent reports as JSON (report.format_run_report reads it).

    python3 -m mimic_cli.runner --result R.json [--trace T.json --timeline T.html --top N]
                                SCRIPT [ARGS]
"""
import argparse
import json
import os
import runpy
import sys
import traceback


def _run_script(script, script_args):
    """The script's exit code; its own exceptions are its output, as under plain python."""
    sys.argv = [script] + script_args
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as exit_:
        code = exit_.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - any failure of the user's script is reported, as python does
        traceback.print_exc()
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(prog="python3 -m mimic_cli.runner")
    parser.add_argument("--result", required=True)
    parser.add_argument("--trace")
    parser.add_argument("--timeline")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("script")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    options = parser.parse_args()

    import torch_mimic

    import mimic_cli
    from mimic_cli import report

    start_ns = torch_mimic.sim_time()
    profile = None
    if options.trace:
        with torch_mimic.profiler.profile() as profile:
            code = _run_script(options.script, options.args)
    else:
        code = _run_script(options.script, options.args)
    for device in range(torch_mimic.device_count()):
        torch_mimic.synchronize(device)
    end_ns = torch_mimic.sim_time()

    result = {"script": options.script, "exit_code": code, "sim_ns": end_ns - start_ns,
              "step_marks_ns": [t - start_ns for t in mimic_cli._step_marks_ns],
              "preset": torch_mimic.get_device_properties(0).preset,
              "devices": torch_mimic.device_count(),
              "fallback": torch_mimic.fallback_report()}
    if profile is not None and profile.trace is not None:
        result["trace"] = profile.export_chrome_trace(options.trace)
        result["timeline"] = profile.export_timeline(options.timeline)
        result["summary"] = report.summarize(profile, options.top)
    with open(options.result, "w") as out:
        json.dump(result, out)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
