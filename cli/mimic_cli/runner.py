"""The child side of `mimic run` and `mimic what-if`: runs a user's script as __main__ on the
simulated devices (chosen by the environment, see common.child_env), under the profiler if asked,
and writes what the parent reports as JSON (report.format_run_report reads it).

    python3 -m mimic_cli.runner --result R.json [--trace T.json --timeline T.html --top N]
                                SCRIPT [ARGS]

With MIMIC_RUN_COMPILE=MODE in the environment (`mimic run --compile`), every
torch_mimic.compile call of the script runs in MODE ("eager": returns its argument unchanged),
and the result has the compile summary; the full compile report goes beside the trace.
"""
import argparse
import functools
import json
import os
import runpy
import sys
import traceback

from mimic_cli import compile_summary


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


def _force_compile_mode(torch_mimic, forced):
    """Makes the script's torch_mimic.compile calls run in mode ``forced``, whatever mode they
    ask for; returns the list that the names of the callables compiled are appended to."""
    original = torch_mimic.compile
    requested = []

    @functools.wraps(original)
    def compile_in_mode(model_or_fn, *, mode=None, **options):
        requested.append(getattr(model_or_fn, "__name__", type(model_or_fn).__name__))
        if forced == "eager":
            return model_or_fn
        return original(model_or_fn, mode=forced, **options)

    torch_mimic.compile = compile_in_mode
    return requested


def _compile_result(mode, requested, trace, compile_path):
    import torch_mimic

    reports = torch_mimic.compile_report()
    if compile_path:
        from torch_mimic.profiler import _files

        text = json.dumps(reports, indent=1, default=str)
        _files.write_atomically(compile_path, lambda out: out.write(text))
    summary = compile_summary.summarize(mode, requested, reports, trace)
    summary["report"] = compile_path if reports else None
    return summary


def _device_used(torch_mimic, profile):
    """Whether the script put anything on a simulated device: a tensor allocated there, or
    (traced) any command a device ran, such as a copy into raw memory."""
    if any(torch_mimic.memory_stats(d)["allocations"] for d in range(torch_mimic.device_count())):
        return True
    trace = profile.trace if profile is not None else None
    return bool(trace and any(a["device"] is not None and a["device"] >= 0
                              for a in trace["activities"]))


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

    compile_mode = os.environ.pop(compile_summary.ENV, None)
    requested = (_force_compile_mode(torch_mimic, compile_mode) if compile_mode is not None
                 else None)
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
              "device_used": _device_used(torch_mimic, profile),
              "step_marks_ns": [t - start_ns for t in mimic_cli._step_marks_ns],
              "preset": torch_mimic.get_device_properties(0).preset,
              "devices": torch_mimic.device_count(),
              "fallback": torch_mimic.fallback_report(),
              "timing_mode": torch_mimic.timing_mode_report()}
    if profile is not None and profile.trace is not None:
        # The script's mimic_cli.step() calls are its steps, in the trace and its timeline.
        profile.trace["steps"] = list(mimic_cli._step_marks_ns)
        result["trace"] = profile.export_chrome_trace(options.trace)
        result["timeline"] = profile.export_timeline(options.timeline)
        result["summary"] = report.summarize(profile, options.top)
    if compile_mode is not None:
        compile_path = (os.path.splitext(options.trace)[0] + ".compile.json" if options.trace
                        else None)
        result["compile"] = _compile_result(compile_mode, requested,
                                            profile.trace if profile is not None else None,
                                            compile_path)
    with open(options.result, "w") as out:
        json.dump(result, out)
    sys.stdout.flush()
    return code


if __name__ == "__main__":
    sys.exit(main())
