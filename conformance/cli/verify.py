"""`dmlconf verify`: check a certification bundle (docs/certification.md)."""

from __future__ import annotations

import argparse
import sys

from conformance.results import counted


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a certification bundle: one line per problem on stdout, exit 1 if any."""
    from conformance.certify import verify
    from conformance.certify.verify import BundleError

    try:
        v = verify(args.bundle)
    except BundleError as exc:
        print(f"dmlconf verify: error: {exc}", file=sys.stderr)
        return 2
    for problem in v.problems:
        print(problem)
    for note in v.notes:
        print(f"note: {note}", file=sys.stderr)
    if v.problems:
        print(f"{v.bundle}: NOT a valid certification bundle: "
              f"{counted(len(v.problems), 'problem')} ({v.claim or 'no claim read'})",
              file=sys.stderr)
        return 1
    print(f"{v.bundle}: valid: {v.claim}; complete, consistent and intact (it cannot show "
          "that the backend ran: docs/certification.md)", file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf verify` and its arguments."""
    ver = sub.add_parser("verify", help="check a certification bundle (folder or .zip): "
                                        "hashes, completeness, statuses, waivers, verdict; "
                                        "exit 1 with one line per problem")
    ver.add_argument("bundle", metavar="BUNDLE")
    ver.set_defaults(func=cmd_verify)
