"""`dmlconf list`: the selected case ids."""

from __future__ import annotations

import argparse
import sys

from conformance.cli.common import select_session, selection
from conformance.results import counted


def cmd_list(args: argparse.Namespace) -> int:
    session = select_session(args)
    problems = session.load_errors
    for case in session.cases:
        if args.verbose:
            expect = "rejected" if case.rejected else "valid"
            print(f"{case.id}\t{','.join(case.operators)}\t{case.feature_level}\t{expect}")
        else:
            print(case.id)
    print(counted(len(session.cases), "case") + (
        f"; {counted(len(problems), 'case file problem')}" if problems else ""),
        file=sys.stderr)
    return int(bool(problems))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf list` and its arguments."""
    lst = sub.add_parser(
        "list", help="list case ids",
        epilog="examples:\n"
               "  dmlconf list -k documented/\n"
               "  dmlconf list -k 'generated/invalid/*' -v\n"
               "      with each case's operators, feature level and expectation\n\n"
               "exit status:\n"
               "  0  listed\n"
               "  1  a case file problem (the cases of the other files are listed)\n"
               "  2  bad arguments, or no case selected",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    selection(lst)
    lst.add_argument("-v", "--verbose", action="store_true",
                     help="also the operators, feature level and expectation")
    lst.set_defaults(func=cmd_list)
