"""The `dmlconf` command: run, compare, list, show."""

from __future__ import annotations

import argparse
import re
import shlex
import signal
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

import yaml

from conformance import __version__, ops, results, suite
from conformance.backend import BackendLoadError, backend_class
from conformance.casefile import CaseFileError, select
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import FAILING, Result, counted
from conformance.session import (
    CASES_PER_WORKER,
    DEFAULT_JSON,
    DEFAULT_TIMEOUT_S,
    JournalError,
    RunOptions,
    Session,
    WorkerError,
    is_flaky,
    shards,
)


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
        if result.status in FAILING:
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
        shard=given.get("shard"), resume=bool(given.get("resume")),
        json=given.get("json") or DEFAULT_JSON)


def _select(args: argparse.Namespace, collect_errors: bool = True, launch: bool = False
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


class _Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job), handled as Ctrl-C: the journal keeps what is done."""


def _on_sigterm(signum: int, frame: object) -> None:
    raise _Terminated()


@contextmanager
def _sigterm_as_interrupt() -> Iterator[None]:
    """Within: SIGTERM raises _Terminated (where signals can be set: the main thread)."""
    try:
        previous = signal.signal(signal.SIGTERM, _on_sigterm)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


#: --tier: which generated cases a run adds (docs/families.md, "Deep tier").
TIERS = ("committed", "deep", "all")


def _resolve_tier(args: argparse.Namespace) -> None:
    """--tier as case paths: committed (the default) leaves --cases as given; deep runs the deep
    tier's verified cache folder (generated or regenerated first, saying so) with the --cases
    given, or alone; all adds it to the --cases given or the committed cases."""
    tier = getattr(args, "tier", "committed")
    if tier == "committed":
        return
    from conformance.generate import deep
    from conformance.session.run import default_case_paths

    folder = deep.ensure(say=lambda text: print(text, file=sys.stderr, flush=True))
    given = list(args.cases or ([] if tier == "deep" else default_case_paths()))
    args.cases = [*given, str(folder)]


def cmd_run(args: argparse.Namespace) -> int:
    _resolve_tier(args)
    session = _select(args, launch=True)
    execution = session.execution or session.plan()
    out = sys.stderr
    try:
        with _sigterm_as_interrupt(), session:
            runner = session.start()
            assert session.journal is not None
            cases, todo, shard = session.cases, session.todo, session.shard
            how = (f"{execution.workers} isolated worker(s), timeout "
                   f"{execution.timeout_s or 'none'} s, tamper-proof" if execution.isolated
                   else "in-process, NOT tamper-proof")
            of = f" (shard {args.shard} of {shard['of_cases']})" if shard else ""
            flags = "|".join(execution.execution_flags.names) or "NONE"
            out.write(f"dmlconf {__version__}: {counted(len(cases), 'case')}{of}, backend "
                      f"{args.backend} "
                      f"({runner.class_name}), feature level {runner.claimed_level}, execution "
                      f"flags {flags}, {how}\n")
            if session.journal.done:
                out.write(f"resuming {session.journal.path}: "
                          f"{counted(len(cases) - len(todo), 'case')} done, {len(todo)} to "
                          "run\n")
            elif session.journal.replaced:
                out.write(f"note: the journal of an unfinished run at {session.journal.path} "
                          "was replaced (--resume continues such a run)\n")

            def retrying(failing: int) -> None:
                if not args.quiet:
                    print(f"retrying {counted(failing, 'failing case')} "
                          f"{counted(args.retries, 'time')}",
                          file=sys.stderr)

            loaded = time.perf_counter()
            session.run(Progress(len(todo), out, args.quiet), retrying)
    except KeyboardInterrupt as exc:
        what = "terminated (SIGTERM)" if isinstance(exc, _Terminated) else "interrupted"
        if session.journal is None:
            print(f"dmlconf: {what} before any case ran", file=sys.stderr)
            return 130
        print(f"dmlconf: {what} after {session.kept} of {len(session.cases)} cases; their "
              f"results are kept in {session.journal.path}, and {args.json} was not touched. "
              "To finish the run, repeat the command with --resume.", file=sys.stderr)
        return 130
    doc = session.document(shlex.join(["dmlconf", *getattr(args, "argv", sys.argv[1:])]))
    session.write(doc)
    _write_reports(doc, args)
    wall = time.perf_counter() - args.started
    _print_summary(doc, session.results, args.json,
                   f"{wall:.1f} s (loading {loaded - args.started:.1f} s, running "
                   f"{session.duration_s:.1f} s)")
    return (results.exit_status(session.results, strict=args.strict)
            or int(bool(session.load_errors)))


def _first(cases: str | list[str]) -> str:
    """A baseline entry's pattern, or the first of its list (results' `cases`)."""
    return cases if isinstance(cases, str) else f"{cases[0]}, ..."


def _print_summary(doc: dict, found: list[Result], json_path: str, took: str) -> None:
    """took: how long, e.g. "38.2 s (loading 33.1 s, running 5.1 s)": the wall time from the
    command's start, loading included."""
    from conformance import report

    s = doc["summary"]
    print(f"{counted(len(found), 'case')} in {took}: " + ", ".join(f"{k} {v}" for k, v in
                                                                 s.items()))
    if report.integrity_line(doc):
        print(f"  {report.integrity_line(doc)}")
    if any(doc["ambiguous"].values()):
        amb = ", ".join(f"{k} {v}" for k, v in doc["ambiguous"].items() if v)
        print(f"  of which in ambiguous regions of the spec (never decide a verdict): {amb}")
    for level, line in report.verdict_lines(doc).items():
        print(f"  feature level {level}: {line}")
    flaky = sum(map(is_flaky, found))
    if flaky:
        print(f"  {counted(flaky, 'failing case')} {'is' if flaky == 1 else 'are'} FLAKY: a "
              "retry ended otherwise (--retries)")
    shown = [r for r in found if r.status in FAILING]
    for r in shown[:20]:
        print(f"  {r.status} {r.id}: {r.message.splitlines()[0][:200] if r.message else ''}")
    if len(shown) > 20:
        print(f"  ... and {len(shown) - 20} more in {json_path}")
    known = doc.get("baseline")
    if known:
        expected, waived = known.get("expected", []), known.get("waived", [])
        if expected or waived:
            print(f"  baseline {known['path']}: {counted(len(expected), 'expected failure')}, "
                  f"{counted(len(waived), 'waiver')} (XFAIL)")
        waivers = {r.id: r.waiver for r in found if r.waiver}
        for case_id in waived[:20]:
            w = waivers.get(case_id) or {}
            print(f"  WAIVED {case_id}: {w.get('reason')} (until {w.get('expires')})")
        if len(waived) > 20:
            print(f"  ... and {len(waived) - 20} more waivers in {json_path}")
        for case_id in known["xpass"]:
            print(f"  XPASS {case_id}: passed, but the baseline {known['path']} expects a failure")
        for e in known["stale"]:
            what = (f"pattern {e['pattern']!r} of the entry of {len(e['cases'])} patterns"
                    if "pattern" in e else f"entry {e['cases']!r}")
            print(f"  stale baseline {what} ({e['status']}): {e['why']}")
        elsewhere = known.get("not_applying", [])
        if elsewhere:
            print(f"  {counted(len(elsewhere), 'baseline entry', 'baseline entries')} not for "
                  f"this run, e.g. {_first(elsewhere[0]['cases'])!r}: {elsewhere[0]['why']}")
    if doc["load_errors"]:
        problems = counted(len(doc["load_errors"]), "case file problem")
        print(f"  INCOMPLETE: {problems}; their cases were not run, so no verdict stands:")
        for e in doc["load_errors"][:20]:
            where = f"{e['file']}:{e['line']}" if e["line"] else e["file"]
            print(f"    {where}: {e['message'].splitlines()[0][:300]}")
    if doc["shard"]:
        sh = doc["shard"]
        print(f"  shard {sh['index']}/{sh['count']}: {sh['cases']} of {sh['of_cases']} cases; "
              "the verdict covers this shard only (join the shards with dmlconf merge)")
    print(f"results: {json_path}")


def cmd_merge(args: argparse.Namespace) -> int:
    docs = shards.load(args.shards)
    command = shlex.join(["dmlconf", *getattr(args, "argv", sys.argv[1:])])
    doc, found = shards.merge(docs, command)
    results.write(doc, args.json)
    _write_reports(doc, args)
    _print_summary(doc, found, args.json,
                   f"{float(doc['duration_s']):.1f} s (the longest shard's run; merged in "
                   f"{time.perf_counter() - args.started:.1f} s)")
    return results.exit_status(found) or int(not doc["complete"])


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


def _write_reports(doc: dict, args: argparse.Namespace) -> list[Path]:
    """The reports asked for with --junit / --markdown / --html."""
    from conformance import report

    written = report.write_reports(doc, {"junit": args.junit, "markdown": args.markdown,
                                         "html": args.html})
    for path in written:
        print(f"report: {path}", file=sys.stderr)
    return written


def cmd_report(args: argparse.Namespace) -> int:
    if not (args.junit or args.markdown or args.html):
        print("dmlconf report: error: give at least one output: --junit PATH, "
              "--markdown PATH and/or --html PATH", file=sys.stderr)
        return 2
    _write_reports(results.read(args.results), args)
    return 0


def _report_options(q: argparse.ArgumentParser) -> None:
    q.add_argument("--junit", metavar="PATH", help="write a JUnit XML report to PATH")
    q.add_argument("--markdown", metavar="PATH",
                   help="write a Markdown summary to PATH (e.g. $GITHUB_STEP_SUMMARY)")
    q.add_argument("--html", metavar="PATH",
                   help="write a self-contained HTML report to PATH")


def cmd_list(args: argparse.Namespace) -> int:
    session = _select(args)
    problems = session.load_errors
    for case in session.cases:
        if args.verbose:
            expect = "rejected" if case.rejected else "valid"
            print(f"{case.id}\t{','.join(case.operators)}\t{case.feature_level}\t{expect}")
        else:
            print(case.id)
    print(counted(len(session.cases), "case") + (
        f"; {counted(len(problems), 'case file problem')}" if problems else ""),
        file=sys.stderr)
    return int(bool(problems))


def cmd_show(args: argparse.Namespace) -> int:
    session = _select(args, collect_errors=False)
    cases = session.cases
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
    print(f"# reproduce: {session.reproduce(case)}")
    return 0


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
        bad = generate.stale(args.out, args.counts, args.mustpass)
        if bad:
            print("generated cases differ from a fresh generation (run `dmlconf generate`):",
                  file=sys.stderr)
            for path in bad:
                print(f"  {path}", file=sys.stderr)
            return 1
        print(f"{args.out}, {args.counts} and {args.mustpass} are up to date")
        return 0
    t0 = time.perf_counter()
    count, changed = generate.write(args.out, args.counts, args.family or None, args.mustpass)
    print(f"{counted(count, 'generated case')} in {args.out} "
          f"({counted(len(changed), 'file')} changed, "
          f"{time.perf_counter() - t0:.1f} s)")
    for path in changed:
        print(f"  wrote {path}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from conformance import export

    session = _select(args)
    index = export.export_session(session, args.out)
    skipped = index["not_exportable"]
    print(f"exported {counted(len(index['cases']), 'case')} to {args.out} (index.json, "
          f"docs/vectors.md; C reader and checker: {', '.join(index['c_sources'])})"
          + (f"; {counted(len(skipped), 'case')} not exportable, listed with the reason in "
             "index.json" if skipped else ""))
    for entry in skipped[:20]:
        print(f"  not exportable: {entry['id']}: {entry['reason']}", file=sys.stderr)
    return int(bool(session.load_errors))


def cmd_certify(args: argparse.Namespace) -> int:
    """A certification run of the claimed level's mustpass list and its bundle
    (docs/certification.md)."""
    from contextlib import redirect_stderr, redirect_stdout

    from conformance import certify

    refused = [opt for opt, given in (("-k", args.k), ("--cases", args.cases),
                                      ("--shard", args.shard), ("--resume", args.resume),
                                      ("--no-isolate", args.isolate is False)) if given]
    if refused:
        print(f"dmlconf certify: error: {', '.join(refused)} refused: a certification runs "
              "the whole mustpass list of the claimed level, isolated, in one run "
              "(docs/certification.md)", file=sys.stderr)
        return 2
    request = certify.Request(
        backend=args.backend, level=FeatureLevel.parse(args.level) if args.level else None,
        execution_flags=ExecutionFlags.parse(args.execution_flags), baseline=args.baseline,
        out=Path(args.out) if args.out else None,
        statement=Path(args.statement) if args.statement else None, workers=args.workers,
        timeout_s=args.timeout, memory_cap=parse_size(args.memory_cap) if args.memory_cap
        else None, command=shlex.join(["dmlconf", *getattr(args, "argv", sys.argv[1:])]))
    log = certify.bundle.Log()
    out, err = log.tee(sys.stdout), log.tee(sys.stderr)
    found: dict[str, Any] = {}

    def summarise(doc: dict[str, Any], res: list[Result], took: str) -> None:
        found["doc"] = doc
        _print_summary(doc, res, certify.bundle.RESULTS,
                       f"{time.perf_counter() - args.started:.1f} s ({took})")

    try:
        with redirect_stdout(out), redirect_stderr(err):  # type: ignore[type-var]
            certify.certify(request, log, err, summarise)
    except certify.CertifyError as exc:
        print(f"dmlconf certify: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dmlconf certify: interrupted: no bundle written (a certification is not "
              "resumed: run it again)", file=sys.stderr)
        return 130
    verdict = found["doc"]["verdict"].get(found["doc"]["feature_level"]) or {}
    return 0 if verdict.get("conformant") is True else 1


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


def cmd_directml(args: argparse.Namespace) -> int:
    """The directml backend's own command: its DirectML-on-Linux layer's set-up and status."""
    return backend_class("directml").command(args.rest)


def cmd_explore(args: argparse.Namespace) -> int:
    from conformance import explore  # imports Hypothesis: only for this command

    return explore.command(args)


class _Version(argparse.Action):
    """--version: 'dmlconf V (suite V, case set sha256 HEX, N committed cases)', read from the
    mustpass lists' headers when asked (suite.describe: no case is loaded)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, p: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        try:
            described = suite.describe()
        except (suite.MustpassFileError, OSError) as exc:
            p.exit(2, f"dmlconf: error: {exc}\n")
        print(f"dmlconf {__version__} ({described})")
        p.exit(0)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="dmlconf", description="DirectML operator conformance suite")
    p.add_argument("--version", action=_Version,
                   help="the package's version, the suite's and its committed case set")
    sub = p.add_subparsers(dest="command", required=True)

    def selection(q: argparse.ArgumentParser) -> None:
        q.add_argument("--cases", action="append", metavar="PATH",
                       help="case file or folder (repeatable; default: the suite's committed "
                            "cases, wherever dmlconf runs)")
        q.add_argument("-k", action="append", default=[], metavar="PATTERN",
                       help="select case ids: a substring, or a glob with * ? [ (repeatable)")

    run = sub.add_parser("run", help="certify a backend on the cases")
    run.add_argument("--backend", default="numpy",
                     help="registered name, package.module:Class or path/to/file.py:Class "
                          "(default: numpy)")
    selection(run)
    run.add_argument("--tier", choices=TIERS, default="committed",
                     help="committed: the --cases given or the committed cases (default); deep: "
                          "the deep tier (50,000+ generated cases, generated into its cache on "
                          "first use, verified by hash after) with the --cases given, or alone; "
                          "all: both (docs/families.md, 'Deep tier')")
    run.add_argument("--level", help="the feature level claimed, e.g. 5_1 (default: the "
                                     "backend's highest)")
    run.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS the backend compiles with and the judge allows "
                          "for, e.g. ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS "
                          "(default: NONE; docs/tolerances.md)")
    run.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                     help=f"results file (default: {DEFAULT_JSON})")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    _report_options(run)
    run.add_argument("--baseline", metavar="PATH",
                     help="YAML file of known failures: matching FAIL/ERROR become XFAIL "
                          "(docs/baselines.md)")
    run.add_argument("--strict", action="store_true",
                     help="with --baseline: exit 1 also when a known failure passes (XPASS)")
    run.add_argument("--certify", action="store_true",
                     help="a certification run: the backend runs isolated, in worker processes "
                          "out of the judge's reach, whatever its kind (refuses --no-isolate); "
                          "the results say it was tamper-proof")
    par = run.add_argument_group("execution (docs/robustness.md)")
    par.add_argument("--workers", type=int, metavar="N",
                     help="worker processes (default: the CPUs, at most one per "
                          f"{CASES_PER_WORKER} cases); more than 1 isolates")
    par.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=None,
                     help="run the backend in worker processes, so that a crash, hang or "
                          "memory exhaustion fails one case, not the run, and the backend "
                          "cannot reach the judge (tamper-proof) (default: for native "
                          "backends, more than one worker, --certify, or a --timeout or "
                          "--cases-per-worker given)")
    par.add_argument("--timeout", type=float, metavar="S",
                     help=f"seconds a case may run in an isolated worker before it is a "
                          f"TIMEOUT (default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    par.add_argument("--memory-cap", metavar="SIZE",
                     help="memory per process for running cases, e.g. 2G: a case whose "
                          "buffers do not fit is refused before allocating; isolated workers "
                          "are capped there (Linux) (default: half the memory, shared by the "
                          "workers)")
    par.add_argument("--cases-per-worker", type=int, metavar="N",
                     help="replace each worker after N cases (1: every case in a fresh "
                          "process; slower, but no case sees what an earlier one left in the "
                          "backend's memory) (default: never)")
    par.add_argument("--retries", type=int, default=0, metavar="N",
                     help="run each failing case N more times, to tell flaky failures from "
                          "deterministic ones (the first result stands; default: 0)")
    par.add_argument("--shard", metavar="K/N",
                     help="run only the K-th of N round-robin shards of the selected cases "
                          "(join the results with dmlconf merge)")
    par.add_argument("--resume", action="store_true",
                     help="finish an interrupted run: run only the cases its journal "
                          "(JSON.journal) lacks")
    run.set_defaults(func=cmd_run)

    mrg = sub.add_parser("merge", help="join the results files of the shards of a run "
                                       "(dmlconf run --shard K/N) into one")
    mrg.add_argument("shards", nargs="+", metavar="SHARD.json",
                     help="the results file of every shard (dmlconf run --shard K/N --json ...)")
    mrg.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                     help=f"the merged results file (default: {DEFAULT_JSON})")
    _report_options(mrg)
    mrg.set_defaults(func=cmd_merge)

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
    show.add_argument("--level", help="the feature level claimed, for the reproduce command "
                                      "(default: the backend's highest)")
    show.add_argument("--execution-flags", metavar="FLAGS",
                      help="DML_EXECUTION_FLAGS, for the reproduce command (default: NONE)")
    show.set_defaults(func=cmd_show)
    vec = sub.add_parser("export", help="write the selected cases as self-contained vectors "
                                        "for harnesses without Python: DirectML descs (JSON), "
                                        "input bytes, expectations and a C checker "
                                        "(docs/vectors.md)")
    vec.add_argument("out", metavar="OUT", help="folder to write (new, empty, or a previous "
                                                "export, which is replaced)")
    selection(vec)
    vec.add_argument("--level", help="only the cases a run claiming this feature level runs, "
                                     "e.g. 5_1 (default: every selected case)")
    vec.set_defaults(func=cmd_export)

    crt = sub.add_parser("certify", help="certify a backend: run the claimed level's mustpass "
                                         "list, tamper-proof, and write a submission bundle "
                                         "(docs/certification.md)")
    crt.add_argument("--backend", required=True,
                     help="registered name, package.module:Class or path/to/file.py:Class")
    crt.add_argument("--level", help="the feature level claimed, e.g. 6_2 (default: the "
                                     "backend's highest)")
    crt.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS, as for run (default: NONE)")
    crt.add_argument("--baseline", metavar="PATH",
                     help="baseline of waivers (docs/baselines.md); copied into the bundle")
    crt.add_argument("--out", metavar="DIR",
                     help="the bundle folder, new or empty (default: "
                          "certification/<backend>-<level>-<date>); DIR.zip is written beside")
    crt.add_argument("--statement", metavar="FILE",
                     help="the filled-in statement.md to bundle (default: a template to fill)")
    cex = crt.add_argument_group("execution (docs/robustness.md; always isolated)")
    cex.add_argument("--workers", type=int, metavar="N", help="worker processes, as for run")
    cex.add_argument("--timeout", type=float, metavar="S",
                     help=f"seconds per case (default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    cex.add_argument("--memory-cap", metavar="SIZE", help="memory per process, as for run")
    for refused, kwargs in (("-k", {"action": "append"}), ("--cases", {"action": "append"}),
                            ("--shard", {}), ("--resume", {"action": "store_true"}),
                            ("--isolate", {"action": argparse.BooleanOptionalAction})):
        crt.add_argument(refused, help=argparse.SUPPRESS, **kwargs)  # refused with the reason
    crt.set_defaults(func=cmd_certify)

    ver = sub.add_parser("verify", help="check a certification bundle (folder or .zip): "
                                        "hashes, completeness, statuses, waivers, verdict; "
                                        "exit 1 with one line per problem")
    ver.add_argument("bundle", metavar="BUNDLE")
    ver.set_defaults(func=cmd_verify)

    dml = sub.add_parser("directml", add_help=False,
                         help="build or inspect the DirectML-on-Linux layer of the `directml` "
                              "backend: `dmlconf directml setup [--source PATH]`, `dmlconf "
                              "directml status` (docs/directml-linux.md)")
    dml.add_argument("rest", nargs=argparse.REMAINDER)
    dml.set_defaults(func=cmd_directml)

    gen = sub.add_parser("generate", help="write the property-generated cases (deterministic)")
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
    exp.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS the backend compiles with and the judge allows "
                          "for, e.g. ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS "
                          "(default: NONE; docs/tolerances.md)")
    exp.add_argument("--isolate", action=argparse.BooleanOptionalAction, default=None,
                     help="run the backend in a worker process: a crash or hang is a failing "
                          "example, shrunk like any other (default: for native backends)")
    exp.add_argument("--timeout", type=float, metavar="S",
                     help=f"with isolation: seconds an example may run before it is a TIMEOUT "
                          f"(default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    exp.set_defaults(func=cmd_explore)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    started = time.perf_counter()  # durations printed count from here: loading included
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == ["directml"]:  # its own parser takes every option (and --help)
        return cmd_directml(argparse.Namespace(rest=given[1:]))
    args = parser().parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command as given
    args.started = started
    try:
        return args.func(args)
    except BrokenPipeError:  # output piped into e.g. head
        sys.stderr.close()
        return 0
    except (CaseFileError, BackendLoadError, WorkerError, JournalError, ValueError,
            OSError) as exc:
        print(f"dmlconf: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dmlconf: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
