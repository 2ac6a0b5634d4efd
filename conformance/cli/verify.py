"""`dmlconf verify`: check a certification bundle, and with --rerun whether a sample of its
cases reproduces (docs/certification.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from conformance.results import counted

if TYPE_CHECKING:
    from conformance.certify import Verification
    from conformance.certify.rerun import Request


def _sample(text: str) -> int:
    """--sample: a number of cases, 0 or 'all' for every case."""
    if text.strip().lower() == "all":
        return 0
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give a number of cases, or all") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give 0 or more cases (0: all)")
    return n


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a certification bundle: one line per problem on stdout, exit 1 if any; with
    --rerun, then one line per sampled case the rerun does not reproduce, exit 1 if any."""
    from conformance.certify import CertifyError
    from conformance.certify.rerun import Request, parse_seed
    from conformance.certify.unpack import BundleError, unpacked
    from conformance.certify.verify import verify_folder

    lonely = [opt for opt, given in (("--sample", args.sample is not None),
                                     ("--seed", args.seed is not None),
                                     ("--timeout", args.timeout is not None),
                                     ("--workers", args.workers is not None),
                                     ("--certify-without-sandbox", args.without_sandbox))
              if given]
    if lonely and not args.rerun:
        print(f"dmlconf verify: error: {', '.join(lonely)} without --rerun: they say how to "
              "rerun the bundle's cases", file=sys.stderr)
        return 2
    request = None
    if args.rerun:
        try:
            seed = parse_seed(args.seed) if args.seed is not None else None
        except ValueError as exc:
            print(f"dmlconf verify: error: {exc}", file=sys.stderr)
            return 2
        request = Request(args.rerun, **({} if args.sample is None else {"sample": args.sample}),
                          seed=seed, timeout_s=args.timeout, workers=args.workers,
                          without_sandbox=True if args.without_sandbox else None)
    try:
        with unpacked(args.bundle) as (folder, name):
            v = verify_folder(folder, name)
            status = _report(v, rerunning=request is not None)
            if request is None:
                return status
            if status or v.document is None:
                print(f"rerun: not run: {v.bundle} is not a valid bundle", file=sys.stderr)
                return status or 1
            try:
                return _rerun(folder, v, request)
            except CertifyError as exc:
                print(f"dmlconf verify: error: --rerun: {exc}", file=sys.stderr)
                return 2
    except BundleError as exc:
        print(f"dmlconf verify: error: {exc}", file=sys.stderr)
        return 2


def _report(v: Verification, rerunning: bool) -> int:
    """Print what verify found; its exit status."""
    for problem in v.problems:
        print(problem)
    for note in v.notes:
        print(f"note: {note}", file=sys.stderr)
    if v.problems:
        print(f"{v.bundle}: NOT a valid certification bundle: "
              f"{counted(len(v.problems), 'problem')} ({v.claim or 'no claim read'})",
              file=sys.stderr)
        return 1
    how = ("rerunning a sample of its cases" if rerunning else
           "it cannot show that the backend ran: docs/certification.md")
    print(f"{v.bundle}: valid: {v.claim}; complete, consistent and intact ({how})",
          file=sys.stderr, flush=True)
    return 0


def _rerun(folder: Path, v: Verification, request: Request) -> int:
    """Rerun the sample (rerun.rerun), print a line per case that does not agree and the
    summary; 0 when every sampled case agrees, else 1."""
    from conformance.certify.rerun import rerun

    assert v.document is not None
    outcome = rerun(folder, v.document, request, sys.stderr)
    for case in outcome.differ:
        print(case.line())
    for case in outcome.timed_out:
        print(f"{case.line()} (a TIMEOUT: not compared)")
    for note in outcome.notes:
        print(f"note: rerun: {note}", file=sys.stderr)
    print(outcome.summary(), file=sys.stderr)
    return 0 if outcome.reproduces else 1


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf verify` and its arguments."""
    ver = sub.add_parser("verify", help="check a certification bundle (folder or .zip): "
                                        "hashes, completeness, statuses, waivers, verdict; "
                                        "exit 1 with one line per problem; --rerun: does a "
                                        "sample of its cases reproduce?",
                         description="Check a certification bundle (its folder or .zip): every "
                                     "file as listed, the\nresults cover the level's mustpass "
                                     "list, allowed statuses only, waivers with\na reason and an "
                                     "expiry, the verdict follows from the results. --rerun\n"
                                     "reruns a sample of its cases (docs/certification.md).",
                         epilog="examples:\n"
                                "  dmlconf verify certification/mybackend-6_2-2025-01-31.zip\n"
                                "  dmlconf verify certification/mybackend-6_2-2025-01-31.zip "
                                "--rerun numpy --sample 100\n"
                                "      and whether 100 of its cases reproduce with a backend\n\n"
                                "exit status:\n"
                                "  0  a valid bundle (with --rerun: every sampled case agrees)\n"
                                "  1  a problem, one line each on stdout (with --rerun: a "
                                "sampled case differs\n"
                                "     or timed out)\n"
                                "  2  a usage error: BUNDLE is no folder or zip, rerun options "
                                "without\n"
                                "     --rerun, a backend that does not load",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    ver.add_argument("bundle", metavar="BUNDLE")
    rer = ver.add_argument_group("rerun (docs/certification.md, 'Rerun a sample')")
    rer.add_argument("--rerun", metavar="BACKEND",
                     help="after the checks, rerun a sample of the bundle's cases with BACKEND "
                          "(as for run: registered name, package.module:Class or "
                          "path/to/file.py:Class) in the bundle's mode (feature level, "
                          "execution flags, timeout; isolated, as certify), and exit 1 when a "
                          "status differs")
    rer.add_argument("--sample", type=_sample, metavar="N",
                     help="how many cases (default: 50; 0 or all: every case), chosen by the "
                          "bundle's hash: the same bundle, the same cases")
    rer.add_argument("--seed", metavar="HEX",
                     help="choose the sample with this seed instead of the bundle's (a "
                          "reviewer's own, which the submitter could not know)")
    rer.add_argument("--timeout", type=float, metavar="S",
                     help="seconds per case (default: the bundle's; 0: none)")
    rer.add_argument("--workers", type=int, metavar="N", help="worker processes, as for run")
    rer.add_argument("--certify-without-sandbox", dest="without_sandbox", action="store_true",
                     help="rerun where the sandbox cannot be made (as for certify)")
    ver.set_defaults(func=cmd_verify)
