"""`dmlconf run`: run the selected cases on a backend and judge them (docs/robustness.md for the
execution options; `dmlconf certify` is the certification run).
"""

from __future__ import annotations

import argparse
import sys
import time

from conformance import __version__, results
from conformance.cli.common import (
    Terminated,
    command_line,
    print_summary,
    report_options,
    scope_option,
    select_session,
    selection,
    sigterm_as_interrupt,
    write_reports,
)
from conformance.present import Progress
from conformance.results import counted
from conformance.session import (
    CASES_PER_WORKER,
    DEFAULT_JSON,
    DEFAULT_RUN_TIMEOUT_S,
    DEFAULT_TIMEOUT_S,
)

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
    session = select_session(args, launch=True)
    execution = session.execution or session.plan()
    out = sys.stderr
    try:
        with sigterm_as_interrupt(), session:
            runner = session.start()
            assert session.journal is not None
            cases, todo, shard = session.cases, session.todo, session.shard
            sandboxed = ("sandboxed" if execution.sandbox is not None
                         else f"NOT sandboxed: {execution.sandbox_missing}")
            how = (f"{execution.workers} isolated worker(s), timeout "
                   f"{execution.timeout_s or 'none'} s, tamper-proof, {sandboxed}"
                   if execution.isolated else "in-process, NOT tamper-proof")
            of = f" (shard {args.shard} of {shard['of_cases']})" if shard else ""
            flags = "|".join(execution.execution_flags.names) or "NONE"
            claim = results.for_scope(session.options.scope)
            out.write(f"dmlconf {__version__}: {counted(len(cases), 'case')}{of}, backend "
                      f"{args.backend} "
                      f"({runner.class_name}), feature level {runner.claimed_level}{claim}, "
                      f"execution "
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
        what = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        if session.journal is None:
            print(f"dmlconf: {what} before any case ran", file=sys.stderr)
            return 130
        print(f"dmlconf: {what} after {session.kept} of {len(session.cases)} cases; their "
              f"results are kept in {session.journal.path}, and {args.json} was not touched. "
              "To finish the run, repeat the command with --resume.", file=sys.stderr)
        return 130
    if session.stopped:
        print(f"dmlconf: {session.stopped}; their results are in {args.json} and in "
              f"{session.journal.path}: repeat the command with --resume to finish the run",
              file=sys.stderr)
    doc = session.document(command_line(args))
    session.write(doc)
    write_reports(doc, args)
    wall = time.perf_counter() - args.started
    print_summary(doc, session.results, args.json,
                  f"{wall:.1f} s (loading {loaded - args.started:.1f} s, running "
                  f"{session.duration_s:.1f} s)")
    return (results.exit_status(session.results, strict=args.strict)
            or int(bool(session.load_errors or session.stopped)))


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`dmlconf run` and its arguments."""
    run = sub.add_parser(
        "run", help="run the selected cases on a backend and judge each (a certification with "
                    "its bundle is `dmlconf certify`)",
        description="Run the selected cases (default: the committed ones) on a backend, judge\n"
                    "each against the spec, print the summary and write the results (and the\n"
                    "reports asked for). A certification, the claimed level's mustpass list and\n"
                    "a submission bundle, is `dmlconf certify`.",
        epilog="examples:\n"
               "  dmlconf run -k documented/\n"
               "      the documented cases (the spec pages' examples) on the reference backend\n"
               "  dmlconf run --backend my_backend.py:MyBackend --level 5_1 --junit junit.xml\n"
               "      every committed case on your backend, claiming feature level 5_1\n"
               "  dmlconf run --backend my_backend.py:MyBackend --shard 1/4 --json shard1.json\n"
               "      the first of four shards (join them with dmlconf merge)\n\n"
               "exit status:\n"
               "  0    no decisive case FAILed, ERRORed or TIMED OUT (NOT_SUPPORTED,\n"
               "       QUALITY_WARNING and XFAIL do not fail a run)\n"
               "  1    a decisive FAIL, ERROR or TIMEOUT; an XPASS with --strict; a case file\n"
               "       problem (its cases were not run); the run stopped (--run-timeout)\n"
               "  2    bad arguments, or nothing to run: no case selected, a backend that does\n"
               "       not load, an unreadable baseline\n"
               "  130  interrupted (Ctrl-C, SIGTERM): the journal keeps what ran (--resume)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
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
    scope_option(run)
    run.add_argument("--execution-flags", metavar="FLAGS",
                     help="DML_EXECUTION_FLAGS the backend compiles with and the judge allows "
                          "for, e.g. ALLOW_HALF_PRECISION_COMPUTATION,DISABLE_META_COMMANDS "
                          "(default: NONE; docs/tolerances.md)")
    run.add_argument("--json", default=DEFAULT_JSON, metavar="PATH",
                     help=f"results file (default: {DEFAULT_JSON})")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    report_options(run)
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
                          "backends, more than one worker, --certify, --sandbox, or a --timeout or "
                          "--cases-per-worker given)")
    par.add_argument("--sandbox", action=argparse.BooleanOptionalAction, default=None,
                     help="run the backend in workers in the sandbox (bubblewrap: another "
                          "user, its own PID namespace, a read-only file system, a memory "
                          "cgroup), out of the harness's reach (default: for isolated runs, "
                          "where it can be made; --certify refuses to run without it)")
    par.add_argument("--certify-without-sandbox", action="store_true",
                     help="let --certify run where the sandbox cannot be made (recorded in the "
                          "results: the certificate then rests on process isolation alone)")
    par.add_argument("--timeout", type=float, metavar="S",
                     help=f"seconds a case may run in an isolated worker before it is a "
                          f"TIMEOUT (default: {DEFAULT_TIMEOUT_S:g}; 0: none)")
    par.add_argument("--run-timeout", type=float, metavar="S",
                     help="seconds the run may go without a case finishing before it stops, "
                          "writing the results it has and keeping its journal for --resume "
                          f"(default: {DEFAULT_RUN_TIMEOUT_S:g}; 0: never)")
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
