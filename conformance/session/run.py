"""One run of cases against a backend, the same for every face: `dmlconf run`, the pytest plugin
and `dmlconf explore` each turn their own options into RunOptions and leave the rest to a
Session; they keep only their arguments, what they print and their exit codes.

    RunOptions --> Session.select(): case files, -k patterns, a shard (session.shards)
               --> Session.plan(): in this process or isolated in workers, timeout, memory cap
               --> Session.start(): the backend built (session.workers.CaseRunner), the journal
                   opened or resumed (session.journal)
               --> Session.run(): the cases the journal lacks, retries, the baseline applied
                   or Session.run_case(case): one case at a time (the plugin, the explorer)
               --> Session.document() / Session.write(): the results document
               --> Session.reproduce(case): the command that reruns a case (session.reproduce)

A whole run is used as a context manager around start() and run(): leaving it closes the
backend's workers, and on an interruption (KeyboardInterrupt) keeps the journal for --resume,
on any other error abandons it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from time import perf_counter
from typing import Any

from conformance import results, suite
from conformance.backend import BUILTIN, backend_class
from conformance.casefile import (
    Case,
    CaseFileError,
    Indexed,
    build_indexed,
    cache,
    case_set_hash,
    index,
    require_paths,
    select_indexed,
)
from conformance.flags import ExecutionFlags
from conformance.levels import FeatureLevel
from conformance.results import FAILING, Result, Status
from conformance.results import baseline as baselines
from conformance.results.reproduce import reproduce_command
from conformance.session import expected_cache, sandbox, shards
from conformance.session import journal as journals
from conformance.session.case_run import default_memory_cap, new_result, retry_failures
from conformance.session.claims import out_of_scope
from conformance.session.watchdog import RunStalled, Watchdog
from conformance.session.workers import (
    CaseRunner,
    Execution,
    ParallelPool,
    Pool,
    available_cpus,
    new_pool,
    timeout_option,
)

DEFAULT_JSON = "reports/results.json"
#: Cases per worker below which another worker does not pay for its start (~0.5 s).
CASES_PER_WORKER = 100


def default_case_paths() -> list[Path]:
    """The suite's committed cases (suite.cases_root(): the copy an installed wheel carries, or
    the source tree's cases/), wherever the run is started: a cases/ folder in the current
    folder is run only when given with --cases (docs/mustpass.md, "Where the suite lives")."""
    root = suite.cases_root()
    if root.is_dir():
        return [root]
    raise CaseFileError(root, None, "the suite's committed cases are not there (a package "
                                    "installed without them: reinstall it from the wheel or "
                                    "the sdist); give cases with --cases")


def default_workers(cases: int) -> int:
    """The CPUs this process may use, but no more than one worker per CASES_PER_WORKER."""
    return max(1, min(available_cpus(), cases // CASES_PER_WORKER))


#: Seconds a run may go without a case finishing (--run-timeout): far beyond a case's own
#: timeout plus a worker's start (120 + 300 s by default), so that only a harness waiting on
#: something that will never come hits it.
DEFAULT_RUN_TIMEOUT_S = 1800.0


@dataclass(frozen=True)
class RunOptions:
    """What a run is asked for (the options of `dmlconf run`; the plugin and the explorer give
    the ones they have). None means the default throughout."""

    backend: str = "numpy"
    #: Case files or folders (empty: default_case_paths()).
    cases: tuple[str | Path, ...] = ()
    #: -k: case ids by substring, or by glob with * ? [.
    patterns: tuple[str, ...] = ()
    #: The feature level claimed (None: the backend's highest).
    level: FeatureLevel | None = None
    execution_flags: ExecutionFlags = ExecutionFlags.NONE
    #: A baseline file of known failures, and whether an XPASS against it fails the run.
    baseline: str | None = None
    strict: bool = False
    #: A certification: the backend isolated whatever its kind.
    certify: bool = False
    isolate: bool | None = None
    workers: int | None = None
    #: Seconds a case may run in an isolated worker, as given (None: the default; 0: none).
    timeout_s: float | None = None
    #: Bytes per process running cases (None: default_memory_cap()).
    memory_cap: int | None = None
    cases_per_worker: int | None = None
    #: Isolated workers in the sandbox (conformance.session.sandbox): None where it can be made,
    #: True required, False never; certify_without_sandbox lets --certify run where it cannot
    #: (recorded in the results; by default, whether $DMLCONF_CERTIFY_WITHOUT_SANDBOX is 1).
    sandbox: bool | None = None
    certify_without_sandbox: bool = field(default_factory=lambda: os.environ.get(
        "DMLCONF_CERTIFY_WITHOUT_SANDBOX", "").strip() == "1")
    retries: int = 0
    #: Seconds without a case finishing after which a whole run stops, keeping and writing
    #: what it has (None or 0: never).
    run_timeout_s: float | None = DEFAULT_RUN_TIMEOUT_S
    #: "K/N": the K-th of N round-robin shards of the selection.
    shard: str | None = None
    resume: bool = False
    #: The results file; its journal sits beside it.
    json: str | Path = DEFAULT_JSON
    #: A scoped claim (results.scope; None: the whole level): the cases outside it not run.
    scope: results.Scope | None = None


class _Selection(Sequence[Case]):
    """A shard's whole selection: its length known from the index, its cases built only when
    one is read (a shard runs its own cases only)."""

    def __init__(self, entries: list[Indexed], errors: list[CaseFileError] | None) -> None:
        self._entries, self._errors = entries, errors
        self._cases: list[Case] | None = None

    def _built(self) -> list[Case]:
        if self._cases is None:
            self._cases = build_indexed(self._entries, self._errors)
        return self._cases

    def __len__(self) -> int:
        return len(self._entries) if self._cases is None else len(self._cases)

    def __getitem__(self, i: Any) -> Any:
        return self._built()[i]


class Session:
    """One run (see the module). Attributes, as the steps fill them in: cases (selected, the
    shard taken), paths, load_errors, shard, case_set; execution; runner, journal, todo;
    results, applied (the baseline's effect), duration_s."""

    def __init__(self, options: RunOptions) -> None:
        if options.strict and not options.baseline:
            raise ValueError("--strict needs --baseline")
        self.options = options
        #: Read before anything runs: a malformed baseline is a usage error (BaselineError).
        self.baseline = baselines.load(options.baseline) if options.baseline else None
        self.paths: list[Path] = []
        self.selected: Sequence[Case] = []
        #: The ids of the cases loaded but not taken (a -k or --shard run): a baseline entry
        #: that covers only those is outside the selection, not stale.
        self.unselected: list[str] = []
        self.cases: list[Case] = []
        self.load_errors: list[CaseFileError] = []
        self.shard: dict[str, Any] | None = None
        self.case_set = ""
        self.execution: Execution | None = None
        self.runner: CaseRunner | None = None
        #: The worker pool select(launch=True) started, until start() hands it to the runner.
        self.pool: Pool | ParallelPool | None = None
        self.journal: journals.Journal | None = None
        self.todo: list[Case] = []
        self.recorded = 0
        self.results: list[Result] = []
        self.applied: baselines.Applied | None = None
        self.duration_s = 0.0
        #: Why the run stopped before its end (--run-timeout), "" when it did not.
        self.stopped = ""
        #: Seconds select() took: finding, reading (or the parse cache), checking, building.
        self.load_s = 0.0

    # -- selection ------------------------------------------------------------------------
    def select(self, collect_errors: bool = True, launch: bool = False) -> list[Case]:
        """Load the case paths and select by the patterns (self.selected), then take the shard
        (self.cases, returned). Only the cases a run takes are built: the selection and the
        shard are made from the case files' index (parsed and schema-checked, or read from
        the parse cache: casefile.cache), so -k and --shard pay for what they select; a
        shard's self.selected builds the rest only if it is read. collect_errors: every
        problem of a case file is kept in load_errors and loading goes past it; False: the
        first raises its CaseFileError. launch: a whole run is planned (plan()) from the
        index's count and its worker processes started before the cases are built, so that
        they import and build the backend meanwhile (close() stops them if the run does not
        start)."""
        o = self.options
        t0 = perf_counter()
        self.paths = [Path(p) for p in o.cases] if o.cases else default_case_paths()
        require_paths(self.paths)
        self.load_errors = []
        errors = self.load_errors if collect_errors else None
        # A certification believes no parse-cache entry: the backend's user can write them.
        with cache.fresh() if o.certify else nullcontext():
            indexed = index(self.paths, errors)
            chosen = select_indexed(indexed, o.patterns)
            mine, self.shard = (shards.take(chosen, *shards.parse(o.shard)) if o.shard
                                else (chosen, None))
            taken = {e.id for e in mine}
            self.unselected = [e.id for e in indexed if e.id not in taken]
            self._launch(launch, len(mine))
            self.cases = build_indexed(mine, errors)
            self.selected = _Selection(chosen, errors) if o.shard else list(self.cases)
        self.load_s = perf_counter() - t0
        return self.cases

    # -- execution ------------------------------------------------------------------------
    def _launch(self, launch: bool, count: int) -> None:
        """select(launch=True): plan for count cases and start an isolated run's processes."""
        if not (launch and count):
            return
        execution = self.plan(count=count)
        if execution.isolated:
            self.pool = new_pool(self.options.backend, self.options.level, execution,
                                 believe_caches=not self.options.certify)
            self.pool.launch()

    def plan(self, one_at_a_time: bool = False, count: int | None = None) -> Execution:
        """How the cases execute (self.execution), from the options and the backend's kind;
        ValueError for options that contradict each other. A whole run (after select()) takes
        workers for its number of cases and isolates when asked, certifying, for a native
        backend, several workers, a timeout or --cases-per-worker given. one_at_a_time (the
        plugin, the explorer: one case at a time): one worker, isolated when asked or for a
        native backend."""
        o = self.options
        if one_at_a_time:
            isolated = bool(o.sandbox) or self._native() if o.isolate is None else o.isolate
            self.execution = Execution(workers=1, isolated=isolated,
                                       timeout_s=timeout_option(o.timeout_s),
                                       memory_cap=self._memory_cap(1),
                                       execution_flags=o.execution_flags,
                                       **self._sandbox(isolated))
            return self.execution
        cases = len(self.cases) if count is None else count
        if o.workers is not None and o.workers < 1:
            raise ValueError("--workers must be 1 or more")
        if o.workers is None and o.isolate is False:
            workers = 1  # in this process
        else:
            workers = min(o.workers or default_workers(cases), max(cases, 1))
        if o.timeout_s is not None and o.timeout_s < 0:
            raise ValueError("--timeout must be 0 (none) or more seconds")
        if o.certify and o.isolate is False:
            raise ValueError("--certify refuses --no-isolate: a certification runs the backend "
                             "isolated, in worker processes, so that it cannot reach the judge "
                             "(docs/robustness.md)")
        # a timeout asked for can only be kept by a worker that can be killed
        wants_timeout = bool(o.timeout_s)
        isolated = (o.isolate if o.isolate is not None
                    else o.certify or workers > 1 or wants_timeout
                    or bool(o.cases_per_worker) or bool(o.sandbox) or self._native())
        if not isolated and workers > 1:
            raise ValueError("--no-isolate runs the cases in this process, one at a time: "
                             "it takes --workers 1")
        if not isolated and wants_timeout:
            raise ValueError("--timeout needs isolation (a case in this process cannot be "
                             "stopped): drop --no-isolate")
        cap = self._memory_cap(workers if isolated else 1)
        if o.retries < 0:
            raise ValueError("--retries must be 0 or more")
        if o.cases_per_worker is not None and o.cases_per_worker < 1:
            raise ValueError("--cases-per-worker must be 1 or more")
        if not isolated and o.cases_per_worker:
            raise ValueError("--cases-per-worker needs isolation: drop --no-isolate")
        self.execution = Execution(workers=workers, isolated=isolated,
                                   timeout_s=timeout_option(o.timeout_s), memory_cap=cap,
                                   cases_per_worker=o.cases_per_worker,
                                   execution_flags=o.execution_flags, **self._sandbox(isolated))
        if o.certify and o.resume and self.execution.sandbox is None:
            raise ValueError("--certify --resume reads the journal, which without the sandbox "
                             "the backend's user could have written: a certification without "
                             "the sandbox runs whole (docs/robustness.md)")
        return self.execution

    def _sandbox(self, isolated: bool) -> dict[str, Any]:
        """The Execution's sandbox fields: the sandbox where it is wanted and can be made, else
        why there is none; ValueError where --sandbox or --certify needs one that cannot be
        made (unless certify_without_sandbox)."""
        o = self.options
        if o.sandbox and not isolated:
            raise ValueError("--sandbox needs isolation (a backend in this process cannot be "
                             "sandboxed): drop --no-isolate")
        if not isolated:
            return {}
        return sandbox.for_run(o.backend, o.sandbox, o.certify, o.certify_without_sandbox)

    def _native(self) -> bool:
        """Whether the backend is run as native code (isolated by default). Asked only where
        the answer decides: never for --certify or an explicit --isolate. A built-in backend
        (backend.BUILTIN, the suite's own modules) is imported here to read its `native` flag;
        any other (an entry point, a module or a file) is not imported in the harness at all
        and counts as native: its module's import-time code could otherwise patch the judge of
        a run then labelled tamper-proof."""
        if self.options.backend not in BUILTIN:
            return True
        return backend_class(self.options.backend).native

    def _memory_cap(self, processes: int) -> int:
        o = self.options
        return o.memory_cap if o.memory_cap is not None else default_memory_cap(processes)

    def start(self, one_at_a_time: bool = False) -> CaseRunner:
        """Build the backend as planned (by plan(), else plan(one_at_a_time)) and, for a whole
        run, open its journal, resuming it with --resume: todo is what the journal lacks. The
        journal is opened once the backend is built, so that a run that cannot start leaves an
        old journal alone. one_at_a_time (the plugin, the explorer): no journal; run_case()."""
        o = self.options
        started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        if self.execution is None:
            self.plan(one_at_a_time)
        assert self.execution is not None
        pool, self.pool = self.pool, None
        self.runner = CaseRunner(o.backend, o.level, self.execution, pool,
                                 believe_caches=not o.certify)
        if not one_at_a_time:
            self.case_set = case_set_hash(self.cases)
            self.journal = journals.Journal(journals.path_for(o.json), {
                "backend": o.backend, "feature_level": str(o.level or "highest"),
                "execution_flags": self.execution.execution_flags.names,
                "case_set_sha256": self.case_set, "shard": self.shard,
                "isolated": self.execution.isolated, "certify": o.certify,
                "sandboxed": self.execution.sandbox is not None,
                "scope": o.scope.to_json() if o.scope else None,
                "started_at": started_at}, resume=o.resume)
            self.todo = [c for c in self.cases if c.id not in self.journal.done]
        return self.runner

    def __enter__(self) -> Session:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        """The backend's workers are closed; an interrupted run keeps its journal (--resume),
        a failed one abandons it."""
        self.close()
        if self.journal is not None and exc_type is not None:
            if issubclass(exc_type, KeyboardInterrupt):
                self.journal.close()
            else:
                self.journal.abandon()

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()
        if self.pool is not None:  # launched by select(), the run never started
            self.pool.close()
            self.pool = None

    @property
    def kept(self) -> int:
        """The cases whose results the journal holds: resumed and recorded by this run."""
        return (len(self.journal.done) if self.journal else 0) + self.recorded

    # -- running --------------------------------------------------------------------------
    def run(self, on_result: Callable[[Result], None] | None = None,
            on_retry: Callable[[int], None] | None = None) -> list[Result]:
        """Run the cases the journal lacks (each result journaled, then given to on_result;
        those a scoped claim does not cover recorded NOT_SUPPORTED, not run), run the failing
        ones again (--retries; on_retry gets their count first), and return every selected
        case's result in the cases' order (the resumed ones included), baseline applied."""
        assert self.runner is not None and self.journal is not None, "start() first"
        journal, runner = self.journal, self.runner
        t0 = perf_counter()
        finished: list[Result] = []
        watchdog = Watchdog(self.options.run_timeout_s)

        def record(result: Result) -> None:
            journal.add(result)
            finished.append(result)
            watchdog.progress()
            self.recorded += 1
            if on_result:
                on_result(result)

        # A certification believes no expectations-cache entry: its user can write them.
        try:
            with watchdog, cache.fresh() if self.options.certify else nullcontext():
                scope = self.options.scope  # its uncovered cases recorded, not run
                outside = [new_result(c, Status.NOT_SUPPORTED, why) for c in self.todo
                           if (why := out_of_scope(c, scope))]
                for r in outside:
                    record(r)
                new = outside + runner.run_all(
                    [c for c in self.todo if not out_of_scope(c, scope)], record)
                if self.options.retries:
                    failing = sum(r.status in FAILING for r in new)
                    if failing and on_retry:
                        on_retry(failing)
                    new = retry_failures(new, self.todo, runner.run_all, self.options.retries)
        except RunStalled as stalled:
            runner.close()  # the workers and judges, whatever they were doing
            self.stopped = f"{stalled}: stopped after {len(journal.done) + len(finished)} of " \
                           f"{len(self.cases)} cases"
            new = finished
        self.duration_s = perf_counter() - t0  # not the workers' exit
        by_id = {**journal.done, **{r.id: r for r in new}}
        found = [by_id[c.id] for c in self.cases if c.id in by_id]
        self.applied = (baselines.apply(self.baseline, found, tags=self.tags(),
                                        unselected=self.unselected)
                        if self.baseline else None)
        self.results = self.applied.results if self.applied else found
        return self.results

    def run_case(self, case: Case) -> Result:
        """One case's result (the plugin's items, the explorer's examples), baseline applied."""
        assert self.runner is not None, "start() first"
        why = out_of_scope(case, self.options.scope)
        result = new_result(case, Status.NOT_SUPPORTED, why) if why else self.runner.run(case)
        if self.baseline is not None:
            result = baselines.apply(self.baseline, [result], tags=self.tags()).results[0]
        return result

    def tags(self) -> dict[str, str]:
        """The run's tags that a baseline entry's `when:` is matched against
        (results.baseline.run_tags): the OS, the backend as given, the execution flags, and
        what the backend reports of its environment (Backend.environment: vendor, adapter,
        driver, directml_version), as the runner carries it (after start())."""
        assert self.runner is not None and self.execution is not None, "start() first"
        environment = (getattr(self.runner, "environment", None)
                       or getattr(self.runner.backend, "environment", None) or {})
        return baselines.run_tags(self.options.backend, self.execution.execution_flags.names,
                                  environment)

    # -- the results ----------------------------------------------------------------------
    def document(self, command: str) -> results.ResultsDocument:
        """The results document of the run (after run()). command: the command line as
        given."""
        assert self.runner is not None and self.journal is not None and self.execution
        o, runner, execution = self.options, self.runner, self.execution
        # the cases whose results came from the journal of the interrupted run, in case order
        resumed = [c.id for c in self.cases if c.id in self.journal.done]
        return results.document(
            self.results,
            backend={"name": o.backend, "declared_name": runner.name,
                     "class": runner.class_path,
                     "capabilities": runner.capabilities, "environment": runner.environment},
            case_set_sha256=self.case_set, claimed=runner.claimed_level,
            started_at=self.journal.run["started_at"],
            finished_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            duration_s=self.duration_s, command=command,
            case_paths=[str(p) for p in self.paths],
            baseline=self.applied.summary(o.baseline) if self.applied and o.baseline else None,
            load_errors=[results.LoadError(file=e.path, line=e.line, message=e.message)
                         for e in self.load_errors],
            execution=results.Execution.from_json(
                {**execution.to_json(), "certify": o.certify,
                 "expectations_cache": self._expectations_cache(),
                 "resumed_cases": len(resumed), "resumed": resumed, "retries": o.retries,
                 **({"stopped": self.stopped} if self.stopped else {}), **self._timings()}),
            shard=None if self.shard is None else results.Shard.from_json(self.shard),
            execution_flags=execution.execution_flags.names, scope=o.scope)

    def _expectations_cache(self) -> str | None:
        """The folder of the expectations cache whose entries this run's judge believed where
        it held one (session.expected_cache: written by whoever can write the folder, the
        backend's user included; never checked, only a recomputation could), or None where it
        believed none: a certification (cache.fresh()) or the cache turned off. Whichever
        process judges (the harness, a judge process of a parallel run) reads the same folder:
        they share the environment that names it."""
        if self.options.certify:
            return None
        where = expected_cache.folder()
        return None if where is None else str(where)

    def _timings(self) -> dict[str, float]:
        """With DMLCONF_TIMINGS set (benchmarks/bench_harness.py): the seconds select() took,
        for the execution record; nothing otherwise (a results document is not noisier)."""
        return {"load_s": round(self.load_s, 3)} if os.environ.get("DMLCONF_TIMINGS") else {}

    def write(self, doc: results.ResultsDocument) -> None:
        """Write the results file (atomically), then remove the journal: the run is whole
        (a stopped run keeps it, for --resume)."""
        assert self.journal is not None
        results.write(doc, self.options.json)
        if not self.stopped:
            self.journal.finish()

    def reproduce(self, case: Case) -> str:
        """The command that reruns the case alone with this run's backend, level and execution
        flags (session.reproduce)."""
        o = self.options
        return reproduce_command(
            case.id, [case.file] if case.file else self.paths, o.backend, level=o.level,
            execution_flags=o.execution_flags.names, case_level=case.feature_level,
            case_level_below=case.feature_level_below)
