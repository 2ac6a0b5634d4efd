"""`dmlconf export`: the selected cases as self-contained vectors (docs/vectors.md)."""

from __future__ import annotations

import argparse
import sys

from conformance.cli.common import select_session, selection
from conformance.results import counted


def cmd_export(args: argparse.Namespace) -> int:
    from conformance import export

    session = select_session(args)
    index = export.export_session(session, args.out)
    skipped = index["not_exportable"]
    print(f"exported {counted(len(index['cases']), 'case')} to {args.out} (index.json, "
          f"docs/vectors.md; C reader and checker: {', '.join(index['c_sources'])})"
          + (f"; {counted(len(skipped), 'case')} not exportable, listed with the reason in "
             "index.json" if skipped else ""))
    for entry in skipped[:20]:
        print(f"  not exportable: {entry['id']}: {entry['reason']}", file=sys.stderr)
    return int(bool(session.load_errors))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf export` and its arguments."""
    vec = sub.add_parser("export", help="write the selected cases as self-contained vectors "
                                        "for harnesses without Python: DirectML descs (JSON), "
                                        "input bytes, expectations and a C checker "
                                        "(docs/vectors.md)",
                         epilog="examples:\n"
                                "  dmlconf export vectors -k documented/\n"
                                "  dmlconf export vectors --level 5_1\n"
                                "      every case a run claiming feature level 5_1 runs\n\n"
                                "exit status:\n"
                                "  0  exported\n"
                                "  1  a case file problem (its cases were not exported)\n"
                                "  2  bad arguments, no case selected, or OUT cannot be "
                                "written",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    vec.add_argument("out", metavar="OUT", help="folder to write (new, empty, or a previous "
                                                "export, which is replaced)")
    selection(vec)
    vec.add_argument("--level", help="only the cases a run claiming this feature level runs, "
                                     "e.g. 5_1 (default: every selected case)")
    vec.set_defaults(func=cmd_export)
