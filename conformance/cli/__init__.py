"""The `dmlconf` command: run, merge, compare, matrix, report, list, show, describe, export,
certify, verify, directml, generate and explore, one module each (its arguments and its cmd_
function); what they share is in common.py. `parser()` asks each command's module to add its
subparser."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from conformance import __version__, suite
from conformance.backend import BackendLoadError
from conformance.casefile import CaseFileError
from conformance.cli import (
    certify,
    compare,
    describe,
    directml,
    explore,
    export,
    generate,
    list_cases,
    matrix,
    merge,
    report,
    run,
    show,
    verify,
)
from conformance.session import JournalError, WorkerError

#: The commands' modules, in the order `dmlconf --help` lists them.
COMMANDS = (run, merge, compare, matrix, report, list_cases, show, describe, export, certify,
            verify, directml, generate, explore)


class _Version(argparse.Action):
    """--version: 'dmlconf V (suite V, case set sha256 HEX, N committed cases)', read from the
    mustpass lists' headers when asked (suite.describe: no case is loaded)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, p: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        try:
            described = suite.describe()
        except (suite.MustpassFileError, OSError) as exc:
            p.exit(2, f"dmlconf: error: {exc}\n")
        print(f"dmlconf {__version__} ({described})")
        p.exit(0)



def parser() -> argparse.ArgumentParser:
    """The parser of `dmlconf` and of each of its COMMANDS."""
    p = argparse.ArgumentParser(
        prog="dmlconf", description="DirectML operator conformance suite",
        epilog="examples:\n"
               "  dmlconf run -k documented/\n"
               "      run the documented cases on the reference backend and judge them\n"
               "  dmlconf certify --backend mypackage.dml_port:MyBackend --level 6_2\n"
               "      certify a backend at a feature level: its bundle, to hand over\n"
               "  dmlconf run --help\n"
               "      each command's own examples and exit codes\n\n"
               "exit status: each command's --help says; every command exits 2 for bad\n"
               "arguments or an error that stops it, and 130 when interrupted.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action=_Version,
                   help="the package's version, the suite's and its committed case set")
    sub = p.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()  # durations printed count from here: loading included
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["directml"]:  # its own parser takes every option (and --help)
        return directml.cmd_directml(argparse.Namespace(rest=given[1:]))
    args = parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as given
    args.started = started
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into e.g. head
        sys.stderr.close()
        return 0
    except (CaseFileError, BackendLoadError, WorkerError, JournalError, ValueError,
            OSError) as exc:
        print(f"dmlconf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dmlconf: interrupted", file=sys.stderr)
        return 130
