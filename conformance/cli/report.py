"""`dmlconf report`: render a results file as JUnit XML, Markdown and/or HTML."""

from __future__ import annotations

import argparse
import sys

from conformance import results
from conformance.cli.common import report_options, write_reports


def cmd_report(args: argparse.Namespace) -> int:
    if not (args.junit or args.markdown or args.html):
        print("dmlconf report: error: give at least one output: --junit PATH, "
              "--markdown PATH and/or --html PATH", file=sys.stderr)
        return 2
    write_reports(results.read(args.results), args)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf report` and its arguments."""
    rep = sub.add_parser("report", help="render a results file as JUnit XML, a Markdown "
                                        "summary and/or an HTML report",
                         epilog="examples:\n"
                                "  dmlconf report reports/results.json --html reports/report.html "
                                "--markdown reports/summary.md\n\n"
                                "exit status:\n"
                                "  0  written\n"
                                "  2  bad arguments (no --junit, --markdown or --html), or a "
                                "file that is no\n"
                                "     results file",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rep.add_argument("results", metavar="RESULTS.json", help="a results file of dmlconf run")
    report_options(rep)
    rep.set_defaults(func=cmd_report)
