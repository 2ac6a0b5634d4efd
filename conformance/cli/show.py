"""`dmlconf show`: a case, its spec citation and how to reproduce it."""

from __future__ import annotations

import argparse
import sys

import yaml

from conformance import ops
from conformance.casefile import select
from conformance.cli.common import select_session, selection


def cmd_show(args: argparse.Namespace) -> int:
    session = select_session(args, collect_errors=False)
    cases = session.cases
    matches = [c for c in cases if c.id == args.case] or select(cases, [args.case])
    if not matches:
        print(f"no case matches {args.case!r}", file=sys.stderr)
        return 2
    if len(matches) > 1 and not any(c.id == args.case for c in matches):
        print(f"{len(matches)} cases match {args.case!r}; showing the first. "
              "Give the full id for one.", file=sys.stderr)
    case = matches[0]
    print(f"# {case.id}  ({case.file}:{case.line})")
    for cite in case.spec:
        print(f"# spec: {cite}  <{cite.url}>")
    if case.ambiguous:
        print(f"# AMBIGUOUS: {case.ambiguous}")
    if case.rejected:
        for named in case.calls:
            # at the case's own level: one limited to lower levels is valid at the highest
            for v in ops.get(named.call.operator).validate(named.call, case.feature_level):
                print(f"# must be rejected: {v}")
    print(yaml.safe_dump(case.raw, sort_keys=False, default_flow_style=None, width=100), end="")
    print(f"# reproduce: {session.reproduce(case)}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf show` and its arguments."""
    show = sub.add_parser(
        "show", help="show a case, its spec citation and how to reproduce it",
        epilog="examples:\n"
               "  dmlconf show documented/strides/2d-row-major\n"
               "  dmlconf show documented/strides/2d-row-major --backend my_backend.py:MyBackend\n"
               "      the reproduce command for your backend\n\n"
               "exit status:\n"
               "  0  shown (the first of several matches, saying so)\n"
               "  2  no case matches, bad arguments, or a case file that does not load",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    show.add_argument("case", help="a case id (or a pattern)")
    selection(show)
    show.add_argument("--backend", default="numpy", help="backend for the reproduce command")
    show.add_argument("--level", help="the feature level claimed, for the reproduce command "
                                      "(default: the backend's highest)")
    show.add_argument("--execution-flags", metavar="FLAGS",
                      help="DML_EXECUTION_FLAGS, for the reproduce command (default: NONE)")
    show.set_defaults(func=cmd_show)
