"""Runs pytest on the given test files under MIMIC_SANITIZE=all and fails if any process of the
run (the test process and every program it starts) reported a sanitizer finding: the model
tests must be clean. Each process writes its own JSON report (MIMIC_SANITIZE_REPORT with %p).

    python3 run_sanitized.py test_models.py test_ops_nn.py
"""
import glob
import json
import os
import subprocess
import sys
import tempfile


def main(files):
    with tempfile.TemporaryDirectory() as reports:
        env = dict(os.environ, MIMIC_SANITIZE="all",
                   MIMIC_SANITIZE_REPORT=os.path.join(reports, "%p.json"))
        tests = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                *files], env=env)
        findings = []
        paths = glob.glob(os.path.join(reports, "*.json"))
        for path in paths:
            with open(path) as report:
                findings += json.load(report)["findings"]
    for finding in findings:
        print(f"finding: {finding['tool']}: {finding['message']}")
    print(f"sanitizer: {len(paths)} processes reported, {len(findings)} findings")
    if not paths:
        print("sanitizer: no process wrote a report", file=sys.stderr)
        return 1
    return tests.returncode or (1 if findings else 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
