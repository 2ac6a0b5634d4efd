"""The `dmlconf` command: run, compare, list, show."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

import yaml

from backends import BackendLoadError, load_backend
from conformance import __version__, ops, results
from conformance.casefile import Case, CaseFileError, case_set_hash, load_cases, select
from conformance.levels import FeatureLevel
from conformance.results import Result
from conformance.runner import run_cases

DEFAULT_JSON = "reports/results.json"


def default_case_paths() -> list[Path]:
    """cases/ in the current folder, else the cases/ of the source tree the package runs from."""
    if Path("cases").is_dir():
        return [Path("cases")]
    source_tree = Path(__file__).resolve().parent.parent / "cases"
    if source_tree.is_dir():
        return [source_tree]
    raise CaseFileError("cases", None, "no cases/ folder here or beside the package; "
                                       "give one with --cases")


class Progress:
    """A bar on a terminal; in CI (not a terminal) a plain line every 10% and per problem."""

    def __init__(self, total: int, stream: TextIO, quiet: bool = False) -> None:
        self.total, self.stream, self.quiet = total, stream, quiet
        self.tty = stream.isatty()
        self.done = 0
        self.counts = dict.fromkeys(results.STATUSES, 0)
        self.next_line = 0

    def __call__(self, result: Result) -> None:
        self.done += 1
        self.counts[result.status] += 1
        if self.quiet:
            return
        if result.status in ("FAIL", "ERROR"):
            self._clear()
            first = result.message.splitlines()[0] if result.message else ""
            self.stream.write(f"{result.status} {result.id}: {first[:300]}\n")
        if self.tty:
            width = 30
            filled = width * self.done // max(self.total, 1)
            counts = " ".join(f"{k} {v}" for k, v in self.counts.items() if v)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] "
                              f"{self.done}/{self.total} {counts}")
            if self.done == self.total:
                self.stream.write("\n")
        elif self.done >= self.next_line or self.done == self.total:
            counts = ", ".join(f"{k} {v}" for k, v in self.counts.items() if v)
            self.stream.write(f"{self.done}/{self.total} cases: {counts}\n")
            self.next_line = self.done + max(1, self.total // 10)
        self.stream.flush()

    def _clear(self) -> None:
        if self.tty:
            self.stream.write("\r\033[K")


def _load(args: argparse.Namespace) -> tuple[list[Case], list[Path]]:
    paths = [Path(p) for p in args.cases] if args.cases else default_case_paths()
    cases = select(load_cases(paths), args.k)
    if not cases:
        where = ", ".join(str(p) for p in paths)
        raise CaseFileError(where, None, "no case selected" + (
            f" by -k {' '.join(args.k)}" if args.k else ""))
    return cases, paths


def cmd_run(args: argparse.Namespace) -> int:
    from conformance import baseline as baselines

    if args.strict and not args.baseline:
        raise ValueError("--strict needs --baseline")
    known = baselines.load(args.baseline) if args.baseline else None  # before running anything
    cases, paths = _load(args)
    level = FeatureLevel.parse(args.level) if args.level else None
    backend = load_backend(args.backend, level)
    claimed = backend.claimed_level
    out = sys.stderr
    out.write(f"dmlconf {__version__}: {len(cases)} cases, backend {args.backend} "
              f"({type(backend).__name__}), feature level {claimed}\n")
    started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
    t0 = time.perf_counter()
    progress = Progress(len(cases), out, args.quiet)
    found = run_cases(cases, backend, progress)
    duration = time.perf_counter() - t0
    applied = baselines.apply(known, found) if known else None
    if applied:
        found = applied.results
    doc = results.document(
        found,
        backend={"name": args.backend, "class": f"{type(backend).__module__}."
                                                 f"{type(backend).__qualname__}",
                 "capabilities": backend.capabilities.to_json()},
        case_set_sha256=case_set_hash(cases), claimed=claimed, started_at=started_at,
        finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        duration_s=duration, command=shlex.join(["dmlconf", *getattr(args, "argv", sys.argv[1:])]),
        case_paths=[str(p) for p in paths],
        baseline=applied.to_json(args.baseline) if applied else None)
    results.write(doc, args.json)
    _write_reports(doc, args)
    _print_summary(doc, found, args.json, duration)
    return results.exit_status(found, strict=args.strict)


def _print_summary(doc: dict, found: list[Result], json_path: str, duration: float) -> None:
    s = doc["summary"]
    print(f"{len(found)} cases in {duration:.1f} s: " + ", ".join(f"{k} {v}" for k, v in
                                                                  s.items()))
    if any(doc["ambiguous"].values()):
        amb = ", ".join(f"{k} {v}" for k, v in doc["ambiguous"].items() if v)
        print(f"  of which in ambiguous regions of the spec (never decide a verdict): {amb}")
    for level, v in doc["verdict"].items():
        if v["conformant"] is None:
            print(f"  feature level {level}: no mandatory case selected (no verdict)")
            continue
        word = "conformant" if v["conformant"] else "NOT conformant"
        xfail = f", XFAIL {v['XFAIL']}" if v.get("XFAIL") else ""
        print(f"  feature level {level}: {word} ({v['PASS'] + v.get('XPASS', 0)}/"
              f"{v['mandatory']} mandatory cases pass; FAIL {v['FAIL']}, ERROR {v['ERROR']}, "
              f"NOT_SUPPORTED {v['NOT_SUPPORTED']}{xfail})")
    shown = [r for r in found if r.status in ("FAIL", "ERROR")]
    for r in shown[:20]:
        print(f"  {r.status} {r.id}: {r.message.splitlines()[0][:200] if r.message else ''}")
    if len(shown) > 20:
        print(f"  ... and {len(shown) - 20} more in {json_path}")
    known = doc.get("baseline")
    if known:
        for case_id in known["xpass"]:
            print(f"  XPASS {case_id}: passed, but the baseline {known['path']} expects a failure")
        for e in known["stale"]:
            print(f"  stale baseline entry {e['cases']!r} ({e['status']}): {e['why']}")
    print(f"results: {json_path}")


def cmd_compare(args: argparse.Namespace) -> int:
    from conformance import compare_runs

    new = compare_runs.load(args.new)
    diff = compare_runs.compare(compare_runs.load(args.old), new, args.old, args.new)
    print(compare_runs.to_markdown(diff) if args.markdown else compare_runs.to_text(diff),
          end="")
    if args.html:
        from conformance import report

        report.write(report.render_html(new, comparison=diff), args.html)
        print(f"report: {args.html}", file=sys.stderr)
    return compare_runs.exit_status(diff)


def _write_reports(doc: dict, args: argparse.Namespace) -> list[Path]:
    """The reports asked for with --junit / --markdown / --html."""
    from conformance import report

    written = report.write_reports(doc, {"junit": args.junit, "markdown": args.markdown,
                                         "html": args.html})
    for path in written:
        print(f"report: {path}", file=sys.stderr)
    return written


def cmd_report(args: argparse.Namespace) -> int:
    from conformance import report

    if not (args.junit or args.markdown or args.html):
        print("dmlconf report: error: give at least one output: --junit PATH, "
              "--markdown PATH and/or --html PATH", file=sys.stderr)
        return 2
    _write_reports(report.load(args.results), args)
    return 0


def _report_options(q: argparse.ArgumentParser) -> None:
    q.add_argument("--junit", metavar="PATH", help="write a JUnit XML report to PATH")
    q.add_argument("--markdown", metavar="PATH",
                   help="write a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY)")
    q.add_argument("--html", metavar="PATH",
                   help="write a self-contained HTML report to PATH")


def cmd_list(args: argparse.Namespace) -> int:
    cases, _ = _load(args)
    for case in cases:
        if args.verbose:
            expect = "rejected" if case.rejected else "valid"
            print(f"{case.id}\t{','.join(case.operators)}\t{case.feature_level}\t{expect}")
        else:
            print(case.id)
    print(f"{len(cases)} cases", file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    cases, _ = _load(args)
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
    command = ["dmlconf", "run", "--cases", case.file, "-k", case.id, "--backend", args.backend]
    if case.feature_level_below:  # not run at or above that level
        command += ["--level", str(case.feature_level)]
    print(f"# reproduce: {shlex.join(command)}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from conformance import generate

    if args.check:
        bad = generate.stale(args.out, args.counts)
        if bad:
            print("generated cases differ from a fresh generation (run `dmlconf generate`):",
                  file=sys.stderr)
            for path in bad:
                print(f"  {path}", file=sys.stderr)
            return 1
        print(f"{args.out} and {args.counts} are up to date")
        return 0
    t0 = time.perf_counter()
    count, changed = generate.write(args.out, args.counts, args.family or None)
    print(f"{count} generated cases in {args.out} ({len(changed)} file(s) changed, "
          f"{time.perf_counter() - t0:.1f} s)")
    for path in changed:
        print(f"  wrote {path}")
    return 0


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance import explore  # imports Hypothesis: only for this command

    return explore.command(args)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dmlconf", description="DirectML operator conformance suite")
    p.add_argument("--version", action="version", version=f"dmlconf {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    def selection(q: argparse.ArgumentParser) -> None:
        q.add_argument("--cases", action="append", metavar="PATH",
                       help="case file or folder (repeatable; default: cases/)")
        q.add_argument("-k", action="append", default=[], metavar="PATTERN",
                       help="select case ids: a substring, or a glob with * ? [ (repeatable)")

    run = sub.add_parser("run", help="certify a backend on the cases")
    run.add_argument("--backend", default="numpy",
                     help="registered name, package.module:Class or path/to/file.py:Class "
                          "(default: numpy)")
    selection(run)
    run.add_argument("--level", help="the feature level claimed, e.g. 5_1 (default: the "
                                     "backend's highest)")
    run.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                     help=f"results file (default: {DEFAULT_JSON})")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    _report_options(run)
    run.add_argument("--baseline", metavar="PATH",
                     help="YAML file of known failures: matching FAIL/ERROR become XFAIL "
                          "(docs/baselines.md)")
    run.add_argument("--strict", action="store_true",
                     help="with --baseline: exit 1 also when a known failure passes (XPASS)")
    run.set_defaults(func=cmd_run)

    cmp = sub.add_parser("compare", help="compare two results files: what newly fails or "
                                         "passes (exit 1 when anything newly fails)")
    cmp.add_argument("old", metavar="OLD.json")
    cmp.add_argument("new", metavar="NEW.json")
    cmp.add_argument("--markdown", action="store_true", help="Markdown instead of text")
    cmp.add_argument("--html", metavar="PATH",
                     help="also write NEW's HTML report with a section comparing it to OLD")
    cmp.set_defaults(func=cmd_compare)

    rep = sub.add_parser("report", help="render a results file as JUnit XML, a Markdown "
                                        "summary and/or an HTML report")
    rep.add_argument("results", metavar="RESULTS.json", help="a results file of dmlconf run")
    _report_options(rep)
    rep.set_defaults(func=cmd_report)

    lst = sub.add_parser("list", help="list case ids")
    selection(lst)
    lst.add_argument("-v", "--verbose", action="store_true",
                     help="also the operators, feature level and expectation")
    lst.set_defaults(func=cmd_list)

    show = sub.add_parser("show", help="show a case, its spec citation and how to reproduce it")
    show.add_argument("case", help="a case id (or a pattern)")
    selection(show)
    show.add_argument("--backend", default="numpy", help="backend for the reproduce command")
    show.set_defaults(func=cmd_show)
    gen = sub.add_parser("generate", help="write the property-generated cases (deterministic)")
    gen.add_argument("--out", default="cases/generated", help="folder (default: cases/generated)")
    gen.add_argument("--counts", default="docs/case-counts.md",
                     help="the counts page (default: docs/case-counts.md)")
    gen.add_argument("--family", action="append", metavar="NAME",
                     help="only this family (repeatable)")
    gen.add_argument("--check", action="store_true",
                     help="write nothing; exit 1 if the files differ from a fresh generation")
    gen.set_defaults(func=cmd_generate)

    exp = sub.add_parser("explore", help="search a backend for failures with Hypothesis; write "
                                         "each minimal failing case as a regression")
    exp.add_argument("--backend", default="numpy", help="as for run (default: numpy)")
    exp.add_argument("--family", action="append", metavar="NAME",
                     help="only this family (repeatable; default: all)")
    exp.add_argument("--max-examples", type=int, metavar="N",
                     help="examples per family (default: 100, or no limit with --seconds)")
    exp.add_argument("--seconds", type=float, metavar="S",
                     help="total wall time, split across the families")
    exp.add_argument("--seed", type=int, default=0, help="Hypothesis seed (default: 0)")
    exp.add_argument("--out", default="cases/regressions",
                     help="folder for regression cases (default: cases/regressions)")
    exp.add_argument("--level", help="the feature level claimed (default: the backend's highest)")
    exp.set_defaults(func=cmd_explore)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as given
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into e.g. head
        sys.stderr.close()
        return 0
    except (CaseFileError, BackendLoadError, ValueError, OSError) as exc:
        print(f"dmlconf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dmlconf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
