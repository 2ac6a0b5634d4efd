"""`dmlconf compare`: what newly fails or passes between two results files."""

from __future__ import annotations

import argparse
import sys

from conformance import results


def cmd_compare(args: argparse.Namespace) -> int:
    from conformance.results import diff as run_diff

    new = results.read(args.new)
    diff = run_diff.compare(results.read(args.old), new, args.old, args.new)
    print(run_diff.to_markdown(diff) if args.markdown else run_diff.to_text(diff), end="")
    if args.html:
        from conformance import report

        report.write(report.render_html(new, comparison=diff), args.html)
        print(f"report: {args.html}", file=sys.stderr)
    return run_diff.exit_status(diff)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf compare` and its arguments."""
    cmp = sub.add_parser("compare", help="compare two results files: what newly fails or "
                                         "passes (exit 1 when anything newly fails)",
                         epilog="examples:\n"
                                "  dmlconf compare reports/before.json reports/results.json\n"
                                "  dmlconf compare reports/before.json reports/results.json "
                                "--markdown --html reports/report.html\n\n"
                                "exit status:\n"
                                "  0  nothing newly fails\n"
                                "  1  a case newly fails: FAIL, ERROR or TIMEOUT in NEW, "
                                "anything else or\n"
                                "     absent in OLD\n"
                                "  2  bad arguments, or a file that is no results file",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    cmp.add_argument("old", metavar="OLD.json")
    cmp.add_argument("new", metavar="NEW.json")
    cmp.add_argument("--markdown", action="store_true", help="Markdown instead of text")
    cmp.add_argument("--html", metavar="PATH",
                     help="also write NEW's HTML report with a section comparing it to OLD")
    cmp.set_defaults(func=cmd_compare)
