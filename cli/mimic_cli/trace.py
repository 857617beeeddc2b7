"""mimic trace FILE: the summary table and timeline of a saved trace, through the profiler's own
reader (the same as `python3 -m torch_mimic.profiler FILE`)."""
import os

from .common import UsageError, positive_int, require_output_dir

SORTS = {"total": "total_ns", "avg": "avg_ns", "calls": "calls", "flops": "flops"}


def add_parser(subparsers):
    parser = subparsers.add_parser(
        "trace", help="summarise a saved trace and write its timeline",
        description="Prints the per-kernel table (with roofline position) and the time totals "
                    "of a trace saved by `mimic run` or torch_mimic.profiler, and writes its "
                    "HTML timeline.")
    parser.add_argument("file", help="trace JSON (a Chrome export or a raw mimic trace)")
    parser.add_argument("--timeline", metavar="OUT.html",
                        help="timeline to write (default: FILE with .html)")
    parser.add_argument("--top", type=positive_int, metavar="N", help="only the N first kernels")
    parser.add_argument("--sort", choices=sorted(SORTS), default="total",
                        help="table order (default: total)")
    return parser


def run(args):
    if not os.path.isfile(args.file):
        raise UsageError(f"trace '{args.file}' not found", "mimic run SCRIPT.py saves one")
    timeline = require_output_dir(args.timeline or os.path.splitext(args.file)[0] + ".html",
                                  "--timeline")
    from torch_mimic.profiler import _chrome, _table, _timeline

    try:
        trace = _chrome.load_trace(args.file)
        text = _table.report(trace, SORTS[args.sort], args.top)
    except OSError as error:
        raise UsageError(f"cannot read '{args.file}': {error.strerror or error}") from None
    except (ValueError, KeyError, TypeError) as error:
        # KeyError, TypeError: a record that lacks a field or holds the wrong type.
        detail = str(error) if isinstance(error, ValueError) else f"malformed record ({error!r})"
        # The reader's message names the file and may say "not a mimic trace" already.
        detail = detail.removeprefix(f"{args.file}: ").removeprefix("not a mimic trace (")
        detail = detail[:-1] if detail.endswith(")") and "(" not in detail else detail
        raise UsageError(f"'{args.file}' is not a mimic trace: {detail}",
                         "mimic run and torch_mimic.profiler's export_chrome_trace write "
                         "traces") from None
    _timeline.save_timeline(trace, timeline, title=os.path.basename(args.file))
    print(f"trace {args.file}: preset {trace.get('preset', '?')}, "
          f"{len(trace['devices'])} devices, {len(trace['activities'])} activities")
    print(text)
    print(f"Timeline: {timeline}")
    return 0
