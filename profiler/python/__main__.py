"""python3 -m torch_mimic.profiler TRACE.json [--timeline OUT.html] [--top N] [--sort KEY]

Prints the per-kernel table of a saved trace (a Chrome export or a raw mimic trace) and writes
its HTML timeline. Every error is one line on stderr and exit code 2, never a traceback.
"""
import argparse
import os
import sys

from . import _chrome, _table, _timeline

SORTS = {"total": "total_ns", "avg": "avg_ns", "calls": "calls", "flops": "flops"}
PROG = "python3 -m torch_mimic.profiler"


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        # argparse prints the usage block too; one line is easier to spot in a CI log.
        self.exit(2, "%s: error: %s\n" % (PROG, message))


def _positive(text):
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError("expected a positive integer, got %r" % text)
    return value


def main(argv=None):
    parser = _Parser(prog=PROG, description="Summarise a mimic profiler trace.")
    parser.add_argument("trace", help="trace JSON (Chrome export or raw mimic trace)")
    parser.add_argument("--timeline", metavar="OUT.html",
                        help="HTML timeline to write (default: TRACE.html next to TRACE)")
    parser.add_argument("--top", type=_positive, metavar="N", help="only the N first kernels")
    parser.add_argument("--sort", choices=sorted(SORTS), default="total",
                        help="table order (default: total)")
    args = parser.parse_args(argv)
    timeline = args.timeline or os.path.splitext(args.trace)[0] + ".html"
    try:
        trace = _chrome.load_trace(args.trace)
        text = _table.report(trace, SORTS[args.sort], args.top)
        _timeline.save_timeline(trace, timeline, title=os.path.basename(args.trace))
    except OSError as error:
        parser.exit(2, "%s: error: %s: %s\n"
                    % (PROG, error.filename or args.trace, error.strerror or error))
    except (ValueError, KeyError, TypeError) as error:
        # KeyError / TypeError: a record lacking a field or holding the wrong type.
        detail = error if isinstance(error, ValueError) else "%s: malformed record (%r)" % (args.trace, error)
        parser.exit(2, "%s: error: %s\n" % (PROG, detail))
    print(text)
    print("timeline: %s" % timeline)
    return 0


if __name__ == "__main__":
    sys.exit(main())
