"""`dmlconf generate`: write the property-generated cases (docs/families.md), the counts page,
the mustpass lists and the operator reference's pages (docs/operators/)."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from conformance.results import counted


def _generate_deep(args: argparse.Namespace) -> int:
    """generate --tier deep: write the deep tier into its cache folder (or --out), or with
    --check verify it there against its manifest."""
    from conformance.generate import deep

    if args.family:
        raise ValueError("--family: the deep tier is generated whole (its manifest covers it)")
    folder = Path(args.out) if args.out else deep.cache_folder()
    if args.check:
        bad = deep.problems(folder)
        for line in bad:
            print(f"  {line}", file=sys.stderr)
        print(f"{folder}: {'stale or tampered with' if bad else 'verified against its manifest'}",
              file=sys.stderr if bad else sys.stdout)
        return int(bool(bad))
    t0 = time.perf_counter()
    manifest = deep.write(folder, progress=lambda text: print(text, file=sys.stderr, flush=True))
    print(f"{counted(manifest['cases'], 'deep case')} in {folder} "
          f"({counted(len(manifest['files']), 'file')}, set sha256 {manifest['set_sha256']}, "
          f"{time.perf_counter() - t0:.1f} s)")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from conformance import generate

    if args.tier == "deep":
        return _generate_deep(args)
    args.out = args.out or "cases/generated"
    if args.check:
        bad = generate.stale(args.out, args.counts, args.mustpass, args.operators)
        if bad:
            print("generated files differ from a fresh generation (run `dmlconf generate`):",
                  file=sys.stderr)
            for path in bad:
                print(f"  {path}", file=sys.stderr)
            return 1
        print(f"{args.out}, {args.counts}, {args.mustpass} and {args.operators} are up to date")
        return 0
    t0 = time.perf_counter()
    count, changed = generate.write(args.out, args.counts, args.family or None, args.mustpass,
                                    args.operators)
    print(f"{counted(count, 'generated case')} in {args.out} "
          f"({counted(len(changed), 'file')} changed, "
          f"{time.perf_counter() - t0:.1f} s)")
    for path in changed:
        print(f"  wrote {path}")
    return 0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf generate` and its arguments."""
    gen = sub.add_parser(
        "generate", help="write the property-generated cases, the counts page, the mustpass "
                         "lists and the operator reference's pages (deterministic)",
        epilog="examples:\n"
               "  dmlconf generate\n"
               "      write cases/generated, docs/case-counts.md, mustpass/ and docs/operators\n"
               "  dmlconf generate --check\n"
               "      CI: do the committed files equal a fresh generation?\n"
               "  dmlconf generate --tier deep --check\n\n"
               "exit status:\n"
               "  0  written, or (--check) up to date\n"
               "  1  --check: a file differs from a fresh generation (each is listed)\n"
               "  2  bad arguments",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    gen.add_argument("--out", help="folder (default: cases/generated; for --tier deep its cache "
                                   "folder)")
    gen.add_argument("--tier", choices=("committed", "deep"), default="committed",
                     help="committed: the cases under cases/generated (default); deep: the deep "
                          "tier, into ~/.cache/dml-conformance/deep/<suite version>/ "
                          "(DMLCONF_CACHE replaces ~/.cache/dml-conformance), not committed "
                          "(docs/families.md)")
    gen.add_argument("--counts", default="docs/case-counts.md",
                     help="the counts page (default: docs/case-counts.md)")
    gen.add_argument("--mustpass", default="mustpass",
                     help="the mustpass lists' folder, written from every case of the folder "
                          "holding --out (default: mustpass; docs/mustpass.md)")
    gen.add_argument("--operators", default="docs/operators", metavar="DIR",
                     help="the operator reference's folder: a page per operator, generated "
                          "from its spec, and README.md (default: docs/operators; dmlconf "
                          "describe prints a page)")
    gen.add_argument("--family", action="append", metavar="NAME",
                     help="only this family (repeatable)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the files differ from a fresh generation")
    gen.set_defaults(func=cmd_generate)
