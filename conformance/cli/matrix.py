"""`dmlconf matrix`: several runs' results side by side (conformance.results.matrix)."""

from __future__ import annotations

import argparse
import sys
import time


def cmd_matrix(args: argparse.Namespace) -> int:
    from conformance import report
    from conformance.report import matrix

    started = time.monotonic()
    m = matrix.load(args.results)
    if args.html:
        report.write(matrix.render_html(m), args.html)
        print(f"matrix: {args.html}", file=sys.stderr)
    text = matrix.render_markdown(m, max_cases=args.max_cases)
    if args.markdown:
        report.write(text, args.markdown)
        print(f"matrix: {args.markdown}", file=sys.stderr)
    if not args.html and not args.markdown:
        print(text, end="")
    print(f"{len(m.columns)} runs, {len(m.cases)} cases, in {time.monotonic() - started:.1f} s",
          file=sys.stderr)
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf matrix` and its arguments."""
    p = sub.add_parser(
        "matrix", help="several runs side by side: levels, slices, families, cases, findings",
        description="Put results files side by side, one column per run: the feature levels'\n"
                    "verdicts, operator x data type slices and families with an interop score,\n"
                    "the findings (misreadings, baseline causes) per run, what each cannot\n"
                    "express, and the cases where the runs disagree. Without --html or\n"
                    "--markdown the Markdown goes to stdout.",
        epilog="examples:\n"
               "  dmlconf matrix reports/numpy.json reports/directml.json "
               "--html reports/matrix.html --markdown docs/matrix.md\n\n"
               "exit status:\n"
               "  0  written\n"
               "  2  bad arguments, or a file that is no results file",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", nargs="+", metavar="RESULTS.json")
    p.add_argument("--html", metavar="PATH", help="write the HTML matrix (every case, filters)")
    p.add_argument("--markdown", metavar="PATH", help="write the Markdown matrix here")
    p.add_argument("--max-cases", type=int, default=200, metavar="N",
                   help="disagreeing cases the Markdown lists (default 200)")
    p.set_defaults(func=cmd_matrix)
