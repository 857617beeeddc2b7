"""Merges the JSON reports of `mimic test-torch --pytorch-files ... --report FILE` into
pytorch_known_failures.txt: every test a report ran gets an entry if it is a failure of mimic's
(with its measured first line as the reason) and loses it otherwise; entries of tests no report
ran are kept. A reason written by hand survives while the failure's cause stays the same.

    /usr/bin/python3 tests/conformance/update_known_failures.py report.json [report.json ...]
"""
import argparse
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pytorch_tests  # noqa: E402

KNOWN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pytorch_known_failures.txt")
HEADER = """\
# mimic's known failures in PyTorch 1.13.1's own test files: tests that fail, crash or hang
# on mimic while they pass (or are skipped) on the CPU. One test a line, as
# `file::Class::test  # reason`, ids with the device taken out (mimic test-torch --pytorch-files
# prints them so). The reason is the failure's first line as measured, the cause to fix.
# `mimic test-torch --known-failures` fails on a failure not listed here and prints listed tests
# that now pass as stale (remove them). A failure that also fails on the CPU is not mimic's and
# has no entry. tests/conformance/update_known_failures.py merges measured reports into it.
# Measured so far (the rest of each file has not run on mimic yet):
"""
REASON_CHARS = 160


def _file_of(test):
    return test.split("::", 1)[0][:-3]


def _measured_reason(row):
    record = row["mimic"]
    reason = (record.get("message") or record["outcome"]).replace("#", "")
    if record.get("detail"):
        reason += " (" + record["detail"].replace("#", "") + ")"
    return reason[:REASON_CHARS]


def _same_cause(old_reason, row):
    measured = pytorch_tests.cause(row["mimic"])
    return pytorch_tests.cause({"message": old_reason, "outcome": ""}).startswith(measured[:40])


def merge(known, reports):
    """known {test: reason} updated by the reports' rows; returns (entries, added, removed)."""
    entries, added, removed = dict(known), [], []
    for report in reports:
        for row in report["tests"]:
            test = row["test"]
            if row["mimic_failure"]:
                if test not in entries:
                    added.append(test)
                if test not in entries or not _same_cause(entries[test], row):
                    entries[test] = _measured_reason(row)
            elif test in entries and row["mimic"] and row["mimic"]["outcome"] not in pytorch_tests.FAILED:
                # (a test that failed on mimic and on a CPU run of this report keeps its entry)
                removed.append(test)
                del entries[test]
    return entries, added, removed


def render(entries, scope):
    """The file's text: a section per test file, in FILES order, tests sorted; ``scope`` {file:
    text} says what of each file has been measured."""
    names = list(pytorch_tests.FILES)
    names += sorted({_file_of(t) for t in entries} - set(names))  # never drop an entry
    lines = [HEADER]
    lines += [f"#   {name}: {scope[name]}\n" for name in names if name in scope]
    for name in names:
        tests = sorted(t for t in entries if _file_of(t) == name)
        if not tests and name not in scope:
            continue
        lines.append(f"\n# {name}.py: {len(tests)}\n")
        lines += [f"{test}  # {entries[test]}\n" for test in tests]
    return "".join(lines)


def read_scope(path):
    scope = {}
    with open(path) as text:
        for line in text:
            match = re.match(r"^#   (test_\w+): (.+)$", line.rstrip("\n"))
            if match:
                scope[match.group(1)] = match.group(2)
    return scope


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", help="JSON reports of mimic test-torch --pytorch-files")
    parser.add_argument("--known", default=KNOWN, help="the known-failures file to update")
    parser.add_argument("--scope", action="append", default=[], metavar="FILE=TEXT",
                        help="what of FILE the reports measured, e.g. 'test_ops=-k float32'")
    args = parser.parse_args(argv)
    known = pytorch_tests.read_known_failures(args.known)
    scope = read_scope(args.known)
    reports = []
    for path in args.reports:
        with open(path) as text:
            reports.append(json.load(text))
        for name in reports[-1]["files"]:
            scope.setdefault(name, "the whole file")
    for item in args.scope:
        name, _, text = item.partition("=")
        scope[name] = text
    entries, added, removed = merge(known, reports)
    with open(args.known, "w") as out:
        out.write(render(entries, scope))
    print(f"{args.known}: {len(entries)} entries ({len(added)} added, {len(removed)} removed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
