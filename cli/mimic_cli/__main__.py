"""mimic: the command-line tool of the mimic simulated accelerator.

Each subcommand is a module with add_parser(subparsers) and run(args) -> exit code; a module
that sets TAKES_SCRIPT_ARGS gets the arguments after -- as args.script_args, and one that sets
PASSES_ARGS gets every argument after its name, unparsed, in run_args(argv) -> exit code. A user's mistake
raises common.UsageError: one line and a hint on stderr, exit code 2, no traceback.
"""
import argparse
import importlib
import os
import sys

from .common import Parser, UsageError, print_usage_error

# In the order of `mimic --help`. demo and test_torch are optional: present when installed.
SUBCOMMANDS = ["devices", "presets", "run", "what_if", "trace", "validate", "bench_collectives",
               "demo", "test_torch"]
OPTIONAL = {"demo", "test_torch"}

EPILOG = """examples:
  mimic devices --preset a100
  mimic presets show tiny --set hbm_bandwidth=200
  mimic run train.py --preset tiny --sanitize all -- --epochs 1
  mimic run train.py --preset h100 --timing-only   (simulated times only: no values computed)
  mimic what-if train.py --vary hbm_bandwidth=1x,2x,4x --vary clock=1x,2x
  mimic trace train.trace.json
  mimic validate --preset a100
  mimic bench-collectives --preset a100 -b 1K -e 64M -f 4 -g 8
  mimic demo --devices 4 --timing-only"""


def _modules():
    modules = []
    for name in SUBCOMMANDS:
        try:
            modules.append(importlib.import_module(f"{__package__}.{name}"))
        except ModuleNotFoundError as error:
            if name not in OPTIONAL or error.name != f"{__package__}.{name}":
                raise
    return modules


def split_script_args(argv):
    """(mimic's arguments, the script's): everything after the first -- is the script's, so a
    script's options never clash with mimic's (argparse cannot tell them apart by itself)."""
    if "--" not in argv:
        return argv, None
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1:]


def build_parser():
    parser = Parser(prog="mimic", epilog=EPILOG,
                    formatter_class=argparse.RawDescriptionHelpFormatter,
                    description="mimic: a simulated accelerator that PyTorch uses as a real "
                                "device.\nEvery time reported is simulated time: deterministic, "
                                "and explained by the preset.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    modules = {}
    for module in _modules():
        sub = module.add_parser(subparsers)
        modules[sub.prog.split()[-1]] = (module, sub)
    return parser, modules


def main(argv=None):
    parser, modules = build_parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and getattr(modules.get(argv[0], (None,))[0], "PASSES_ARGS", False):
        try:
            return modules[argv[0]][0].run_args(argv[1:])
        except UsageError as error:
            print_usage_error(error)
            return 2
    own, script_args = split_script_args(argv)
    args, unknown = parser.parse_known_args(own)
    if args.command is None:
        parser.print_help()
        return 2
    module, sub = modules[args.command]
    takes_script_args = getattr(module, "TAKES_SCRIPT_ARGS", False)
    if unknown:
        sub.error(f"unrecognized arguments: {' '.join(unknown)}"
                  + ("; the script's own arguments go after --" if takes_script_args else ""))
    if takes_script_args:
        args.script_args = script_args or []
    elif script_args is not None:
        sub.error("arguments after -- are only for the scripts of `run` and `what-if`")
    try:
        return module.run(args)
    except UsageError as error:
        print_usage_error(error)
        return 2
    except KeyboardInterrupt:
        print("mimic: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # `mimic presets show x | head`: the reader left; say nothing more to it.
        sys.stdout = open(os.devnull, "w")
        return 0


if __name__ == "__main__":
    sys.exit(main())
