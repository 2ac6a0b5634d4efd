"""What the commands of `dmlconf` share: the run's options and the selection of cases from
their arguments, SIGTERM as Ctrl-C, the report options and the summary a run prints."""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from conformance.casefile import CaseFileError
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.present import (
    diagnosis_rollup,
    failure_line,
    line_width,
    rule_lines,
    verdict_lines,
)
from conformance.results import FAILING, Result, ResultsDocument, Scope, counted
from conformance.session import DEFAULT_JSON, RunOptions, Session, is_flaky

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """'512M', '2GiB', '1.5g', '1000000' -> bytes (K, M, G, T are powers of 1024)."""
    m = _SIZE.match(text)
    if not m:
        raise ValueError(f"--memory-cap {text!r}: give a size such as 512M, 2G or 2GiB")
    scale = 1024 ** " kmgt".index(m.group(2).lower() or " ")
    return int(float(m.group(1)) * scale)


def _options(args: argparse.Namespace) -> RunOptions:
    """The run's options from a subcommand's arguments (the ones it lacks keep their
    defaults)."""
    given = vars(args)
    level, cap = given.get("level"), given.get("memory_cap")
    return RunOptions(
        backend=given.get("backend") or "numpy", cases=tuple(given.get("cases") or ()),
        patterns=tuple(given.get("k") or ()),
        level=FeatureLevel.parse(level) if level else None,
        execution_flags=ExecutionFlags.parse(given.get("execution_flags")),
        baseline=given.get("baseline"), strict=bool(given.get("strict")),
        certify=bool(given.get("certify")), isolate=given.get("isolate"),
        workers=given.get("workers"), timeout_s=given.get("timeout"),
        memory_cap=parse_size(cap) if cap else None,
        cases_per_worker=given.get("cases_per_worker"), retries=given.get("retries") or 0,
        sandbox=given.get("sandbox"),
        **({"run_timeout_s": given["run_timeout"]} if given.get("run_timeout") is not None
           else {}),
        **({"certify_without_sandbox": True} if given.get("certify_without_sandbox") else {}),
        shard=given.get("shard"), resume=bool(given.get("resume")),
        json=given.get("json") or DEFAULT_JSON, scope=Scope.parse(given.get("scope") or ()))


def select_session(args: argparse.Namespace, collect_errors: bool = True, launch: bool = False
                   ) -> Session:
    """A session of the selected cases. collect_errors: the problems of case files are printed
    (their cases are not run) and loading goes on, else the first raises. A selection of none
    is an error (a shard of none is not). launch: a whole run's worker processes start while
    the cases are built (Session.select); they are stopped if this raises."""
    session = Session(_options(args))
    try:
        session.select(collect_errors, launch=launch)
        errors = session.load_errors
        for e in errors:
            print(f"dmlconf: case file problem (its cases are not run): {e}", file=sys.stderr)
        if not session.selected:
            where = ", ".join(str(p) for p in session.paths)
            raise CaseFileError(where, None, "no case selected" + (
                f" by -k {' '.join(args.k)}" if args.k else "") + (
                f" ({counted(len(errors), 'problem')} in the case files)" if errors else ""))
    except BaseException:
        session.close()
        raise
    return session


class Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job), handled as Ctrl-C: the journal keeps what is done."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise Terminated()


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within: SIGTERM raises Terminated (where signals can be set: the main thread)."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def command_line(args: argparse.Namespace) -> str:
    """The command as given ("dmlconf run ..."), for the results document and the bundle."""
    return shlex.join(["dmlconf", *getattr(args, "argv", sys.argv[1:])])


def _first(cases: str | list[str]) -> str:
    """A baseline entry's pattern, or the first of its list (results' `cases`)."""
    return cases if isinstance(cases, str) else f"{cases[0]}, ..."


def print_summary(doc: ResultsDocument, found: list[Result], json_path: str,
                  took: str) -> None:
    """took: how long, e.g. "38.2 s (loading 33.1 s, running 5.1 s)": the wall time from the
    command's start, loading included."""
    from conformance import report

    s = doc.summary
    print(f"{counted(len(found), 'case')} in {took}: " + ", ".join(f"{k} {v}" for k, v in
                                                                 s.items()))
    if report.integrity_line(doc):
        print(f"  {report.integrity_line(doc)}")
    for line in report.common.resumed_lines(doc):  # the cases --resume took from the journal
        print(f"  {line}")
    if any(doc.ambiguous.values()):
        amb = ", ".join(f"{k} {v}" for k, v in doc.ambiguous.items() if v)
        print(f"  of which in ambiguous regions of the spec (never decide a verdict): {amb}")
    for level, line in verdict_lines(doc).items():
        print(f"  feature level {level}: {line}")
    flaky = sum(map(is_flaky, found))
    if flaky:
        print(f"  {counted(flaky, 'failing case')} {'is' if flaky == 1 else 'are'} FLAKY: a "
              "retry ended otherwise (--retries)")
    shown = [r for r in found if r.status in FAILING]
    width = line_width(sys.stdout)
    rules: list[str] = []
    for r in shown[:20]:
        print(failure_line(r, width, rules))
    if len(shown) > 20:
        print(f"  ... and {len(shown) - 20} more in {json_path}")
    for text in rule_lines(rules):  # the tolerance each FAIL above was judged by, said once
        print(f"  {text}")
    rollup = diagnosis_rollup(found)
    if rollup:
        print(f"  {rollup}")
    known = doc.baseline
    if known:
        expected, waived = known.expected, known.waived
        if expected or waived:
            print(f"  baseline {known.path}: {counted(len(expected), 'expected failure')}, "
                  f"{counted(len(waived), 'waiver')} (XFAIL)")
        waivers = {r.id: r.waiver for r in found if r.waiver}
        for case_id in waived[:20]:
            w = waivers.get(case_id) or {}
            print(f"  WAIVED {case_id}: {w.get('reason')} (until {w.get('expires')})")
        if len(waived) > 20:
            print(f"  ... and {len(waived) - 20} more waivers in {json_path}")
        for case_id in known.xpass:
            print(f"  XPASS {case_id}: passed, but the baseline {known.path} expects a failure")
        for e in known.stale:
            what = (f"pattern {e['pattern']!r} of the entry of {len(e['cases'])} patterns"
                    if "pattern" in e else f"entry {e['cases']!r}")
            print(f"  stale baseline {what} ({e['status']}): {e['why']}")
        if known.outside:
            print(f"  {counted(len(known.outside), 'baseline entry', 'baseline entries')} "
                  "cover only cases this run did not select (not stale)")
        elsewhere = known.not_applying
        if elsewhere:
            print(f"  {counted(len(elsewhere), 'baseline entry', 'baseline entries')} not for "
                  f"this run, e.g. {_first(elsewhere[0]['cases'])!r}: {elsewhere[0]['why']}")
    if doc.load_errors:
        problems = counted(len(doc.load_errors), "case file problem")
        print(f"  INCOMPLETE: {problems}; their cases were not run, so no verdict stands:")
        for problem in doc.load_errors[:20]:
            where = f"{problem.file}:{problem.line}" if problem.line else problem.file
            print(f"    {where}: {problem.message.splitlines()[0][:300]}")
    if doc.shard:
        sh = doc.shard
        print(f"  shard {sh.index}/{sh.count}: {sh.cases} of {sh.of_cases} cases; "
              "the verdict covers this shard only (join the shards with dmlconf merge)")
    print(f"results: {json_path}")


def write_reports(doc: ResultsDocument, args: argparse.Namespace) -> list[Path]:
    """The reports asked for with --junit / --markdown / --html."""
    from conformance import report

    written = report.write_reports(doc, {"junit": args.junit, "markdown": args.markdown,
                                         "html": args.html})
    for path in written:
        print(f"report: {path}", file=sys.stderr)
    return written


def report_options(q: argparse.ArgumentParser) -> None:
    """--junit, --markdown and --html: the reports a command writes."""
    q.add_argument("--junit", metavar="PATH", help="write a JUnit XML report to PATH")
    q.add_argument("--markdown", metavar="PATH",
                   help="write a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY)")
    q.add_argument("--html", metavar="PATH",
                   help="write a self-contained HTML report to PATH")


def scope_option(q: argparse.ArgumentParser) -> None:
    """--scope: a scoped claim (results.scope; docs/certification.md, "Scoped
    certification")."""
    q.add_argument("--scope", action="append", metavar="OPERATOR[:TYPES]",
                   help="claim only these slices: an operator, or an operator and its data "
                        "types, e.g. OPERATOR:FLOAT32,FLOAT16 (repeatable, or joined with "
                        "';'); the cases outside are not run (not covered) and the verdict "
                        "reads 'conformant for OPERATOR (FLOAT32, FLOAT16)' (default: the "
                        "whole level)")


def selection(q: argparse.ArgumentParser) -> None:
    """--cases and -k: the cases a command selects."""
    q.add_argument("--cases", action="append", metavar="PATH",
                   help="case file or folder (repeatable; default: the suite's committed "
                        "cases, wherever dmlconf runs)")
    q.add_argument("-k", action="append", default=[], metavar="PATTERN",
                   help="select case ids: a substring, or a glob with * ? [ (repeatable)")
