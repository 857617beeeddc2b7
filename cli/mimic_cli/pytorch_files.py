"""`mimic test-torch --pytorch-files`: PyTorch 1.13.1's own device-generic test files on mimic
and on the CPU, compared test by test (the runner is tests/conformance/pytorch_tests.py)."""
import importlib
import json
import os
import sys
import tempfile
import time

from .common import UsageError, box_table

PROGRESS_EVERY = 500  # tests between progress lines of one run


def load_runner(conformance_dir):
    if conformance_dir not in sys.path:
        sys.path.insert(0, conformance_dir)
    return importlib.import_module("pytorch_tests")


def parse_files(runner, text):
    if text == "all":
        return {name: None for name in runner.FILES}
    if text == "quick":
        return dict(runner.QUICK)
    files = {}
    for name in (part.strip() for part in text.split(",") if part.strip()):
        name = name[:-3] if name.endswith(".py") else name
        if name not in runner.FILES:
            raise UsageError(f"'{name}' is not one of the selected test files",
                             "files are " + ", ".join(runner.FILES) + " (or all, quick)")
        files[name] = None
    if not files:
        raise UsageError(f"--pytorch-files '{text}' names no file", "e.g. test_view_ops")
    return files


def parse_classes(runner, text):
    classes = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [name for name in classes if name not in runner.CLASSES]
    if unknown or not classes:
        raise UsageError(f"unknown classification '{unknown[0] if unknown else text}'",
                         "classes are " + ", ".join(runner.CLASSES))
    return classes


class Progress:
    def __init__(self, label):
        self.label, self.count, self.started = label, 0, time.monotonic()

    def __call__(self, record):
        self.count += 1
        if record["outcome"] in ("crash", "hang"):
            print(f"      {record['outcome'].upper()} {record['test']}: {record['message']}",
                  flush=True)
        elif self.count % PROGRESS_EVERY == 0:
            print(f"      {self.label}: {self.count} tests, "
                  f"{time.monotonic() - self.started:.0f} s", flush=True)


def run_selection(runner, directory, files, env, options, work_dir):
    """Every file on mimic, then on the CPU, one child at a time."""
    per_file, notes = {}, []
    for index, (name, quick_keyword) in enumerate(files.items(), 1):
        path = os.path.join(directory, name + ".py")
        keyword = options["keyword"] or quick_keyword
        result = {}
        for device in ("mimic", "cpu"):
            print(f"[{index}/{len(files)}] {name} on {device}", flush=True)
            started = time.monotonic()
            records, file_notes = runner.run_file(
                path, device, runner.child_env(env, device, options["devices_file"]), work_dir,
                keyword=keyword, watchdog=options["watchdog"],
                device_classes_only=device == "mimic" or "unrelated" not in options["classes"],
                progress=Progress(f"{name} on {device}"))
            result[device] = {"records": records, "seconds": time.monotonic() - started}
            notes += file_notes
            print(f"      {len(records)} tests in {result[device]['seconds']:.0f} s", flush=True)
        rows = runner.compare(result["mimic"]["records"], result["cpu"]["records"])
        per_file[name] = {"rows": rows, "seconds": {d: result[d]["seconds"] for d in result}}
    return per_file, notes


def percent(part, whole):
    return "-" if not whole else f"{100.0 * part / whole:.1f}%"


def file_rows(runner, per_file, classes):
    rows = []
    for name, data in per_file.items():
        s = runner.summarise(data["rows"], classes)
        m, c = s["mimic"], s["cpu"]
        rows.append([name, s["tests"],
                     f"{m['passed']}/{m['failed']}/{m['skipped']}/{m['crash']}/{m['hang']}",
                     f"{c['passed']}/{c['failed']}/{c['skipped']}/{c['crash']}/{c['hang']}",
                     f"{s['agnostic_both_pass']}/{s['agnostic_cpu_pass']}",
                     percent(s["agnostic_both_pass"], s["agnostic_cpu_pass"]),
                     "/".join(str(s["by_class"][k]) for k in runner.CLASSES),
                     f"{(data['seconds']['mimic'] + data['seconds']['cpu']) / 60:.1f}"])
    return rows


def report_json(runner, per_file, classes, known, verdict, notes, seconds):
    all_rows = {test: row for data in per_file.values() for test, row in data["rows"].items()}
    return {
        "classes": list(classes), "seconds": seconds, "notes": notes,
        "totals": runner.summarise(all_rows, classes),
        "files": {name: {**runner.summarise(data["rows"], classes), "seconds": data["seconds"]}
                  for name, data in per_file.items()},
        "causes": [{"cause": c, "count": len(tests), "tests": tests}
                   for c, tests in runner.group_causes(
                       {t: r for t, r in all_rows.items() if r["class"] in classes})],
        "known_failures": {"file": known, "new": verdict[0], "again": verdict[1],
                           "stale": verdict[2]},
        "tests": [{"test": test, "class": row["class"], "mimic_failure": row["mimics"],
                   "mimic": row["mimic"], "cpu": row["cpu"]}
                  for test, row in sorted(all_rows.items()) if row["class"] in classes],
    }


def print_report(runner, per_file, classes, known_path, verdict, notes):
    print(f"\nPyTorch 1.13.1's test files (classes: {', '.join(classes)}; outcomes "
          "passed/failed/skipped/crash/hang):")
    print(box_table(["file", "tests", "mimic", "CPU", "agnostic: mimic/CPU pass", "rate",
                     "agn/spec/unrel", "minutes"], file_rows(runner, per_file, classes),
                    align=["<", ">", ">", ">", ">", ">", ">", ">"]))
    all_rows = {test: row for data in per_file.values() for test, row in data["rows"].items()}
    totals = runner.summarise(all_rows, classes)
    print(f"mimic passes {percent(totals['agnostic_both_pass'], totals['agnostic_cpu_pass'])} "
          f"of the tests that pass on CPU (agnostic class: {totals['agnostic_both_pass']} of "
          f"{totals['agnostic_cpu_pass']})")
    causes = runner.group_causes({t: r for t, r in all_rows.items() if r["class"] in classes})
    if causes:
        print("\nFailures on mimic that pass on the CPU, by cause:")
        print(box_table(["tests", "cause", "e.g."],
                        [[len(tests), c, tests[0]] for c, tests in causes],
                        align=[">", "<", "<"]))
    for row in sorted(all_rows.values(), key=lambda r: r["test"]):
        if row["mimic"] and row["mimic"]["outcome"] in ("crash", "hang"):
            detail = row["mimic"].get("detail")
            print(f"  {row['mimic']['outcome'].upper()} {row['test']}: {row['mimic']['message']}"
                  + (f" ({detail})" if detail else ""))
    for note in notes:
        print(f"  NOTE {note}")
    if known_path:
        new, again, stale = verdict
        print(f"\nKnown failures ({known_path}): {len(again)} seen again, {len(new)} new, "
              f"{len(stale)} stale")
        for test in new:
            print(f"  NEW {test}: {cause_of(all_rows[test])}")
        for test in stale:
            print(f"  STALE {test} (no longer fails on mimic; remove its entry)")


def cause_of(row):
    return row["mimic"].get("message") or row["mimic"]["outcome"]


def run(args, conformance_dir, env):
    runner = load_runner(conformance_dir)
    files = parse_files(runner, args.pytorch_files)
    classes = parse_classes(runner, args.hw_classification)
    try:
        directory = runner.test_dir()
    except runner.Missing as error:
        print(f"mimic test-torch: {error}", file=sys.stderr)
        return 1
    known = {}
    if args.known_failures:
        try:
            known = runner.read_known_failures(args.known_failures)
        except (OSError, ValueError) as error:
            raise UsageError(f"cannot read the known failures: {error}",
                             "lines are 'file::Class::test  # reason'")
    options = {"keyword": args.k, "watchdog": args.watchdog, "classes": classes,
               "devices_file": env["TORCH_TEST_DEVICES"]}
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mimic-pytorch-files-") as work_dir:
        per_file, notes = run_selection(runner, directory, files, env, options, work_dir)
    all_rows = {t: r for data in per_file.values() for t, r in data["rows"].items()
                if r["class"] in classes}
    verdict = runner.check_known(all_rows, known)
    print_report(runner, per_file, classes, args.known_failures, verdict, notes)
    if args.report:
        with open(args.report, "w") as out:
            json.dump(report_json(runner, per_file, classes, args.known_failures, verdict, notes,
                                  time.monotonic() - started), out, indent=1)
        print(f"JSON report: {os.path.abspath(args.report)}")
    print(f"Wall time: {time.monotonic() - started:.0f} s")
    if notes:  # a file that could not run (e.g. torch_mimic failed to import) tested nothing
        print(f"mimic test-torch: {len(notes)} run(s) of pytest could not run their file "
              "(NOTE lines above)", file=sys.stderr)
        return 1
    if args.known_failures:
        return 1 if verdict[0] else 0
    return 1 if any(row["mimics"] for row in all_rows.values()) else 0
