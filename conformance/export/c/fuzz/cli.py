"""`python -m conformance.export.c.fuzz`: the checker fuzz's command (the package's words)."""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Sequence
from pathlib import Path

from conformance.export.c.fuzz.corpus import CORPUS, ROOT, make_corpus
from conformance.export.c.fuzz.runner import CHECKER_SOURCES, BuildError, fuzz


def main(argv: Sequence[str] | None = None) -> int:
    """The command: 0 no crash, 1 crashes (their folders printed), 2 it could not run."""
    p = argparse.ArgumentParser(
        prog="python -m conformance.export.c.fuzz",
        description="A bounded fuzz of the C checker under AddressSanitizer and "
                    "UndefinedBehaviorSanitizer (conformance/export/c/fuzz/__init__.py).")
    p.add_argument("--seconds", type=float, default=60.0, help="the budget (default 60)")
    p.add_argument("--seed", type=int, default=None,
                   help="the mutations' seed (default: a new one, printed)")
    p.add_argument("--corpus", type=Path, default=None,
                   help=f"seed folder (default {CORPUS.relative_to(ROOT)}, or one made)")
    p.add_argument("--out", type=Path, default=None,
                   help="where crashing inputs are saved (default: under the temp folder)")
    p.add_argument("--source", type=Path, action="append", default=None,
                   help="a C source of the program fuzzed, repeatable (default: the checker)")
    p.add_argument("--cc", default=None, help="the compiler (default $CC, cc, gcc, clang)")
    p.add_argument("--blind", action="store_true", help="format-blind mutations only")
    p.add_argument("--per-process", action="store_true",
                   help="one process of the command line per input (slower)")
    p.add_argument("--timeout", type=float, default=2.0,
                   help="seconds an input may take (default 2)")
    p.add_argument("--keep-going", action="store_true", help="go on after the first crash")
    p.add_argument("--max-executions", type=int, default=None, help="stop after so many")
    p.add_argument("--fail-on-slow", action="store_true", help="a slow input is a failure")
    p.add_argument("--make-corpus", type=Path, metavar="DIR", default=None,
                   help="write a seed corpus exported from the committed suite, and stop")
    p.add_argument("--from-export", type=Path, metavar="VECTORS", default=None,
                   help="--make-corpus: from this export folder instead")
    a = p.parse_args(argv)
    if a.make_corpus is not None:
        names = make_corpus(a.make_corpus, a.from_export)
        size = sum(f.stat().st_size for f in a.make_corpus.rglob("*") if f.is_file())
        print(f"checker fuzz: {len(names)} seeds, {size:,} bytes in {a.make_corpus}")
        return 0
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1 << 31)
    try:
        report = fuzz(a.seconds, seed, a.corpus, a.out, a.source or CHECKER_SOURCES, a.cc,
                      aware=not a.blind, per_process=a.per_process, timeout=a.timeout,
                      max_crashes=0 if a.keep_going else 1,
                      max_executions=a.max_executions, fail_on_slow=a.fail_on_slow)
    except BuildError as exc:
        print(f"checker fuzz: cannot build under the sanitizers: {exc}", file=sys.stderr)
        return 2
    total = sum(report.statuses.values()) or 1
    verdicts = ", ".join(f"{name} {100 * n / total:.1f}%"
                         for name, n in report.statuses.most_common())
    print(f"verdicts of the inputs: {verdicts}")
    for path in report.slow:
        print(f"slow input (over {a.timeout:g} s, not a crash): {path}")
    for crash in report.crashes:
        alone = {True: "crashes a fresh process alone", False: "does not crash alone",
                 None: ""}[crash.alone]
        print(f"CRASH: {crash.summary} ({alone}; mutations: {', '.join(crash.made)}): "
              f"{crash.folder}")
    if report.repeats:
        print(f"{report.repeats} more crashing inputs gave a report summarised as one above")
    if report.first_crash_at is not None:
        print(f"first crash after {report.first_crash_at:,} executions")
    rate = report.executions / report.seconds if report.seconds else 0.0
    print(f"{report.line()}, {rate:,.0f} executions/s")
    return 1 if report.crashes else 0
